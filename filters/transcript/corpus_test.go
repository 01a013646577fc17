package transcript

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
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

// TestCorpusCallsAgree: on every line of the corpus, where present, and
// of a server tool's call and result (the corpus has none), in a dialect
// whose chain pairs calls with their results (Link), the calls a line
// issues and answers are the same to the filters that keep a call with
// its result (roll, through Link) and to those that find turns (archive,
// through Turn): one reading per dialect, not two that drift.
func TestCorpusCallsAgree(t *testing.T) {
	serverTool := filepath.Join(t.TempDir(), "server-tool.jsonl")
	os.WriteFile(serverTool, []byte(`{"type":"assistant","uuid":"a1","parentUuid":null,"sessionId":"s","timestamp":"2026-02-20T10:00:00.000Z","message":{"id":"msg_1","role":"assistant","model":"claude-sonnet-4-5","content":[`+
		`{"type":"server_tool_use","id":"srvtoolu_1","name":"web_search","input":{"query":"bs"}},`+
		`{"type":"web_search_tool_result","tool_use_id":"srvtoolu_1","content":[]},`+
		`{"type":"tool_use","id":"toolu_2","name":"Read","input":{"file_path":"/f"}}]}}`+"\n"), 0o600)
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl")) // where present
	for _, f := range append(corpus, serverTool) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		src := NewSource(f, fh, Unknown, func(*BadLineError) error { return nil })
		for {
			line, tree, err := src.Next()
			if err != nil {
				break
			}
			if tree == nil {
				continue
			}
			d := src.Dialect()
			if d.Threads() != ParentChains {
				continue // the chain pairs nothing (Link leaves calls out)
			}
			e := View(tree, d)
			link, turn := d.Link(tree), d.Turn(tree, &e)
			if !slices.Equal(link.Issued, turn.Issued) || !slices.Equal(link.Answered, turn.Answered) {
				t.Errorf("%s:%d: Link issues %v and answers %v, Turn %v and %v", filepath.Base(f), line.Num, link.Issued, link.Answered, turn.Issued, turn.Answered)
			}
		}
		fh.Close()
	}
}
