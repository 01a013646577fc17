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

	Note(Huge - 1)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 || limit != 0 {
		t.Fatalf("after a line below Huge: limit %d (Limit %d), want none", got, limit)
	}
	Note(100 << 20)
	if want := int64(Base + 100<<20); debug.SetMemoryLimit(-1) != want || limit != want {
		t.Fatalf("after a 100 MiB line: limit %d (Limit %d), want %d", debug.SetMemoryLimit(-1), limit, want)
	}
	Note(80 << 20)
	if want := int64(Base + 100<<20); debug.SetMemoryLimit(-1) != want {
		t.Fatalf("a shorter line lowered the limit to %d, want %d", debug.SetMemoryLimit(-1), want)
	}

	user, limit = func() bool { return true }, 0
	debug.SetMemoryLimit(math.MaxInt64)
	Note(200 << 20)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("with GOMEMLIMIT set, Note set the limit to %d", got)
	}
}

// TestMakeOneAtATime: a huge buffer is made once the one before is no
// longer reachable, and not before.
func TestMakeOneAtATime(t *testing.T) {
	defer func(w time.Duration) { MaxWait = w }(MaxWait)
	MaxWait = time.Minute
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

// TestMakeBounded: a buffer the caller keeps does not make the next Make
// wait for ever, only MaxWait; and a buffer below Huge never waits.
func TestMakeBounded(t *testing.T) {
	defer func(w time.Duration) { MaxWait = w }(MaxWait)
	MaxWait = 200 * time.Millisecond
	kept := Make(Huge, Huge)
	start := time.Now()
	small := Make(10, 20)
	if len(small) != 10 || cap(small) != 20 {
		t.Fatalf("Make(10, 20): len %d cap %d", len(small), cap(small))
	}
	if waited := time.Since(start); waited >= MaxWait {
		t.Errorf("a small buffer waited %v", waited)
	}
	start = time.Now()
	next := Make(Huge, Huge)
	if waited := time.Since(start); waited < MaxWait {
		t.Errorf("Make returned after %v, though a huge buffer was still held, before MaxWait %v", waited, MaxWait)
	}
	runtime.KeepAlive(kept)
	runtime.KeepAlive(next)
}
