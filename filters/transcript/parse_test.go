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
