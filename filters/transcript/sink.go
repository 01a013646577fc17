package transcript

import (
	"bufio"
	"context"
	"errors"
	"io"
	"time"

	"github.com/bstools/bs/filters/internal/par"
)

// Sink writes output lines in input order while the work behind them (
// storing or fetching blobs) runs on background workers.
//
// A line may come with a fallback: its original bytes, written instead when
// its job fails or when Commit fails, so a failing store never loses data.
// Output is held until Commit (for example, the one sync that makes a batch
// of blobs durable) has succeeded for everything it references: no
// placeholder reaches the output before its blob is durable.
type Sink struct {
	w      *bufio.Writer
	commit func() error
	items  chan *sinkItem
	jobs   chan func() // taken by the worker goroutines
	budget *par.Budget
	done   chan struct{}

	// Owned by the writer goroutine.
	held      []*sinkItem
	heldBytes int
	err       error // the first job, commit or write error
	// commitFailed stays set after a failed commit: a later line may refer
	// to a blob that only that commit would have made durable (a store
	// writes identical bytes once), so from then on every line that has a
	// fallback gets it.
	commitFailed bool
	// fellBack is set once a line got its fallback: from then on a line
	// that depends on the lines before it (WriteAfter, GoAfter) gets its
	// own.
	fellBack bool
}

type sinkItem struct {
	out, fallback []byte
	pieces        [][]byte // out, in pieces, when out is nil (GoPieces)
	err           error
	ready         chan struct{} // closed when the job is done; nil for ready lines
	size          int
	after         bool // right only if every line before it got its out
}

// ErrFellBack, returned by a job with its fallback, says that the line
// could not be changed and passes as it was, the reason told elsewhere: it
// does not fail the sink, but lines written after it that depend on it
// get their fallbacks too.
var ErrFellBack = errors.New("line kept as it was")

// maxHeld bounds the bytes of lines waiting for their jobs or for a commit,
// so memory stays bounded by the longest line plus a constant.
const maxHeld = 8 << 20

// Write, Go and Close are called from one goroutine.
//
// NewSink starts a sink writing to w with up to workers concurrent jobs.
// commit, if not nil, is called before held output is written.
func NewSink(w io.Writer, workers int, commit func() error) *Sink {
	if workers < 1 {
		workers = 1
	}
	s := &Sink{
		w:      bufio.NewWriterSize(w, 256<<10),
		commit: commit,
		items:  make(chan *sinkItem, 4096),
		jobs:   make(chan func(), workers),
		budget: par.NewBudget(maxHeld),
		done:   make(chan struct{}),
	}
	// Long-lived workers rather than a goroutine per job: a job
	// (decompressing, hashing) needs a deep stack, and a new goroutine
	// would grow one by copying for every line. Close ends them.
	for range workers {
		go func() {
			for job := range s.jobs {
				par.Yield()
				job()
			}
		}()
	}
	go s.run()
	return s
}

// Write queues a line that needs no work.
func (s *Sink) Write(out []byte) {
	s.budget.Acquire(len(out))
	s.items <- &sinkItem{out: out, size: len(out)}
}

// WriteAfter queues a line whose change is right only if every line before
// it got its change (it carries what they gave up: gauge.Ledger): it gets
// fallback instead when one of them fell back, or a commit failed.
func (s *Sink) WriteAfter(out, fallback []byte) {
	s.budget.Acquire(len(out) + len(fallback))
	s.items <- &sinkItem{out: out, fallback: fallback, size: len(out) + len(fallback), after: true}
}

// FellBack tells the sink that a line it was given passed as it was for
// want of what its change needed (a blob that could not be read): the
// lines after it that depend on it get their fallbacks.
func (s *Sink) FellBack() {
	s.items <- &sinkItem{err: ErrFellBack}
}

// Go queues a line computed by job on a worker. job returns the line, the
// fallback to write if the job or a later commit fails, and its error.
// size is what the line holds in memory meanwhile.
func (s *Sink) Go(ctx context.Context, size int, job func(context.Context) (out, fallback []byte, err error)) {
	s.goJob(ctx, size, false, job)
}

// GoAfter is Go for a line that depends on the lines before it, as for
// WriteAfter.
func (s *Sink) GoAfter(ctx context.Context, size int, job func(context.Context) (out, fallback []byte, err error)) {
	s.goJob(ctx, size, true, job)
}

func (s *Sink) goJob(ctx context.Context, size int, after bool, job func(context.Context) (out, fallback []byte, err error)) {
	s.goItem(size, after, func(it *sinkItem) { it.out, it.fallback, it.err = job(ctx) })
}

// GoPieces is Go (GoAfter when after is set) for a job that returns its
// line in pieces (SplicePieces), written one after the other: a line with
// a huge value in it is never copied whole.
func (s *Sink) GoPieces(ctx context.Context, size int, after bool, job func(context.Context) (pieces [][]byte, fallback []byte, err error)) {
	s.goItem(size, after, func(it *sinkItem) { it.pieces, it.fallback, it.err = job(ctx) })
}

func (s *Sink) goItem(size int, after bool, do func(*sinkItem)) {
	s.budget.Acquire(size)
	it := &sinkItem{ready: make(chan struct{}), size: size, after: after}
	s.jobs <- func() {
		defer close(it.ready)
		do(it)
	}
	s.items <- it
}

func (s *Sink) run() {
	defer close(s.done)
	var linger *time.Timer
	for {
		var timeout <-chan time.Time
		if len(s.held) > 0 && s.commit != nil {
			// A commit costs a sync: wait briefly for more lines to
			// share it rather than paying one per line.
			if linger == nil {
				linger = time.NewTimer(commitLinger)
			} else {
				linger.Reset(commitLinger)
			}
			timeout = linger.C
		}
		select {
		case it, ok := <-s.items:
			if !ok {
				s.flush()
				return
			}
			if it.ready != nil {
				<-it.ready
			}
			switch {
			case it.err != nil:
				if !errors.Is(it.err, ErrFellBack) {
					s.fail(it.err)
				}
				it.out, it.pieces, s.fellBack = it.fallback, nil, true
			case it.after && s.fellBack && it.fallback != nil:
				it.out, it.pieces = it.fallback, nil
			}
			s.held = append(s.held, it)
			s.heldBytes += it.size
			// Without a commit to share, flush as soon as nothing else is
			// queued: files are written in large batches and a live
			// `tail -f` pipe still sees each line promptly.
			if s.heldBytes >= maxHeld/2 || (s.commit == nil && len(s.items) == 0) {
				s.flush()
			}
		case <-timeout:
			s.flush()
		}
	}
}

// commitLinger is how long held output waits for more lines to share a
// commit before it is committed and written anyway.
const commitLinger = 20 * time.Millisecond

// flush commits, then writes every held line.
func (s *Sink) flush() {
	if len(s.held) == 0 {
		return
	}
	if s.commit != nil && !s.commitFailed {
		if err := s.commit(); err != nil {
			s.fail(err)
			s.commitFailed = true
		}
	}
	committed := !s.commitFailed
	for _, it := range s.held {
		out, pieces := it.out, it.pieces
		if !committed && it.fallback != nil {
			out, pieces = it.fallback, nil
		}
		if pieces == nil {
			if _, err := s.w.Write(out); err != nil {
				s.fail(err)
			}
		}
		for _, p := range pieces {
			if _, err := s.w.Write(p); err != nil {
				s.fail(err)
				break
			}
		}
		s.budget.Release(it.size)
	}
	// Cleared, not only cut: the array would otherwise keep the lines
	// written alive until items written later took their places, and a
	// huge one keeps the reader of the next waiting (hugemem.Make).
	clear(s.held)
	s.held = s.held[:0]
	s.heldBytes = 0
	if err := s.w.Flush(); err != nil {
		s.fail(err)
	}
}

func (s *Sink) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// Close waits for every queued line to be written and returns the first
// error of a job, a commit or a write.
func (s *Sink) Close() error {
	close(s.jobs)
	close(s.items)
	<-s.done
	return s.err
}
