// Package par runs work on several goroutines for the filters: InOrder
// runs jobs over an index range (chunks, blobs), Stream does the work of
// items (batches of lines, edits) on workers and hands them back in input
// order, and Budget bounds the bytes a pipeline holds meanwhile.
package par

import (
	"context"
	"sync"
)

// InOrder runs job(i) for every i in [0, n) on up to workers goroutines
// and hands each result to emit, in order of i, on the calling goroutine.
// At most 2*workers results wait for emit at once, so memory stays
// bounded by what that many jobs hold. The first error, of a job, of emit
// or of ctx, stops the starting of jobs and is returned once every job
// started has finished.
func InOrder[T any](ctx context.Context, n, workers int, job func(int) (T, error), emit func(int, T) error) error {
	workers = max(workers, 1)
	type slot struct {
		i    int
		v    T
		err  error
		done chan struct{}
	}
	slots := make(chan *slot, 2*workers)
	running := make(chan struct{}, workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer close(slots)
		for i := range n {
			s := &slot{i: i, done: make(chan struct{})}
			select {
			case slots <- s:
			case <-quit:
				return
			}
			select {
			case running <- struct{}{}:
			case <-quit:
				s.err = context.Canceled // never emitted: emit has stopped
				close(s.done)
				return
			}
			wg.Go(func() {
				defer func() { <-running; close(s.done) }()
				s.v, s.err = job(s.i)
			})
		}
	})
	var err error
	for s := range slots {
		<-s.done
		if err != nil {
			continue
		}
		if err = ctx.Err(); err == nil {
			if err = s.err; err == nil {
				err = emit(s.i, s.v)
			}
		}
		if err != nil {
			close(quit)
		}
	}
	wg.Wait()
	return err
}

// Each runs fn(i) for every i in [0, n) on up to workers goroutines. The
// first error (of fn, or of ctx) stops the starting of calls and is
// returned once every call started has finished.
func Each(ctx context.Context, n, workers int, fn func(int) error) error {
	return InOrder(ctx, n, workers, func(i int) (struct{}, error) { return struct{}{}, fn(i) },
		func(int, struct{}) error { return nil })
}
