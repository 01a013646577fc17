// Package spool gives a filter that reads its input more than once (trim,
// roll, archive) random access to it without holding its bodies in
// memory: the input file itself when it is a regular file read from its
// start, else an unlinked temp file the input is copied to.
package spool

import (
	"io"
	"os"
)

// Spool is random access to a filter's input.
type Spool struct {
	f    *os.File
	size int64
	temp bool // f is ours to close: an unlinked temp file
}

// Open returns a spool holding all of r. A temp file's name starts with
// pattern as os.CreateTemp takes it; the file is unlinked at once, so it
// goes with the process whatever happens.
func Open(r io.Reader, pattern string) (*Spool, error) {
	if f, size, ok := Regular(r); ok {
		return &Spool{f: f, size: size}, nil
	}
	f, err := Temp(pattern)
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, r)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &Spool{f: f, size: n, temp: true}, nil
}

// Tee returns a spool that holds what has been read of r so far, and the
// reader to read r through: for a filter that makes its decisions in one
// pass and goes back only to what it has read. Its Size is not known, so
// a tee spool is read with ReadAt and Section.
func Tee(r io.Reader, pattern string) (*Spool, io.Reader, error) {
	if f, size, ok := Regular(r); ok {
		return &Spool{f: f, size: size}, f, nil
	}
	f, err := Temp(pattern)
	if err != nil {
		return nil, nil, err
	}
	return &Spool{f: f, size: -1, temp: true}, io.TeeReader(r, f), nil
}

// Regular reports whether r is a regular file read from its start, which
// can be read again at any offset as it is (and a filter may seek in),
// with the file and its size.
func Regular(r io.Reader) (*os.File, int64, bool) {
	f, ok := r.(*os.File)
	if !ok {
		return nil, 0, false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return nil, 0, false
	}
	if off, err := f.Seek(0, io.SeekCurrent); err != nil || off != 0 {
		return nil, 0, false
	}
	return f, info.Size(), true
}

// Temp makes a temporary file, named by pattern as os.CreateTemp names
// one, and unlinks it at once: nothing of it outlives the process.
func Temp(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	os.Remove(f.Name()) // gone with the process, whatever happens
	return f, nil
}

// Size is the input's length in bytes (-1 for a tee spool).
func (s *Spool) Size() int64 { return s.size }

// File is the file the spool reads, for code that needs an *os.File (it
// stays the spool's: do not close it).
func (s *Spool) File() *os.File { return s.f }

// ReadAt reads len(p) bytes of the input from off.
func (s *Spool) ReadAt(p []byte, off int64) (int, error) { return s.f.ReadAt(p, off) }

// Section is n bytes of the input from off.
func (s *Spool) Section(off, n int64) *io.SectionReader { return io.NewSectionReader(s.f, off, n) }

// CopyTo copies the whole input to w: the way a filter passes on an input
// it leaves alone.
func (s *Spool) CopyTo(w io.Writer) error {
	_, err := io.Copy(w, s.Section(0, s.size))
	return err
}

// Close closes a temp file; the caller's own file stays open.
func (s *Spool) Close() error {
	if s.temp {
		return s.f.Close()
	}
	return nil
}

// Ahead reads a spool's bytes in order through a buffer of its own, for a
// filter that passes its input on with a line edited here and there: the
// range up to each such line and the line itself were a read call each
// (archive made 36,000 on the 256 MiB bench session). It never reads
// past the limit its caller gives, which a tee spool is written up to.
type Ahead struct {
	r   io.ReaderAt
	buf []byte // the bytes [off, off+len(buf)) of r
	off int64
}

// aheadSize is how much an Ahead reads at once, and the most it keeps: a
// longer read is served once and let go, as a huge line must be.
const aheadSize = 256 << 10

// NewAhead reads r in order.
func NewAhead(r io.ReaderAt) *Ahead { return &Ahead{r: r} }

// Bytes returns the n bytes of r from off, reading on as far as limit
// while it is at it. The bytes are valid until the next call.
func (a *Ahead) Bytes(off int64, n int, limit int64) ([]byte, error) {
	if off >= a.off && off+int64(n) <= a.off+int64(len(a.buf)) {
		return a.buf[off-a.off:][:n], nil
	}
	var buf []byte
	if n > aheadSize {
		buf = make([]byte, n) // not kept: the collector takes it once the caller is done
	} else {
		size := int(min(max(limit-off, int64(n)), aheadSize))
		if cap(a.buf) < size {
			a.buf = make([]byte, aheadSize)
		}
		a.buf, a.off = a.buf[:0], off // empty until the read succeeds
		buf = a.buf[:size]
	}
	// A ReaderAt that reads less than asked says why; the input cut
	// short under a filter that has read it is an error, not output cut
	// short.
	if m, err := a.r.ReadAt(buf, off); m < n {
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	} else if n <= aheadSize {
		a.buf = buf[:m]
	}
	return buf[:n], nil
}

// CopyTo writes the n bytes of r from off to w (Bytes).
func (a *Ahead) CopyTo(w io.Writer, off, n, limit int64) error {
	for n > 0 {
		k := min(n, aheadSize)
		b, err := a.Bytes(off, int(k), limit)
		if err != nil {
			return err
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		off, n = off+k, n-k
	}
	return nil
}
