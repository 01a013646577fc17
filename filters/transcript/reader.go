// Package transcript is the shared machinery every bs filter stands on: a
// line reader that keeps every byte, a JSON tree with byte spans, the
// dialects (one file each, dialect_*.go, listed in registry.go: the
// Dialect interface answers everything the filters ask of a runtime's
// format, and builds the lines they write in the runtime's own shape), an
// entry view over one line, and a splicer that rewrites values at their
// byte offsets and leaves every other byte alone.
package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/bstools/bs/internal/hugemem"
	"github.com/bstools/bs/internal/spool"
)

// Line is one line of a transcript exactly as it stood in the input.
type Line struct {
	Num     int    // 1-based line number
	Body    []byte // the bytes before the line feed; owned by the Line
	Newline bool   // whether the line ended with '\n' (a last line may not)
}

// appendTo appends the line as it must be written back: its body plus the line
// feed it had.
func (l Line) appendTo(dst []byte) []byte {
	// Grow once: appending the body and then the newline would reallocate
	// (and clear) a body-sized buffer a second time for most lines.
	dst = slices.Grow(dst, l.Len())
	dst = append(dst, l.Body...)
	if l.Newline {
		dst = append(dst, '\n')
	}
	return dst
}

// Bytes returns the line as it stood in the input, its line feed
// included. When the line feed already follows Body in memory, as it does
// for every line Next returns, Bytes shares Body's memory instead of
// copying it; the caller must not modify the result.
func (l Line) Bytes() []byte {
	if !l.Newline {
		return l.Body
	}
	if n := len(l.Body); cap(l.Body) > n && l.Body[:n+1][n] == '\n' {
		return l.Body[:n+1]
	}
	return l.appendTo(nil)
}

// Len is the number of bytes the line occupied in the input.
func (l Line) Len() int {
	if l.Newline {
		return len(l.Body) + 1
	}
	return len(l.Body)
}

// Reader reads lines of any length. Unlike bufio.Scanner it has no line
// length limit, and unlike bufio.Reader.ReadBytes it tells a missing final
// line feed apart from a present one.
type Reader struct {
	r    *bufio.Reader
	num  int
	long []byte // reused by NextView for lines longer than the buffer, up to maxKeptLong
	own  bool   // the line NextView last returned is in memory of its own (owned)

	// at, when the input can be read again at an offset (a regular file,
	// a section of one), is where a huge line is read from once its end
	// is known, into memory of its size: no copy of it waits in pieces.
	// off is the offset in at of the next byte the reader hands out.
	at  io.ReaderAt
	off int64
}

// maxKeptLong is the longest line whose memory the Reader reuses. A longer
// one is read into memory of its exact size, which the Reader lets go of:
// a 100 MiB line is not held for the rest of the run, nor read into a
// buffer that doubled its way up to twice its size.
const maxKeptLong = 1 << 20

// longParts gathers a line longer than maxKeptLong from an input that
// cannot be read again (a pipe): in memory up to spillParts bytes, then in
// an unlinked temp file, so that once the line lands in memory of its size
// no second copy of it waits in pieces (a 100 MiB line from a pipe cost
// 200 MiB, for each reader of it: bs stats has five).
type longParts struct {
	mem [][]byte
	n   int
	f   *os.File // the parts so far, once past spillParts; mem is empty then
	// noFile: the temp file could not be made; the pieces stay in memory.
	noFile bool
}

// spillParts is how much of a long line from a pipe waits in memory; a
// variable so that tests can send short lines to the temp file.
var spillParts = 16 << 20

// add appends a piece of the line (copied: the caller reuses b). Should
// the temp file not be made, the pieces stay in memory, as they would
// without it.
func (p *longParts) add(b []byte) error {
	if p.f == nil && !p.noFile && p.n+len(b) > spillParts {
		if f, err := spool.Temp("bs-line-*"); err != nil {
			p.noFile = true // not tried again for every piece
		} else {
			p.f = f
			for _, m := range p.mem {
				if _, err := f.Write(m); err != nil {
					return p.fail(err)
				}
			}
			p.mem = nil
		}
	}
	if p.f != nil {
		if _, err := p.f.Write(b); err != nil {
			return p.fail(err)
		}
	} else {
		p.mem = append(p.mem, bytes.Clone(b))
	}
	p.n += len(b)
	return nil
}

func (p *longParts) fail(err error) error {
	p.f.Close()
	return fmt.Errorf("keeping a line of more than %d bytes in a temporary file: %w", p.n, err)
}

// line returns the whole line, last appended, in memory of its size.
func (p *longParts) line(last []byte) ([]byte, error) {
	line := hugemem.Make(p.n+len(last), p.n+len(last))
	if p.f != nil {
		defer p.f.Close()
		if n, err := p.f.ReadAt(line[:p.n], 0); n < p.n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, fmt.Errorf("reading a line of %d bytes back from a temporary file: %w", len(line), err)
		}
	} else {
		at := 0
		for _, m := range p.mem {
			at += copy(line[at:], m)
		}
	}
	copy(line[p.n:], last)
	return line, nil
}

// LinesBefore counts the lines of r before offset (its line feeds), for a
// reading that starts there to number its lines as one from the start
// would. It reads without parsing: at memory speed.
func LinesBefore(r io.ReaderAt, offset int64) int {
	buf := make([]byte, 256<<10)
	n := 0
	for off := int64(0); off < offset; {
		chunk := buf[:min(int64(len(buf)), offset-off)]
		k, err := r.ReadAt(chunk, off)
		n += bytes.Count(chunk[:k], []byte{'\n'})
		if err != nil {
			break
		}
		off += int64(k)
	}
	return n
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{r: bufio.NewReaderSize(r, 256<<10)}
	if at, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	}); ok && rereadable(r) {
		if off, err := at.Seek(0, io.SeekCurrent); err == nil {
			rd.at, rd.off = at, off
		}
	}
	return rd
}

// rereadable reports whether what r has given can be read again as it
// was: not a pipe, a terminal or a device, which a file can be.
func rereadable(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return true
	}
	info, err := f.Stat()
	return err == nil && info.Mode().IsRegular()
}

// readSlice is bufio's ReadSlice, counting the offset.
func (r *Reader) readSlice() ([]byte, error) {
	chunk, err := r.r.ReadSlice('\n')
	r.off += int64(len(chunk))
	return chunk, err
}

// lineBuffered reports whether a whole next line has already been read
// ahead: when it has not, the next call may wait for input (on a live
// pipe, for as long as the writer takes to finish the line).
func (r *Reader) lineBuffered() bool {
	n := r.r.Buffered()
	if n == 0 {
		return false
	}
	ahead, _ := r.r.Peek(n)
	return bytes.IndexByte(ahead, '\n') >= 0
}

// next returns the next line, or io.EOF when the input is exhausted. The
// line's Body is its own, and its line feed follows it in the same
// allocation, so that [Line.Bytes] need not copy the line again.
func (r *Reader) next() (Line, error) {
	l, err := r.NextView()
	switch {
	case r.own:
		// Already its own, line feed included.
	case l.Newline:
		l.Body = bytes.Clone(l.Body[:len(l.Body)+1])[:len(l.Body)]
	default:
		l.Body = bytes.Clone(l.Body)
	}
	return l, err
}

// owned reports whether the line NextView last returned is in memory the
// Reader will not use again (a line longer than maxKeptLong): its caller
// may keep the Body without copying it. Its line feed, if it has one,
// follows it in the same allocation, as Next gives it.
func (r *Reader) owned() bool { return r.own }

// NextView is Next without the copy: the returned Body is only valid until
// the next call (unless owned). Filters that look at most lines once and
// keep few of them (gauge) use it to spare the garbage collector.
func (r *Reader) NextView() (Line, error) {
	r.own = false
	chunk, err := r.readSlice()
	if err == nil {
		r.num++
		return Line{Num: r.num, Body: chunk[:len(chunk)-1], Newline: true}, nil
	}
	if cap(r.long) > maxKeptLong {
		r.long = nil
	}
	r.long = r.long[:0]
	// Up to maxKeptLong the line grows in the reused buffer. Past it, the
	// line is read again from the input once its end is known, or where
	// that cannot be, its pieces wait in a list; either way it lands in
	// memory of its exact size.
	start := r.off - int64(len(chunk))
	var parts *longParts
	reread := false
	total := 0
	for errors.Is(err, bufio.ErrBufferFull) {
		switch {
		case reread:
		case parts != nil:
			if perr := parts.add(chunk); perr != nil {
				return Line{}, perr
			}
		case len(r.long)+len(chunk) > maxKeptLong && r.at != nil:
			reread = true
		case len(r.long)+len(chunk) > maxKeptLong:
			parts = &longParts{mem: [][]byte{r.long}, n: len(r.long)}
			r.long = nil
			if perr := parts.add(chunk); perr != nil {
				return Line{}, perr
			}
		default:
			r.long = append(r.long, chunk...)
		}
		total += len(chunk)
		chunk, err = r.readSlice()
	}
	switch {
	case reread:
		line := hugemem.Make(total+len(chunk), total+len(chunk))
		if n, rerr := r.at.ReadAt(line, start); n < len(line) {
			if rerr == nil || rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF
			}
			return Line{}, fmt.Errorf("reading a line of %d bytes again at offset %d: %w", len(line), start, rerr)
		}
		r.own = true
		r.long = line
	case parts != nil:
		line, perr := parts.line(chunk)
		if perr != nil {
			return Line{}, perr
		}
		r.own = true
		r.long = line
	default:
		r.long = append(r.long, chunk...)
		// Grown past what is kept: the next call would let go of it.
		r.own = cap(r.long) > maxKeptLong
	}
	line := r.long
	if r.own {
		r.long = nil
	}
	if err != nil && err != io.EOF {
		return Line{}, err
	}
	if err == io.EOF {
		if len(line) == 0 {
			return Line{}, io.EOF
		}
		r.num++
		return Line{Num: r.num, Body: line}, nil
	}
	r.num++
	return Line{Num: r.num, Body: line[:len(line)-1], Newline: true}, nil
}
