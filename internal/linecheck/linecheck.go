// Package linecheck counts what a transcript input held: its lines that
// hold more than white space, its head (to tell its dialect), and its lines
// that are not valid JSON, of which it says which to warn about (the
// first few of each file).
package linecheck

import (
	"bytes"
	"io"
	"os"
	"sync"

	"github.com/bstools/bs/filters/transcript"
)

// sniffBytes is how much of a transcript's head a counter keeps, to tell
// its dialect.
const sniffBytes = 1 << 20

// countFile counts the lines of f that hold more than white space.
func countFile(f *os.File) int {
	lc := &counter{r: io.NewSectionReader(f, 0, 1<<62)}
	io.Copy(io.Discard, lc)
	return lc.total()
}

// counter counts the lines read through it that hold more than white
// space, as the transcript reader does (a blank line is no entry, nor a
// bad one).
type counter struct {
	r       io.Reader
	lines   int
	content bool   // the line being read has more than white space
	sniff   bool   // keep the head
	head    []byte // the first sniffBytes
}

// newCounter counts the lines of r; with sniff it keeps their first
// sniffBytes (head).
func newCounter(r io.Reader, sniff bool) *counter { return &counter{r: r, sniff: sniff} }

func (c *counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	b := p[:n]
	if c.sniff && len(c.head) < sniffBytes {
		c.head = append(c.head, b[:min(len(b), sniffBytes-len(c.head))]...)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i]
		}
		if !c.content {
			for _, ch := range seg {
				if !transcript.IsSpace(ch) {
					c.content = true
					break
				}
			}
		}
		if i < 0 {
			break
		}
		if c.content {
			c.lines++
		}
		c.content = false
		b = b[i+1:]
	}
	return n, err
}

// total is the count, with an unfinished last line.
func (c *counter) total() int {
	if c.content {
		return c.lines + 1
	}
	return c.lines
}

// maxWarnings is how many lines that are not valid JSON are named one by
// one in each file; the rest are counted in one last warning.
const maxWarnings = 5

// BadLines counts, per input, the lines that are not valid JSON, and says
// which of them to warn about. The zero value is ready.
type BadLines struct {
	mu    sync.Mutex
	files map[string]*File
}

// File is one input's count.
type File struct {
	bad, warned int
	last        int // the last bad line counted: a filter that reads twice reports a line twice
}

// start counts the bad lines of the input name, until end.
func (b *BadLines) start(name string) *File {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.files == nil {
		b.files = map[string]*File{}
	}
	fb := &File{}
	b.files[name] = fb
	return fb
}

// end says how many bad lines the input had, and how many were warned
// about.
func (b *BadLines) end(fb *File) (bad, warned int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for name, f := range b.files {
		if f == fb {
			delete(b.files, name)
		}
	}
	return fb.bad, fb.warned
}

// Warn counts e's line and says whether to show it.
func (b *BadLines) Warn(e *transcript.BadLineError) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	fb := b.files[e.Name]
	if fb == nil {
		return true // an input read outside start and end
	}
	if e.Line <= fb.last {
		return false
	}
	fb.last = e.Line
	fb.bad++
	if fb.warned >= maxWarnings {
		return false
	}
	fb.warned++
	return true
}
