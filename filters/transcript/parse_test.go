package transcript

import (
	"testing"

	"github.com/bstools/bs/internal/corpustest"
)

// BenchmarkParse parses every corpus line.
func BenchmarkParse(b *testing.B) {
	lines := corpustest.Lines(b, 64<<20)
	if len(lines) == 0 {
		b.Skip("no corpus")
	}
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n))
	var p Parser
	for b.Loop() {
		for _, l := range lines {
			p.Parse(l)
		}
	}
}

// TestTreeStringChars: a string the parser counted (ASCII and escapes)
// and one it did not (one with other characters or a surrogate pair, or a
// node made by hand) give what StringChars counts; StringUnits gives the
// UTF-16 length of a counted one.
func TestTreeStringChars(t *testing.T) {
	src := []byte(`{"ascii":"h\u00e9llo, \"w\u00f6rld\"\n ok","utf8":"h\u00e9llo, \"w\u00f6rld\"\n 日本","pair":"h\u00e9llo, \"w\u00f6rld\"\n\ud83d\ude00"}`)
	var p Parser
	tree, err := p.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		name  string
		chars int
	}{{"ascii", 18}, {"utf8", 18}, {"pair", 16}} {
		i := tree.Get(0, s.name)
		units, counted := tree.StringUnits(i)
		if counted != (s.name == "ascii") || counted && units != s.chars {
			t.Errorf("%s: the parser counted %d UTF-16 units (%v); want %d, counted only for the ASCII string", tree.Raw(i), units, counted, s.chars)
		}
		if got := tree.StringChars(i); got != s.chars {
			t.Errorf("%s: %d characters, want %d", tree.Raw(i), got, s.chars)
		}
		byHand := Tree{Src: src, Nodes: []Node{{Kind: '"', Start: tree.Nodes[i].Start, End: tree.Nodes[i].End}}}
		if got := byHand.StringChars(0); got != tree.StringChars(i) {
			t.Errorf("%s, not counted by the parser: %d characters, want %d", tree.Raw(i), got, tree.StringChars(i))
		}
	}
}
