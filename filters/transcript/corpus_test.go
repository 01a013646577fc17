package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// corpusDir is the shared corpus of real transcripts, beside the checkout.
const corpusDir = "../../../shared/corpus"

func corpusFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("corpus not present at " + corpusDir)
	}
	return files
}

func TestCorpusDialects(t *testing.T) {
	want := map[string]Dialect{"openclaw": OpenClaw, "claude-code": ClaudeCode, "codex": Codex, "brainsurgeon": BrainSurgeon}
	for _, f := range corpusFiles(t) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var bad []int
		src := NewSource(f, fh, Unknown, func(e *BadLineError) error { bad = append(bad, e.Line); return nil })
		n := 0
		for {
			_, _, err := src.Next()
			if err != nil {
				break
			}
			n++
		}
		fh.Close()
		dir := filepath.Base(filepath.Dir(f))
		if got := src.Dialect(); got != want[dir] {
			t.Errorf("%s: dialect %v, want %v", filepath.Base(f), got, want[dir])
		}
		switch filepath.Base(f) {
		case "pi-mono__compact.jsonl":
			if len(bad) != 1 || bad[0] != 1013 {
				t.Errorf("%s: bad lines %v, want [1013] (two glued objects)", f, bad)
			}
		case "pi-mono__session.jsonl":
			if len(bad) != 1 || bad[0] != 440 {
				t.Errorf("%s: bad lines %v, want [440]", f, bad)
			}
		default:
			if len(bad) != 0 {
				t.Errorf("%s: unexpected bad lines %v", f, bad)
			}
		}
	}
}

func TestStrictStops(t *testing.T) {
	f, err := os.Open(filepath.Join(corpusDir, "openclaw", "pi-mono__session.jsonl"))
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	stop := errors.New("stop")
	src := NewSource("s", f, Unknown, func(e *BadLineError) error { return stop })
	for {
		_, _, err := src.Next()
		if err == stop {
			return
		}
		if err != nil {
			t.Fatalf("got %v, want the onBad error", err)
		}
	}
}
