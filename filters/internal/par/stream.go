package par

import (
	"runtime"
	"sync"
)

// Stream is the ordered worker pipeline the filters share: one goroutine
// sends items in input order, workers do what each needs (parse a batch
// of lines, edit a line) on every core, and one goroutine takes them in
// the order they were sent, each once its work is done. The bytes of the
// items between the two ends are bounded by a Budget (an item larger than
// the whole budget passes alone), so memory stays bounded by the largest
// item plus the budget.
//
// The sending side calls Send and then Close; the receiving side calls
// Next until it returns false, or Stop to give up early. Stop does not
// wait for the sender, which may be blocked on a live pipe.
type Stream[T any] struct {
	work   chan *streamItem[T]
	order  chan *streamItem[T]
	quit   chan struct{}
	stop   sync.Once
	budget *Budget
	held   int // the bytes of the item Next last returned
}

type streamItem[T any] struct {
	v    T
	size int
	done chan struct{} // nil when the item needs no work
}

// NewStream starts workers goroutines (at least one), each of which calls
// newWorker once for a function of its own, so that a worker can keep
// state (a parser) from item to item. The function does an item's work
// and returns how many bytes that work spent besides the item's size (a
// parsed tree), which count against the budget until the item is passed.
// At most ahead items wait for the receiver, and budget bytes are in
// flight.
func NewStream[T any](workers, ahead, budget int, newWorker func() func(T) int) *Stream[T] {
	workers = max(workers, 1)
	s := &Stream[T]{
		work:   make(chan *streamItem[T], workers),
		order:  make(chan *streamItem[T], max(ahead, 1)),
		quit:   make(chan struct{}),
		budget: NewBudget(budget),
	}
	for range workers {
		go func() {
			do := newWorker()
			for it := range s.work {
				Yield()
				if extra := do(it.v); extra > 0 {
					s.budget.force(extra)
					it.size += extra
				}
				close(it.done)
			}
		}()
	}
	return s
}

// Yield is what a worker calls between taking a job and doing it.
// Taking it may have woken the goroutine that sends the jobs (blocked on
// a full queue), or finishing the last one the goroutine that takes the
// results in order; the scheduler puts a goroutine so woken next in line
// on the worker's own processor, where it waits until the worker blocks
// or is preempted (up to 10 ms) unless another processor is idle, which
// on a busy machine it is not. Those two goroutines are the pipeline's
// one-at-a-time ends, so every such wait stalls all the workers behind
// them: profiled on bs extract -j 2 over the bench session, the ordered
// goroutine spent 3 s of a 2.4 s run runnable but waiting, against 0.2 s
// once workers yield here. Yielding costs a scheduler round trip a job.
func Yield() { runtime.Gosched() }

// Send queues v, which holds size bytes, after the items sent before it;
// with work set, a worker does its work before the receiver gets it. It
// waits while the budget is spent, and returns false once the receiver
// has stopped. Only one goroutine sends.
func (s *Stream[T]) Send(v T, size int, work bool) bool {
	if !s.budget.Acquire(size) {
		return false
	}
	it := &streamItem[T]{v: v, size: size}
	if work {
		it.done = make(chan struct{})
		select {
		case s.work <- it:
		case <-s.quit:
			return false
		}
	}
	select {
	case s.order <- it:
		return true
	case <-s.quit:
		return false
	}
}

// Close ends the stream from the sending side: Next returns false once it
// has returned every item sent, and the workers stop.
func (s *Stream[T]) Close() {
	close(s.work)
	close(s.order)
}

// Next returns the next item in order once its work is done, and false
// after the last. The item Next returned before goes back to the budget:
// the receiver may use an item until its next call.
func (s *Stream[T]) Next() (T, bool) {
	s.budget.Release(s.held)
	s.held = 0
	it, ok := <-s.order
	if !ok {
		var zero T
		return zero, false
	}
	if it.done != nil {
		<-it.done
	}
	s.held = it.size
	return it.v, true
}

// Stopped is closed once the receiver has stopped: a sender that waits for
// something else before its next Send can wait for it too.
func (s *Stream[T]) Stopped() <-chan struct{} { return s.quit }

// Stop ends the stream from the receiving side: the sender's Send returns
// false from now on, at once if it waits. The receiver may go on calling
// Next to drain what was sent. Stop may be called more than once.
func (s *Stream[T]) Stop() {
	s.stop.Do(func() {
		close(s.quit)
		s.budget.close()
	})
}
