// Package hugemem keeps a process that meets a huge line (or blob) within
// about 64 MiB plus one copy of it: it sets the garbage collector's soft
// memory limit from the longest one met so far.
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
	"runtime/debug"
	"sync"
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

// Note tells of a line or blob of n bytes in memory: from Huge bytes it
// raises the soft memory limit to Base plus n, if that is higher than it
// was, unless the user set one.
func Note(n int) {
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
