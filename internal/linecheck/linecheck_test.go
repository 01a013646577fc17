package linecheck

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// TestCounter: blank lines and white space do not count; an unfinished
// last line does; the head is kept when asked, read in any pieces.
func TestCounter(t *testing.T) {
	in := "{\"a\":1}\n\n  \t\n{\"b\":2}\r\n x"
	c := newCounter(io.MultiReader(strings.NewReader(in[:5]), strings.NewReader(in[5:])), true)
	if b, _ := io.ReadAll(c); string(b) != in {
		t.Fatalf("passed on %q", b)
	}
	if c.total() != 3 || string(c.head) != in {
		t.Errorf("total %d, head %q", c.total(), c.head)
	}
	path := filepath.Join(t.TempDir(), "f")
	os.WriteFile(path, []byte(in), 0o600)
	f, _ := os.Open(path)
	defer f.Close()
	if n := countFile(f); n != 3 {
		t.Errorf("CountFile %d", n)
	}
}

// TestBadLines: the first maxWarnings bad lines of a file are warned
// about, a line reported twice (a filter reading twice) counts once, and
// each file counts on its own.
func TestBadLines(t *testing.T) {
	var b BadLines
	a := b.start("a")
	bad := func(name string, line int) *transcript.BadLineError {
		return &transcript.BadLineError{Name: name, Line: line, Err: errors.New("x")}
	}
	shown := 0
	for line := 1; line <= 8; line++ {
		if b.Warn(bad("a", line)) {
			shown++
		}
	}
	if b.Warn(bad("a", 3)) {
		t.Error("a line counted again was shown")
	}
	other := b.start("b")
	if !b.Warn(bad("b", 1)) {
		t.Error("another file's first bad line was not shown")
	}
	if n, warned := b.end(a); n != 8 || warned != maxWarnings || shown != maxWarnings {
		t.Errorf("a: %d bad, %d warned, %d shown", n, warned, shown)
	}
	if n, warned := b.end(other); n != 1 || warned != 1 {
		t.Errorf("b: %d bad, %d warned", n, warned)
	}
	if !b.Warn(bad("c", 1)) {
		t.Error("a line of an input not started was not shown")
	}
}
