// Package transcript is the shared machinery every bs filter stands on: a
// line reader that keeps every byte, a JSON tree with byte spans, dialect
// detection, an entry view over one line, and a splicer that rewrites values
// at their byte offsets and leaves every other byte alone.
package transcript

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"slices"
)

// Line is one line of a transcript exactly as it stood in the input.
type Line struct {
	Num     int    // 1-based line number
	Body    []byte // the bytes before the line feed; owned by the Line
	Newline bool   // whether the line ended with '\n' (a last line may not)
}

// AppendTo appends the line as it must be written back: its body plus the line
// feed it had.
func (l Line) AppendTo(dst []byte) []byte {
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
	return l.AppendTo(nil)
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
	long []byte // reused by NextView for lines longer than the buffer
}

// NewReader returns a Reader over r.
func NewReader(r io.Reader) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 256<<10)}
}

// LineBuffered reports whether a whole next line has already been read
// ahead: when it has not, the next call may wait for input (on a live
// pipe, for as long as the writer takes to finish the line).
func (r *Reader) LineBuffered() bool {
	n := r.r.Buffered()
	if n == 0 {
		return false
	}
	ahead, _ := r.r.Peek(n)
	return bytes.IndexByte(ahead, '\n') >= 0
}

// Next returns the next line, or io.EOF when the input is exhausted. The
// line's Body is its own, and its line feed follows it in the same
// allocation, so that [Line.Bytes] need not copy the line again.
func (r *Reader) Next() (Line, error) {
	l, err := r.NextView()
	if l.Newline {
		l.Body = bytes.Clone(l.Body[:len(l.Body)+1])[:len(l.Body)]
	} else {
		l.Body = bytes.Clone(l.Body)
	}
	return l, err
}

// NextView is Next without the copy: the returned Body is only valid until
// the next call. Filters that look at most lines once and keep few of them
// (gauge) use it to spare the garbage collector.
func (r *Reader) NextView() (Line, error) {
	chunk, err := r.r.ReadSlice('\n')
	if err == nil {
		r.num++
		return Line{Num: r.num, Body: chunk[:len(chunk)-1], Newline: true}, nil
	}
	r.long = r.long[:0]
	for errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long, chunk...)
		chunk, err = r.r.ReadSlice('\n')
	}
	r.long = append(r.long, chunk...)
	if err != nil && err != io.EOF {
		return Line{}, err
	}
	if err == io.EOF {
		if len(r.long) == 0 {
			return Line{}, io.EOF
		}
		r.num++
		return Line{Num: r.num, Body: r.long}, nil
	}
	r.num++
	return Line{Num: r.num, Body: r.long[:len(r.long)-1], Newline: true}, nil
}
