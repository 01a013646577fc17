package hugemem

import (
	"math"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// TestNote: a huge size raises the limit to Base beside it, a smaller one
// never lowers it, a size below Huge sets none, and a limit the user set
// is left alone.
func TestNote(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	defer func(u func() bool, l int64) { user, limit = u, l }(user, limit)
	user, limit = func() bool { return false }, 0
	debug.SetMemoryLimit(math.MaxInt64)

	note(Huge - 1)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 || limit != 0 {
		t.Fatalf("after a line below Huge: limit %d (Limit %d), want none", got, limit)
	}
	note(100 << 20)
	if want := int64(Base + 100<<20); debug.SetMemoryLimit(-1) != want || limit != want {
		t.Fatalf("after a 100 MiB line: limit %d (Limit %d), want %d", debug.SetMemoryLimit(-1), limit, want)
	}
	note(80 << 20)
	if want := int64(Base + 100<<20); debug.SetMemoryLimit(-1) != want {
		t.Fatalf("a shorter line lowered the limit to %d, want %d", debug.SetMemoryLimit(-1), want)
	}

	user, limit = func() bool { return true }, 0
	debug.SetMemoryLimit(math.MaxInt64)
	note(200 << 20)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set, Note set the limit to %d", got)
	}
}

// TestMakeOneAtATime: a huge buffer is made once the one before is no
// longer reachable, and not before.
func TestMakeOneAtATime(t *testing.T) {
	defer func(r int) { waitRate = r }(waitRate)
	waitRate = 1 << 20 // a minute for a huge buffer
	first := Make(0, Huge)
	_ = first
	var dropped atomic.Bool
	go func() {
		time.Sleep(50 * time.Millisecond)
		dropped.Store(true)
		first = nil // the only reference
	}()
	second := Make(Huge, Huge)
	if !dropped.Load() {
		t.Fatal("Make returned a second huge buffer while the first was reachable")
	}
	if len(second) != Huge {
		t.Fatalf("len %d, want %d", len(second), Huge)
	}
	runtime.KeepAlive(second)
}

// TestMakeBounded: a buffer the caller keeps makes the next Make wait only
// so long, and the one after that not at all, until no huge buffer is
// left; a buffer below Huge never waits.
func TestMakeBounded(t *testing.T) {
	defer func(r int) { waitRate = r }(waitRate)
	waitRate = 1 << 40 // minWait
	kept := Make(Huge, Huge)
	start := time.Now()
	small := Make(10, 20)
	if len(small) != 10 || cap(small) != 20 {
		t.Fatalf("Make(10, 20): len %d cap %d", len(small), cap(small))
	}
	if waited := time.Since(start); waited >= minWait {
		t.Errorf("a small buffer waited %v", waited)
	}
	start = time.Now()
	next := Make(Huge, Huge)
	if waited := time.Since(start); waited < minWait {
		t.Errorf("Make returned after %v, though a huge buffer was still held, before %v", waited, minWait)
	}
	if !stuck.Load() {
		t.Error("a wait that ran out did not leave Make stuck")
	}
	start = time.Now()
	third := Make(Huge, Huge)
	if waited := time.Since(start); waited >= minWait {
		t.Errorf("stuck, Make waited %v", waited)
	}
	runtime.KeepAlive(kept)
	runtime.KeepAlive(next)
	runtime.KeepAlive(third)
	// Once every huge buffer is gone, Make waits again.
	kept, next, third = nil, nil, nil
	for deadline := time.Now().Add(10 * time.Second); live.Load() > 0 && time.Now().Before(deadline); {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if live.Load() != 0 || stuck.Load() {
		t.Fatalf("with no huge buffer left: live %d, stuck %v", live.Load(), stuck.Load())
	}
}
