package transcript

import (
	"bufio"
	"context"
	"io"
	"sync"
)

// Sink writes output lines in input order while the blobs behind them are
// stored on background workers. A line is written only after every blob it
// references has been stored durably; if a store fails, the line's original
// bytes are written instead, so a failing store never loses data.
type Sink struct {
	ctx     context.Context
	put     func(context.Context, []byte) error
	w       *bufio.Writer
	items   chan *sinkItem
	workers chan struct{} // a slot per concurrent put
	budget  *byteBudget
	done    chan struct{}

	mu      sync.Mutex
	putErr  error // the first store error
	writeEr error
}

type sinkItem struct {
	out, orig []byte
	wg        sync.WaitGroup
	failed    bool
	size      int
}

// maxInFlight bounds the bytes of lines waiting for their blobs, so memory
// stays bounded by the longest line plus a constant.
const maxInFlight = 64 << 20

// NewSink starts a sink writing to w, storing blobs with put on up to
// workers goroutines.
func NewSink(ctx context.Context, w io.Writer, put func(context.Context, []byte) error, workers int) *Sink {
	if workers < 1 {
		workers = 1
	}
	s := &Sink{
		ctx:     ctx,
		put:     put,
		w:       bufio.NewWriterSize(w, 256<<10),
		items:   make(chan *sinkItem, 1024),
		workers: make(chan struct{}, workers),
		budget:  newByteBudget(maxInFlight),
		done:    make(chan struct{}),
	}
	go s.run()
	return s
}

// Write queues a line for output. blobs are stored before out is written;
// orig is written instead if storing any of them fails. Write keeps no
// reference to out or orig beyond the sink's lifetime.
func (s *Sink) Write(out, orig []byte, blobs [][]byte) {
	it := &sinkItem{out: out, orig: orig, size: len(out) + len(orig)}
	s.budget.acquire(it.size)
	for _, b := range blobs {
		it.wg.Add(1)
		s.workers <- struct{}{}
		go func(b []byte) {
			defer func() { <-s.workers; it.wg.Done() }()
			if err := s.put(s.ctx, b); err != nil {
				s.mu.Lock()
				if s.putErr == nil {
					s.putErr = err
				}
				it.failed = true
				s.mu.Unlock()
			}
		}(b)
	}
	s.items <- it
}

func (s *Sink) run() {
	defer close(s.done)
	for it := range s.items {
		it.wg.Wait()
		s.mu.Lock()
		out := it.out
		if it.failed {
			out = it.orig
		}
		s.mu.Unlock()
		if s.writeEr == nil {
			if _, err := s.w.Write(out); err != nil {
				s.writeEr = err
			}
		}
		s.budget.release(it.size)
		// Flush when nothing else is queued: files are written in large
		// batches, a live `tail -f` pipe still sees each line promptly.
		if len(s.items) == 0 && s.writeEr == nil {
			if err := s.w.Flush(); err != nil {
				s.writeEr = err
			}
		}
	}
	if s.writeEr == nil {
		s.writeEr = s.w.Flush()
	}
}

// Close waits for every queued line to be written and returns the first
// write error, or else the first store error.
func (s *Sink) Close() error {
	close(s.items)
	<-s.done
	if s.writeEr != nil {
		return s.writeEr
	}
	return s.putErr
}

// byteBudget is a counting semaphore over bytes. A single request larger
// than the whole budget is let through alone rather than deadlocking.
type byteBudget struct {
	mu    sync.Mutex
	cond  *sync.Cond
	used  int
	limit int
}

func newByteBudget(limit int) *byteBudget {
	b := &byteBudget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *byteBudget) acquire(n int) {
	b.mu.Lock()
	for b.used > 0 && b.used+n > b.limit {
		b.cond.Wait()
	}
	b.used += n
	b.mu.Unlock()
}

func (b *byteBudget) release(n int) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}
