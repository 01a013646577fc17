// Package gctune sets how much garbage the collector lets pile up from
// the live heap, rather than GOGC's fixed share of it.
//
// A filter's live heap is small (a few MiB of lines waiting for their
// fate, batches being parsed) while it allocates as much as it reads: at
// GOGC's 100 the collector runs every few MiB, about 80 times over a
// 256 MiB session, and a fifth of bs extract's time into a store that
// holds its values went to it. A fixed share of a small heap is too
// little; of a large one (a 100 MiB line held) it is plenty. So the
// heap may grow past what is live by the larger of the live heap itself
// (GOGC's 100) and a fixed headroom: a run whose live heap is small
// collects a few times as seldom for at most that many MiB more, and one
// holding a huge line grows no further than it did.
package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// Start keeps the collector's target at the live heap plus the larger of
// it and headroom bytes, adjusted after every collection, until stop is
// called. It does nothing when GOGC or GOMEMLIMIT is set: the user's word
// stands.
func Start(headroom uint64) (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	t := &tuner{headroom: headroom, percent: 100, sample: []metrics.Sample{
		{Name: "/gc/heap/live:bytes"}, {Name: "/gc/scan/stack:bytes"}, {Name: "/gc/scan/globals:bytes"},
	}}
	t.tune()
	t.arm()
	return func() { t.stopped.Store(true) }
}

type tuner struct {
	headroom uint64
	sample   []metrics.Sample
	percent  int
	stopped  atomic.Bool
}

// sentinel is an object that becomes garbage at once: its cleanup runs
// after the collection that finds it, and arms the next.
type sentinel struct{ _ *int }

func (t *tuner) arm() {
	runtime.AddCleanup(&sentinel{}, func(t *tuner) {
		if !t.stopped.Load() {
			t.tune()
			t.arm()
		}
	}, t)
}

// tune sets the percentage that makes the target the live heap plus the
// larger of it and the headroom. The collector takes its percentage of
// the stacks and globals it scans too, not only of the live heap: a run
// whose heap is 1 MiB beside 2 MiB of globals would otherwise get three
// times the headroom.
func (t *tuner) tune() {
	metrics.Read(t.sample)
	var roots uint64
	for _, s := range t.sample {
		if s.Value.Kind() == metrics.KindUint64 {
			roots += s.Value.Uint64()
		}
	}
	p := percentFor(roots, t.headroom)
	// Setting it takes the heap's lock: only when it moves by a tenth.
	if p*10 < t.percent*9 || p*10 > t.percent*11 {
		debug.SetGCPercent(p)
		t.percent = p
	}
}

// percentFor is the percentage that makes the collector's target the
// roots (live heap, stacks and globals) plus the larger of them and the
// headroom. The runtime's least target, 4 MiB at 100, grows with the
// percentage too: no more than the headroom allows.
func percentFor(roots, headroom uint64) int {
	if roots >= headroom {
		return 100
	}
	return max(100, int(min(headroom*100/max(roots, 1), (roots+headroom)*100/heapMinimum)))
}

// heapMinimum is the runtime's least heap target at a percentage of
// 100 (its defaultHeapMinimum), which it scales by the percentage.
const heapMinimum = 4 << 20
