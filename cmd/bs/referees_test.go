package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

// The programs that read bs's output judge it: ccusage totals what a
// session cost, and pi's SessionManager builds the context pi sends. They
// are installed, pinned, by scripts/referees, which names the directory
// in BS_REFEREES; BS_REQUIRE_REFEREES=1 (CI) makes a missing install fail
// rather than skip.
func referees(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BS_REFEREES")
	if dir == "" {
		if os.Getenv("BS_REQUIRE_REFEREES") == "1" {
			t.Fatal("BS_REFEREES is not set: run scripts/referees install")
		}
		t.Skip("BS_REFEREES is not set (scripts/referees install)")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".bin", "ccusage")); err != nil {
		t.Fatalf("BS_REFEREES=%s holds no ccusage: %v", dir, err)
	}
	corpustest.Files(t, "*/*.jsonl") // skips without the corpus
	return dir
}

// costs is what ccusage reports of one session file of dialect d: its
// totals of tokens (each kind) and cost, priced offline.
func costs(t *testing.T, dir, d string, data []byte) map[string]any {
	t.Helper()
	home := t.TempDir()
	var args []string
	env := os.Environ()
	switch d {
	case "claude-code":
		f := filepath.Join(home, "projects", "p", "s.jsonl")
		writeFile(t, f, data)
		args, env = []string{"claude", "daily"}, append(env, "CLAUDE_CONFIG_DIR="+home)
	case "openclaw":
		writeFile(t, filepath.Join(home, "--p--", "s.jsonl"), data)
		args = []string{"pi", "daily", "--pi-path", home}
	case "codex":
		writeFile(t, filepath.Join(home, "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-s.jsonl"), data)
		args, env = []string{"codex", "daily"}, append(env, "CODEX_HOME="+home)
	}
	cmd := exec.Command(filepath.Join(dir, "node_modules", ".bin", "ccusage"), append(args, "--json", "--offline")...)
	cmd.Env = append(env, "NO_COLOR=1", "TZ=UTC")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ccusage %s: %v", strings.Join(args, " "), err)
	}
	var r struct{ Totals map[string]any }
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("ccusage %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return r.Totals
}

// sameTotals reports whether two ccusage totals are the same: tokens
// exactly, costs to a part in a billion (ccusage sums them in the order it
// reads the lines, and a float sum's last bit follows the order).
func sameTotals(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		x, ok1 := v.(float64)
		y, ok2 := b[k].(float64)
		switch {
		case !ok1 || !ok2:
			if !reflect.DeepEqual(v, b[k]) {
				return false
			}
		case strings.Contains(strings.ToLower(k), "cost"):
			if math.Abs(x-y) > 1e-9*math.Max(math.Abs(x), math.Abs(y)) {
				return false
			}
		case x != y:
			return false
		}
	}
	return true
}

func writeFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRefereesCostReports: roll and archive take lines out of a session
// and into the store, but the spend history stays: ccusage's totals of
// tokens and cost are the same before and after them (and after extract,
// its bookkeeping too, and trim, which never took it), on every corpus
// session that carries
// usage, Claude Code, pi and Codex alike.
func TestRefereesCostReports(t *testing.T) {
	dir := referees(t)
	store := t.TempDir()
	passes := [][]string{
		{"roll", "--trigger", "0.05", "--target", "0.02", "--min-keep", "4", "--no-index", "--store", store},
		{"archive", "--no-index", "--store", store},
		{"archive", "--keep-recent", "0", "--token-threshold", "1", "--tool-call-threshold", "1", "--no-index", "--store", store},
		{"extract", "--no-index", "--store", store},
		// Bookkeeping at its most: every string of a progress line but
		// what names a message and its spend.
		{"extract", "--types", "bookkeeping", "--keep-recent", "0", "--min-length", "0", "--no-index", "--store", store},
		{"trim", "--no-index", "--store", store},
	}
	checked := 0
	for _, d := range []string{"claude-code", "openclaw", "codex"} {
		for _, f := range corpustest.Files(t, d+"/*.jsonl") {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			before := costs(t, dir, d, in)
			if before["totalTokens"] == 0.0 {
				continue // no usage
			}
			checked++
			for _, args := range passes {
				t.Run(filepath.Base(f)+"/"+strings.Join(args[:1], " "), func(t *testing.T) {
					out, stderr, code := bs(t, in, args...)
					if code != 0 {
						t.Fatalf("bs %s: exit %d: %s", args[0], code, stderr)
					}
					if after := costs(t, dir, d, out); !sameTotals(after, before) {
						t.Errorf("ccusage after bs %s: %v, before %v", strings.Join(args, " "), after, before)
					}
				})
			}
		}
	}
	if checked == 0 {
		t.Fatal("no corpus session with usage")
	}
}

// piContext is what pi would send of a session: the messages its
// SessionManager builds (less the assistant messages that stopped with an
// error or aborted, which pi-ai never sends), the model and the thinking
// level.
func piContext(t *testing.T, dir string, data []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "s.jsonl")
	writeFile(t, f, data)
	out, err := exec.Command("node", filepath.Join(dir, "pi-context.mjs"), f).Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("pi-context: %v: %s", err, stderr)
	}
	return string(out)
}

// inert takes the spend records out of what pi reads: in a tree (v2+),
// where a record has an id of its own and nothing hangs from it, the line
// goes; in v1, where pi numbers every entry, it becomes an entry pi keeps
// out of its context (a custom entry) in its place. What pi would send of
// the session must not change.
func inert(t *testing.T, data []byte) []byte {
	var b bytes.Buffer
	var p transcript.Parser
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		tr, err := p.Parse(bytes.TrimSuffix(line, []byte("\n")))
		switch {
		case err != nil || tr.Get(0, transcript.SpentField) < 0:
			b.Write(line)
		case tr.Get(0, "id") >= 0:
			// A record in a tree: gone.
		default:
			b.WriteString(`{"type":"custom","customType":"test","data":{}`)
			if n := tr.Get(0, "timestamp"); n >= 0 {
				b.WriteString(`,"timestamp":`)
				b.Write(tr.Raw(n))
			}
			b.WriteString("}\n")
		}
	}
	return b.Bytes()
}

// TestRefereesPiContext: the spend records roll and archive leave in a pi
// session change nothing pi sends: the context pi's SessionManager builds
// from the output is the one it builds when each record is an entry pi
// keeps out of every context, on the corpus (v1) and on a v3 tree.
func TestRefereesPiContext(t *testing.T) {
	dir := referees(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("node is missing")
	}
	files := append(corpustest.Files(t, "openclaw/*.jsonl"), filepath.Join("..", "..", "testdata", "sample", "session.jsonl"))
	store := t.TempDir()
	spent := 0
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"roll", "--trigger", "0.01", "--target", "0.005", "--min-keep", "4", "--context-window", "200000", "--no-index", "--store", store},
			{"archive", "--keep-recent", "0", "--token-threshold", "1", "--tool-call-threshold", "1", "--no-index", "--store", store},
		} {
			out, stderr, code := bs(t, in, args...)
			if code != 0 {
				t.Fatalf("%s: bs %s: exit %d: %s", f, args[0], code, stderr)
			}
			spent += bytes.Count(out, []byte(`"`+transcript.SpentField+`":`))
			if lines := bytes.Split(bytes.TrimSpace(out), []byte("\n")); bytes.Contains(lines[len(lines)-1], []byte(`"`+transcript.SpentField+`":`)) {
				t.Errorf("%s: bs %s: a spend record is the last entry, which pi resumes from", filepath.Base(f), args[0])
			}
			if got, want := piContext(t, dir, out), piContext(t, dir, inert(t, out)); got != want {
				t.Errorf("%s: bs %s: pi sends another context with the spend records than without", filepath.Base(f), args[0])
			}
		}
	}
	if spent == 0 {
		t.Fatal("no spend record was written: the test checks nothing")
	}
}
