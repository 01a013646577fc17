package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// percent is the collector's current percentage.
func percent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// settles collects garbage until the tuner has set what want accepts.
func settles(t *testing.T, what string, want func(int) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !want(percent()) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC stayed %d", what, percent())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// TestHeadroom: with a small live heap the target is the live heap plus
// the headroom (a percentage above 100); with a live heap beyond the
// headroom it is GOGC's 100 again, and back above once that heap is gone.
func TestHeadroom(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	const headroom = 32 << 20
	defer Start(headroom)()
	settles(t, "a small heap", func(p int) bool { return p > 100 })
	big := make([]byte, 2*headroom)
	for i := range big {
		big[i] = byte(i)
	}
	settles(t, "a heap twice the headroom", func(p int) bool { return p == 100 })
	runtime.KeepAlive(big)
	big = nil
	settles(t, "the heap let go", func(p int) bool { return p > 100 })
}

// TestUserSetting: GOGC or GOMEMLIMIT set by the user stands.
func TestUserSetting(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "150")
			defer debug.SetGCPercent(debug.SetGCPercent(123))
			defer Start(32 << 20)()
			runtime.GC()
			time.Sleep(50 * time.Millisecond)
			if p := percent(); p != 123 {
				t.Fatalf("GOGC %d after Start with %s set, want 123 left alone", p, env)
			}
		})
	}
}

// TestPercentFor: the target a percentage gives, and the runtime's least
// target it scales, stay within the roots plus the larger of them and the
// headroom, and reach it where the least target does not bind.
func TestPercentFor(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		roots, headroom uint64
		want            int
	}{
		{1 * MiB, 16 * MiB, 425},  // bs checkpoint: the least target binds
		{8 * MiB, 16 * MiB, 200},  // extract's heap: roots plus the headroom
		{4 * MiB, 16 * MiB, 400},  // both bind alike
		{16 * MiB, 16 * MiB, 100}, // the heap is the headroom: GOGC's 100
		{100 * MiB, 16 * MiB, 100},
		{0, 16 * MiB, 400},
	} {
		p := percentFor(c.roots, c.headroom)
		if p != c.want {
			t.Errorf("percentFor(%d MiB, %d MiB) = %d, want %d", c.roots/MiB, c.headroom/MiB, p, c.want)
		}
		bound := c.roots + max(c.roots, c.headroom)
		if target, least := c.roots*uint64(100+p)/100, uint64(heapMinimum*p/100); target > bound || least > bound {
			t.Errorf("percentFor(%d MiB, %d MiB) = %d: target %d, least %d, beyond %d", c.roots/MiB, c.headroom/MiB, p, target, least, bound)
		}
	}
}
