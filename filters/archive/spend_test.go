package archive

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// TestHasSpendMark: on random lines of marks, their pieces, quotes and
// text, spendMarks.has says what searching for each mark says.
func TestHasSpendMark(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	marks := newSpendMarks(transcript.RegisteredMarks())
	pieces := []string{`"`, `\"`, `usage`, `sage"`, `token_`, `count"`, `turn_context`, `"_spent"`, `_spen`, `t"`, `e"`, "x", " ", `":{`, `ü`}
	for range 20000 {
		var sb strings.Builder
		for range r.IntN(12) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		line := []byte(sb.String())
		want := slices.ContainsFunc(marks, func(m []byte) bool { return bytes.Contains(line, m) })
		if got := marks.has(line); got != want {
			t.Fatalf("has(%s) = %v, want %v", line, got, want)
		}
	}
}

func BenchmarkHasSpendMark(b *testing.B) {
	line := []byte(`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"` +
		strings.Repeat(`the output \"quoted\" of a test run \t status ok \n `, 400) + `"}]}}`)
	marks := newSpendMarks(transcript.RegisteredMarks())
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		if marks.has(line) {
			b.Fatal("a mark in a line without one")
		}
	}
}
