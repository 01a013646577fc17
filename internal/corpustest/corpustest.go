// Package corpustest gives tests the shared corpus of real transcripts
// (../shared/corpus beside the checkout, see its SOURCES.md).
package corpustest

import (
	"bufio"
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// Dir is the corpus directory, found from this file's place in the
// checkout, so that a test in any package finds it.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
}

// Files returns the corpus files that pattern names within it (as
// "claude-code/*.jsonl"), and skips the test when there are none.
func Files(tb testing.TB, pattern string) []string {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(Dir(), pattern))
	if len(files) == 0 {
		tb.Skip("corpus not present at " + Dir())
	}
	return files
}

// Lines returns every non-blank line of the corpus's transcripts of at
// most max bytes; none, without skipping, when the corpus is not there.
func Lines(tb testing.TB, max int) [][]byte {
	tb.Helper()
	files, _ := filepath.Glob(filepath.Join(Dir(), "*", "*.jsonl"))
	var lines [][]byte
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

// OnlyAdjusted reports whether the line out is the line in with an
// _adjusted member added at the end of its object and nothing else
// changed: a usage line that carries what the lines before it gave up
// (gauge.Ledger).
func OnlyAdjusted(in, out string) bool {
	at := strings.Index(out, `,"_adjusted":{`)
	if at < 0 || at > len(in) || out[:at] != in[:at] || !strings.HasPrefix(in[at:], "}") || !strings.HasSuffix(out, in[at:]) {
		return false
	}
	return adjustedMember.MatchString(out[at : len(out)-len(in[at:])])
}

var adjustedMember = regexp.MustCompile(`^,"_adjusted":\{[^{}]*\}$`)

// EscapedText is a JSON string (quotes included) of about size bytes of
// words as a tool's output has them: ASCII with an escaped line feed, tab
// or quote every dozen bytes or so, at places seed decides. Benchmarks of
// the counters that go through a string word by word measure on it.
func EscapedText(size int, seed uint64) []byte {
	words := []string{"result", `\n`, `\t`, `\"quoted\"`, "json", "error", "range", "select", "path/to/file.go"}
	rng := rand.New(rand.NewPCG(seed, seed+1))
	raw := []byte{'"'}
	for len(raw) < size {
		raw = append(raw, words[rng.IntN(len(words))]...)
		raw = append(raw, ' ')
	}
	return append(raw, '"')
}
