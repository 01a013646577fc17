// Package progress draws how far long work has got on standard error, when
// that is a terminal: the one way bs shows progress.
package progress

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar shows how far long work has got, on standard error when that
// is a terminal and nothing otherwise: a bar of bytes or items done, the
// rate and the time left (a counter and the rate when the total is not
// known). It is the one way bs shows progress. Nothing is drawn in the
// first second, so a quick run prints nothing; done clears the line, so
// the summary after it starts on a clean one. Only one is drawn at a time
// (bs watch runs filters that would show their own): while one is on, a
// new one draws nothing. The count never goes back.
type Bar struct {
	mu     sync.Mutex
	w      io.Writer
	desc   string
	total  int64 // -1: not known
	bytes  bool
	unit   string
	n      int64
	bar    *progressbar.ProgressBar
	timer  *time.Timer
	closed bool
}

// Delay is how long work runs before its progress is drawn. Tests shorten
// it.
var Delay = time.Second

// shown says whether progress is drawn on w: a terminal that is not dumb.
func shown(w io.Writer) bool { return IsTerminal(w) && os.Getenv("TERM") != "dumb" }

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return false
	}
	return term.IsTerminal(int(f.Fd()))
}

var (
	progressMu     sync.Mutex
	progressActive *Bar
)

// New starts the progress of work on w: total bytes (bytes) or
// items of unit, -1 when not known. It is nil, and every method a no-op,
// when nothing is to be drawn.
func New(w io.Writer, desc string, total int64, bytes bool, unit string) *Bar {
	if !shown(w) {
		return nil
	}
	progressMu.Lock()
	defer progressMu.Unlock()
	if progressActive != nil {
		return nil
	}
	p := &Bar{w: w, desc: desc, total: total, bytes: bytes, unit: unit}
	progressActive = p
	p.timer = time.AfterFunc(Delay, p.draw)
	return p
}

// draw makes the bar, once the work has run for Delay.
func (p *Bar) draw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(p.desc),
		progressbar.OptionSetWidth(20),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionSetPredictTime(p.total > 0),
		progressbar.OptionShowElapsedTimeOnFinish(),
	}
	if p.bytes {
		opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowTotalBytes(true), progressbar.OptionShowCount())
	} else {
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(p.unit))
	}
	p.bar = progressbar.NewOptions64(p.total, opts...)
	p.bar.Set64(p.n)
}

// Set records that n are done; a smaller n than before is ignored.
func (p *Bar) Set(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if n <= p.n || p.closed {
		return
	}
	p.n = n
	if p.bar != nil {
		p.bar.Set64(n)
	}
}

// add records n more done.
func (p *Bar) add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	m := p.n + n
	p.mu.Unlock()
	p.Set(m)
}

// Done clears the line; p draws nothing after it.
func (p *Bar) Done() {
	if p == nil {
		return
	}
	p.timer.Stop()
	p.mu.Lock()
	if !p.closed && p.bar != nil {
		p.bar.Finish() // clears the line (OptionClearOnFinish)
	}
	p.closed = true
	p.mu.Unlock()
	progressMu.Lock()
	if progressActive == p {
		progressActive = nil
	}
	progressMu.Unlock()
}

// Reader counts what is read of R on Bar.
type Reader struct {
	R   io.Reader
	Bar *Bar
}

func (r *Reader) Read(p []byte) (int, error) {
	n, err := r.R.Read(p)
	r.Bar.add(int64(n))
	return n, err
}

// File shows how far a reader of f has got through it, by its
// offset, until stop is called: for a file read from start to end.
func File(w io.Writer, desc string, f *os.File) (stop func()) {
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return func() {}
	}
	bar := New(w, desc, info.Size(), true, "")
	if bar == nil {
		return func() {}
	}
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				if off, err := f.Seek(0, io.SeekCurrent); err == nil {
					bar.Set(off)
				}
			}
		}
	}()
	return func() {
		close(quit)
		<-finished
		bar.Done()
	}
}

// Phases shows work that reports how far it got as it goes, (done, total)
// in each of its phases: a bar a phase, made at the phase's first report,
// when its total is known (-1: not known), labelled Label(phase), and
// done when the next phase begins or Done is called. Work of one phase
// passes "" for it.
type Phases struct {
	W     io.Writer
	Label func(phase string) string
	Bytes bool   // the counts are bytes
	Unit  string // else the items counted
	phase string
	bar   *Bar
	begun bool
}

// Set records that done of total are done in phase.
func (p *Phases) Set(phase string, done, total int64) {
	if !p.begun || phase != p.phase {
		p.bar.Done()
		p.phase, p.begun = phase, true
		p.bar = New(p.W, p.Label(phase), total, p.Bytes, p.Unit)
	}
	p.bar.Set(done)
}

// Done clears the line of the phase under way.
func (p *Phases) Done() { p.bar.Done() }
