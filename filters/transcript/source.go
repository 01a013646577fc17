package transcript

import (
	"bytes"
	"fmt"
	"io"

	"github.com/bstools/bs/internal/hugemem"
)

// BadLineError is a line that is not one valid JSON value. Filters pass such
// lines through untouched and warn; under --strict it stops the run.
type BadLineError struct {
	Name string // the input's name, "-" for standard input
	Line int
	Err  error
}

func (e *BadLineError) Error() string {
	return fmt.Sprintf("%s:%d: not a valid JSON entry: %v", e.Name, e.Line, e.Err)
}

func (e *BadLineError) Unwrap() error { return e.Err }

// Source reads a transcript line by line, detects its dialect from the
// first lines and parses each line. It is the front end every filter shares.
type Source struct {
	Name string // for messages, "-" for standard input

	r       *Reader
	p       Parser
	dialect Dialect
	held    []Line // lines read while detecting the dialect
	onBad   func(*BadLineError) error
	workers int       // parsers of a Parallel Source
	pipe    *pipeline // once started
	keeps   bool      // see KeepLines

	annotate func(*Tree, Dialect) any // see Annotate
	note     any                      // what annotate made of the line last returned
	parseIf  func([]byte) bool        // see ParseIf
	skipped  bool                     // the line last returned was not parsed (ParseIf)
}

// Annotate makes fn run on the tree of every line parsed from the next
// call of Next on, and Annotation return what it made of the line Next
// last returned. A Parallel Source runs fn in its parsing workers: it is
// for work on a line that needs nothing but the line (estimating its
// tokens), which would otherwise hold up the one goroutine that takes the
// lines in order. So fn must be safe to call on several goroutines at
// once, and keep nothing of the tree. Call it before the first Next.
func (s *Source) Annotate(fn func(*Tree, Dialect) any) { s.annotate = fn }

// Annotation is what Annotate's function made of the line Next last
// returned: nil for a blank or bad line, or without Annotate.
func (s *Source) Annotation() any { return s.note }

// ParseIf makes Next parse only the lines fn accepts, blank ones included:
// the others come back with a nil tree, unparsed, and onBad is not told
// about them; Skipped tells such a line from a blank or bad one. It is for
// a filter that can tell from a line's bytes that it has no use for its
// tree (the gauge, which counts only the lines after the last usage). A
// Parallel Source runs fn in its parsing workers, so it must be safe to
// call on several goroutines at once, and keep nothing of the line. Call it
// before the first Next.
func (s *Source) ParseIf(fn func(line []byte) bool) { s.parseIf = fn }

// Skipped reports whether the line Next last returned was left unparsed
// because ParseIf's function did not accept it.
func (s *Source) Skipped() bool { return s.skipped }

// KeepLines tells a Parallel Source that its caller keeps the lines Next
// returns (a line waiting for later ones to decide its fate): its reader
// then reads each line into memory of its own, as Reader.next does, and
// Next hands it out as it is. Otherwise the reader copies lines into a
// batch's reused memory, which costs less, and Next copies each line out
// again on the caller's goroutine, which takes the lines in order and so
// is the one to spare. It changes nothing without Parallel. Call it
// before the first Next.
func (s *Source) KeepLines() { s.keeps = true }

// NewSource returns a Source over r. A nil dialect means detect it.
// onBad is called for each line that is not valid JSON; a non-nil error
// from it stops the run (that is how --strict works).
func NewSource(name string, r io.Reader, d Dialect, onBad func(*BadLineError) error) *Source {
	return &Source{Name: name, r: NewReader(r), dialect: d, onBad: onBad}
}

// NumberFrom makes n the number of the first line read, for a Source over
// the rest of a file whose first n-1 lines came before it. Call it before
// the first call to Next.
func (s *Source) NumberFrom(n int) { s.r.num = n - 1 }

// Dialect returns the detected or forced dialect (nil before the first
// call to Next).
func (s *Source) Dialect() Dialect { return s.dialect }

// Next returns the next line and its tree. The tree is nil for a blank line
// or an invalid one (after onBad has been told), and is valid only until
// the next call. At the end of input it returns io.EOF.
func (s *Source) Next() (Line, *Tree, error) { return s.next(false) }

// NextView is Next without the copy: the line's body, like its tree, is
// valid only until the next call. For filters that look at each line once
// and keep nothing of it.
func (s *Source) NextView() (Line, *Tree, error) { return s.next(true) }

func (s *Source) next(view bool) (Line, *Tree, error) {
	s.note, s.skipped = nil, false
	if s.dialect == nil {
		if err := s.detect(); err != nil {
			return Line{}, nil, err
		}
	}
	if len(s.p.tree.Src) >= hugemem.Huge {
		// The parser would keep the last line alive while the reader
		// waits for it to go before it reads a huge one (hugemem.Make).
		s.p.Forget()
	}
	var line Line
	if len(s.held) > 0 {
		line = s.held[0]
		s.held[0] = Line{}
		s.held = s.held[1:]
	} else if s.workers > 1 {
		if s.pipe == nil {
			s.startPipeline()
		}
		return s.nextParsed(view)
	} else {
		var err error
		if view {
			line, err = s.r.NextView()
		} else {
			line, err = s.r.next()
		}
		if err != nil {
			return Line{}, nil, err
		}
	}
	if s.parseIf != nil && !s.parseIf(line.Body) {
		s.skipped = true
		return line, nil, nil
	}
	if len(bytes.TrimSpace(line.Body)) == 0 {
		return line, nil, nil
	}
	t, err := s.p.Parse(line.Body)
	if err != nil {
		if err := s.onBad(&BadLineError{Name: s.Name, Line: line.Num, Err: err}); err != nil {
			return Line{}, nil, err
		}
		return line, nil, nil
	}
	if s.annotate != nil {
		s.note = s.annotate(t, s.dialect)
	}
	return line, t, nil
}

// detect reads ahead until a line tells the dialect, holding what it read.
func (s *Source) detect() error {
	for len(s.held) < DetectLines {
		line, err := s.r.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		s.held = append(s.held, line)
		if t, err := s.p.Parse(line.Body); err == nil {
			if d := Classify(t); d != nil {
				s.dialect = d
				return nil
			}
		}
	}
	s.dialect = Fallback()
	return nil
}

// Clone returns a copy of t that stays valid after the parser moves on.
func (t *Tree) Clone() *Tree {
	return &Tree{Src: t.Src, Nodes: append([]Node(nil), t.Nodes...)}
}
