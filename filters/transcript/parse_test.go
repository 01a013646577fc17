package transcript

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// corpusLines are the corpus's lines, each at most max bytes (none when
// the corpus is absent).
func corpusLines(tb testing.TB, max int) [][]byte {
	var lines [][]byte
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if l := sc.Bytes(); len(l) <= max && len(bytes.TrimSpace(l)) > 0 {
				lines = append(lines, bytes.Clone(l))
			}
		}
		fh.Close()
	}
	return lines
}

// BenchmarkParse parses every corpus line.
func BenchmarkParse(b *testing.B) {
	lines := corpusLines(b, 64<<20)
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
