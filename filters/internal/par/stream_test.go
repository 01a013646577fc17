package par

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

type job struct {
	n    int
	work bool
	done bool
}

// TestStreamInOrder: items come out in the order they were sent, each
// once its work is done, while the bytes in flight stay within the
// budget (an item larger than all of it passing alone).
func TestStreamInOrder(t *testing.T) {
	const budget = 1000
	var inFlight, most atomic.Int64
	s := NewStream(4, 8, budget, func() func(*job) int {
		return func(j *job) int {
			time.Sleep(time.Duration(rand.IntN(50)) * time.Microsecond)
			j.done = true
			return 0
		}
	})
	sizes := make([]int, 2000)
	for i := range sizes {
		sizes[i] = 1 + rand.IntN(200)
		if i%500 == 0 {
			sizes[i] = 3 * budget
		}
	}
	var huge atomic.Int64 // items over the budget in flight: they pass alone
	go func() {
		defer s.Close()
		for i, n := range sizes {
			if !s.Send(&job{n: i, work: i%3 != 0}, n, i%3 != 0) {
				t.Error("Send refused before Stop")
				return
			}
			if n > budget {
				huge.Add(1)
			}
			if now := inFlight.Add(int64(n)); huge.Load() == 0 {
				for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
				}
			}
		}
	}()
	next, held := 0, 0
	for j, ok := s.Next(); ok; j, ok = s.Next() {
		inFlight.Add(-int64(held))
		if held > budget {
			huge.Add(-1)
		}
		if j.n != next {
			t.Fatalf("item %d came out as number %d", j.n, next)
		}
		if j.work != j.done {
			t.Fatalf("item %d: work %v, done %v", j.n, j.work, j.done)
		}
		next++
		held = sizes[j.n]
	}
	if next != len(sizes) {
		t.Fatalf("%d items out of %d", next, len(sizes))
	}
	// The count lags the budget by up to an item either way.
	if m := most.Load(); m > budget+200 {
		t.Errorf("%d bytes were in flight, the budget is %d", m, budget)
	}
}

// TestStreamStopFreesTheSender: a sender waiting for room gets false once
// the receiver stops, and the extra bytes a worker reports count.
func TestStreamStopFreesTheSender(t *testing.T) {
	s := NewStream(1, 1, 100, func() func(int) int { return func(int) int { return 1000 } })
	sent, received := make(chan bool), make(chan struct{})
	go func() {
		defer s.Close()
		s.Send(1, 10, true)
		<-received
		sent <- s.Send(2, 10, true) // the first item's work spent 1000 bytes: no room
	}()
	if _, ok := s.Next(); !ok {
		t.Fatal("no first item")
	}
	close(received)
	select {
	case <-sent:
		t.Fatal("the second item was let in although the first's work filled the budget")
	case <-time.After(20 * time.Millisecond):
	}
	s.Stop()
	if ok := <-sent; ok {
		t.Fatal("Send succeeded after Stop")
	}
	for _, ok := s.Next(); ok; _, ok = s.Next() {
	}
}
