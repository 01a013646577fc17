package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

// estimatesEvery reports whether the gauge estimates every line of a
// transcript: no usage, no compaction, no roll note.
func estimatesEvery(in []byte) bool {
	src := transcript.NewSource("-", bytes.NewReader(in), transcript.Unknown, func(*transcript.BadLineError) error { return nil })
	for {
		_, t, err := src.Next()
		if err == io.EOF {
			return true
		}
		if err != nil {
			return false
		}
		if t == nil {
			continue
		}
		if r := gauge.Classify(t, src.Dialect(), gauge.CharsPer4{}).Role; r == gauge.Usage || r == gauge.Compaction {
			return false
		}
	}
}

// TestCorpusStats is issue 7's acceptance test on every real transcript:
// the total of 'bs stats --json' is the gauge's estimate of the whole
// transcript (every line estimated, usage ignored), the kinds add up to
// it, and where 'bs gauge --json' itself estimates every line (no usage),
// the two print the same number. The same holds for the extracted
// transcript, whose would-free is then zero.
func TestCorpusStats(t *testing.T) {
	files := corpustest.Files(t, "*/*.jsonl")
	store := t.TempDir()
	type report struct {
		Tokens int
		Bytes  int64
		Kinds  map[string]struct {
			Tokens int
			Bytes  int64
		}
		WouldFree struct{ Tokens, Values int } `json:"would_free"`
	}
	statsOf := func(t *testing.T, in []byte, want int) report {
		out, stderr, code := bs(t, in, "stats", "--json")
		if code != 0 {
			t.Fatalf("stats exit %d: %s", code, stderr)
		}
		var r report
		if err := json.Unmarshal(out, &r); err != nil {
			t.Fatal(err)
		}
		if r.Tokens != want {
			t.Errorf("stats total %d tokens, the gauge estimates %d", r.Tokens, want)
		}
		sum, b := 0, int64(0)
		for _, k := range r.Kinds {
			sum += k.Tokens
			b += k.Bytes
		}
		if len(r.Kinds) != 7 || sum != r.Tokens || b != int64(len(in)) || r.Bytes != int64(len(in)) {
			t.Errorf("%d kinds add up to %d tokens, %d bytes; total %d tokens, %d bytes, input %d bytes", len(r.Kinds), sum, b, r.Tokens, r.Bytes, len(in))
		}
		return r
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, err := gauge.EstimateAll(f, bytes.NewReader(in), gauge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := statsOf(t, in, want)
			out, _, code := bs(t, in, "gauge", "--json")
			var g gauge.Result
			if code != 0 || json.Unmarshal(out, &g) != nil {
				t.Fatalf("gauge exit %d: %s", code, out)
			}
			if g.Source == "estimate" && estimatesEvery(in) && g.Tokens != r.Tokens {
				t.Errorf("gauge estimates %d tokens, stats %d", g.Tokens, r.Tokens)
			}
			lean, stderr, code := bs(t, in, "extract", "--store", store, "--no-index")
			if code != 0 {
				t.Fatalf("extract exit %d: %s", code, stderr)
			}
			after, err := gauge.EstimateAll(f, bytes.NewReader(lean), gauge.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.WouldFree.Tokens != want-after {
				t.Errorf("stats said extract would free %d tokens; it freed %d", r.WouldFree.Tokens, want-after)
			}
			if r2 := statsOf(t, lean, after); r2.WouldFree.Values != 0 {
				t.Errorf("after extract, stats says %d more values would move", r2.WouldFree.Values)
			}
			t.Logf("%d tokens, %d would be freed; the gauge estimates every line: %v", r.Tokens, r.WouldFree.Tokens, estimatesEvery(in))
		})
	}
}
