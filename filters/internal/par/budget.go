package par

import "sync"

// Budget is a counting semaphore over bytes: what a pipeline holds in
// memory at once. A single request larger than the whole budget is let
// through alone rather than deadlocking, so memory stays bounded by the
// longest line plus the limit.
type Budget struct {
	mu     sync.Mutex
	cond   *sync.Cond
	used   int
	limit  int
	closed bool
}

// NewBudget returns a budget of limit bytes.
func NewBudget(limit int) *Budget {
	b := &Budget{limit: limit}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// Acquire waits until n more bytes fit. It returns false, at once or when
// woken, once the budget is closed.
func (b *Budget) Acquire(n int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for !b.closed && b.used > 0 && b.used+n > b.limit {
		b.cond.Wait()
	}
	if b.closed {
		return false
	}
	b.used += n
	return true
}

// force takes n bytes at once, even past the limit: for memory already
// spent, so that later acquires wait for it to be released.
func (b *Budget) force(n int) {
	b.mu.Lock()
	b.used += n
	b.mu.Unlock()
}

// Release gives back n bytes.
func (b *Budget) Release(n int) {
	b.mu.Lock()
	b.used -= n
	b.cond.Broadcast()
	b.mu.Unlock()
}

// close makes every Acquire, waiting or to come, return false: how a
// consumer that stops early frees a producer waiting for room.
func (b *Budget) close() {
	b.mu.Lock()
	b.closed = true
	b.cond.Broadcast()
	b.mu.Unlock()
}
