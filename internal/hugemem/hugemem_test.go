package hugemem

import (
	"math"
	"runtime/debug"
	"testing"
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
