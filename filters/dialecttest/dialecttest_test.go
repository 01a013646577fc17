package dialecttest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/dialecttest"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

// samples reads the files pattern names.
func samples(t *testing.T, pattern string) []dialecttest.Sample {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	var out []dialecttest.Sample
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		// ccusage's fixtures are usage records for cost reports, without
		// messages.
		usageOnly := strings.HasPrefix(name, "ccusage__")
		out = append(out, dialecttest.Sample{Name: name, Data: b, UsageOnly: usageOnly})
	}
	return out
}

// builtin are the runtimes bs reads and the names of their samples in
// testdata and of their folders in the corpus ("" for none: no licensed
// generic chat sample is in it).
var builtin = []struct {
	d             transcript.Dialect
	testdata, dir string
}{
	{transcript.OpenClaw, "openclaw-*.jsonl", "openclaw"},
	{transcript.ClaudeCode, "claude-code*.jsonl", "claude-code"},
	{transcript.Codex, "codex*.jsonl", "codex"},
	{transcript.BrainSurgeon, "brainsurgeon*.jsonl", "brainsurgeon"},
	{transcript.Generic, "generic*.jsonl", ""},
}

// TestBuiltinSamples runs the suite for every runtime on the small
// hand-made samples.
func TestBuiltinSamples(t *testing.T) {
	if len(builtin) != len(transcript.Dialects()) {
		t.Fatalf("the suite knows %d dialects, the registry %d: give the new one samples", len(builtin), len(transcript.Dialects()))
	}
	for _, b := range builtin {
		t.Run(b.d.String(), func(t *testing.T) {
			dialecttest.Run(t, b.d, samples(t, filepath.Join("testdata", b.testdata)))
		})
	}
}

// TestBuiltinCorpus runs the suite for every runtime on its real
// transcripts in the shared corpus, with its samples: the corpus's
// synthetic BrainSurgeon fixtures hold no turn archive can take.
func TestBuiltinCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("the corpus runs every filter over 24 real files")
	}
	corpustest.Files(t, "*/*.jsonl") // skips when the corpus is not there
	for _, b := range builtin {
		if b.dir == "" {
			continue
		}
		t.Run(b.d.String(), func(t *testing.T) {
			all := append(samples(t, filepath.Join(corpustest.Dir(), b.dir, "*.jsonl")), samples(t, filepath.Join("testdata", b.testdata))...)
			dialecttest.Run(t, b.d, all)
		})
	}
}
