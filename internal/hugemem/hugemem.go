// Package hugemem keeps a process that meets huge lines (or blobs) within
// about 64 MiB plus one copy of the longest: huge buffers are made one at
// a time (Make), and the garbage collector's soft memory limit follows the
// longest one met so far (note).
//
// Left to GOGC alone, the collector lets the heap grow to twice what was
// live at its last cycle: with a 100 MiB line live, another 100 MiB of
// garbage (the line before, a decoded blob already written out) stays in
// memory until the heap reaches 200 MiB or more, and bs extract peaked at
// 439 MiB with two 100 MiB values. Huge buffers are plain bytes, which
// the collector does not scan, so collecting more often costs next to
// nothing: measured on the two-value session, bs extract ran 15 cycles
// instead of 4 in the same CPU time, and peaked at 237 MiB. When a command
// really holds more than the limit, the runtime caps the collector at half
// the CPU; a limit the user set (GOMEMLIMIT) is left alone.
package hugemem

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Huge is the size from which a line or blob sets the limit: below it the
// usual heap of a run (tens of MiB) could come near the limit, and the
// collector would run far more often for nothing.
const Huge = 64 << 20

// Base is what the limit allows beside the longest line: the rest of a
// run's memory.
const Base = 64 << 20

var (
	mu    sync.Mutex
	limit int64                                                                  // the limit set so far, 0 before one is
	user  = sync.OnceValue(func() bool { return os.Getenv("GOMEMLIMIT") != "" }) // a variable for tests
)

// note tells of a line or blob of n bytes in memory: from Huge bytes it
// raises the soft memory limit to Base plus n, if that is higher than it
// was, unless the user set one.
func note(n int) {
	if n < Huge || user() {
		return
	}
	want := int64(Base) + int64(n)
	mu.Lock()
	defer mu.Unlock()
	if want > limit {
		limit = want
		debug.SetMemoryLimit(want)
	}
}

// waitRate bounds how long Make waits for the huge buffers before it to
// be let go of: as long as storing c bytes takes at this rate (a filter
// that is storing a line lets go of it within that), and at least
// minWait. A filter that holds two huge lines at once by design (two
// results of one turn, for bs archive) must not wait on itself for ever,
// and one that stores a line more slowly (a slow object store) may hold
// two.
var waitRate = 100 << 20 // bytes a second

const minWait = 250 * time.Millisecond

var (
	making sync.Mutex
	live   atomic.Int64             // bytes of the buffers Make gave that are still reachable
	freed  = make(chan struct{}, 1) // a buffer's cleanup ran
	// stuck is set when a wait ran out: the process holds huge buffers
	// by design, and Make does not wait again until none is left.
	stuck atomic.Bool
)

// Make returns a buffer of length n and capacity c for a line or blob.
// From Huge bytes it first notes the size (note) and waits, for a bounded
// time (waitRate), until no buffer Make gave before is still reachable,
// collecting garbage to find out: a filter reads a huge line while it
// still stores the one before, so without the wait it holds two copies.
// The collector sees the buffer go (runtime.AddCleanup), whoever held it,
// so a filter only has to let go of a huge line as soon as it is done
// with it. On a session with two 100 MiB tool results, extract, trim,
// archive and a forced roll peaked at 231–236 MiB of RSS before the wait
// and at 134–140 MiB with it (the binary's own pages included).
func Make(n, c int) []byte {
	if c < Huge {
		return make([]byte, n, c)
	}
	note(c)
	// One at a time: two readers that both find nothing live must not
	// both go on.
	making.Lock()
	defer making.Unlock()
	wait(c)
	b := make([]byte, n, c)
	live.Add(int64(c))
	runtime.AddCleanup(&b[:1][0], func(c int) {
		if live.Add(-int64(c)) == 0 {
			stuck.Store(false)
		}
		select {
		case freed <- struct{}{}:
		default:
		}
	}, c)
	return b
}

// wait returns once no buffer of Make's is reachable, or once the time to
// store c bytes has passed (waitRate), or at once while stuck.
func wait(c int) {
	if live.Load() == 0 || stuck.Load() {
		return
	}
	deadline := time.Now().Add(max(minWait, time.Duration(float64(c)/float64(waitRate)*float64(time.Second))))
	for pause := time.Millisecond; live.Load() > 0; pause = min(2*pause, 64*time.Millisecond) {
		left := time.Until(deadline)
		if left <= 0 {
			stuck.Store(true)
			return
		}
		runtime.GC() // cleanups run after the collection, on their own goroutine
		select {
		case <-freed:
		case <-time.After(min(pause, left)):
		}
	}
}
