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

// TestTreeStringChars: a string the parser counted (ASCII, escapes
// aside) and one it did not (one with other characters, or a node made by
// hand) give what StringChars counts.
func TestTreeStringChars(t *testing.T) {
	src := []byte(`{"a":"h\u00e9llo, \"w\u00f6rld\"\n\ud83d\ude00 ok","b":"h\u00e9llo, \"w\u00f6rld\"\n\ud83d\ude00 日本"}`)
	var p Parser
	tree, err := p.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	a, b := tree.Get(0, "a"), tree.Get(0, "b")
	if tree.Nodes[a].chars == 0 || tree.Nodes[b].chars != 0 {
		t.Errorf("the parser counted the characters of %q: %v, and of %q: %v; want only the first",
			tree.Raw(a), tree.Nodes[a].chars != 0, tree.Raw(b), tree.Nodes[b].chars != 0)
	}
	const want = 19
	for _, i := range []int{a, b} {
		if got := tree.StringChars(i); got != want {
			t.Errorf("%s: %d characters, want %d", tree.Raw(i), got, want)
		}
		byHand := Tree{Src: src, Nodes: []Node{{Kind: '"', Start: tree.Nodes[i].Start, End: tree.Nodes[i].End}}}
		if got := byHand.StringChars(0); got != want {
			t.Errorf("%s, not counted by the parser: %d characters, want %d", tree.Raw(i), got, want)
		}
	}
}
