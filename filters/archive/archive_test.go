package archive_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/transcript"
)

const corpusDir = "../../../shared/corpus"

var now = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)

// run archives in with opt (store and clock filled in) and checks that
// restore --all of the output is restore --all of the input.
func run(t *testing.T, in []byte, opt archive.Options) ([]byte, archive.Stats, []archive.Archived) {
	t.Helper()
	ctx := context.Background()
	if opt.Store == nil {
		opt.Store = new(blobstore.Mem)
	}
	opt.Now = now
	var got []archive.Archived
	opt.OnArchived = func(a archive.Archived) { got = append(got, a) }
	var out bytes.Buffer
	st, err := archive.Run(ctx, "test", bytes.NewReader(in), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Archived != len(got) {
		t.Errorf("stats say %d archived, %d reported", st.Archived, len(got))
	}
	restoreAll := func(b []byte) []byte {
		var back bytes.Buffer
		if _, _, err := restore.Run(ctx, "test", bytes.NewReader(b), &back, restore.Options{All: true, Store: opt.Store}); err != nil {
			t.Fatal(err)
		}
		return back.Bytes()
	}
	if back, want := restoreAll(out.Bytes()), restoreAll(in); !bytes.Equal(back, want) {
		t.Fatalf("restore --all after archive differs from the input's (%d vs %d bytes)\n%s", len(back), len(want), back)
	}
	return out.Bytes(), st, got
}

// only returns options with every trigger off.
func only() archive.Options {
	o := archive.Defaults()
	o.TokenThreshold, o.ToolCallThreshold, o.OnMaxTurns = 0, 0, false
	return o
}

// session builds an OpenClaw v3 session from turns.
type session struct {
	b bytes.Buffer
	n int
}

func newSession() *session {
	s := &session{}
	s.b.WriteString(`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/w"}` + "\n")
	return s
}

func (s *session) emit(msg string) string {
	s.n++
	id := fmt.Sprintf("%08x", s.n)
	parent := "null"
	if s.n > 1 {
		parent = fmt.Sprintf(`"%08x"`, s.n-1)
	}
	fmt.Fprintf(&s.b, `{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-03-08T12:00:%02d.000Z","message":%s}`+"\n", id, parent, s.n%60, msg)
	return id
}

// js is s as a JSON string.
func js(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (s *session) user(text string) {
	s.emit(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":%s}],"timestamp":1772971200000}`, js(text)))
}

// call makes a tool call and, unless answer is false, its result of size
// characters.
func (s *session) call(tool, path string, size int, answer bool) {
	id := fmt.Sprintf("call_%d", s.n)
	s.emit(fmt.Sprintf(`{"role":"assistant","content":[{"type":"toolCall","id":%q,"name":%q,"arguments":{"path":%s}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11},"stopReason":"toolUse","timestamp":1772971200001}`, id, tool, js(path)))
	if answer {
		s.emit(fmt.Sprintf(`{"role":"toolResult","toolCallId":%q,"toolName":%q,"content":[{"type":"text","text":%q}],"isError":false,"timestamp":1772971200002}`, id, tool, strings.Repeat("x", size)))
	}
}

func (s *session) reply(text string) {
	s.emit(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":%s}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":20,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":25},"stopReason":"stop","timestamp":1772971200003}`, js(text)))
}

func (s *session) bytes() []byte { return bytes.Clone(s.b.Bytes()) }

// triggerSession has one turn for each trigger and a last turn.
func triggerSession() []byte {
	s := newSession()
	s.user("big turn: read the log")
	s.call("read", "/var/log/big.log", 20000, true)
	s.reply("The log is big.")
	s.user("many calls: look around")
	for i := 0; i < 4; i++ {
		s.call("bash", "", 10, true)
	}
	s.reply("Looked around.")
	s.user("long task: refactor")
	s.call("edit", "main.go", 10, true)
	s.reply("[Max turns reached]")
	s.user("last turn")
	s.reply("done")
	return s.bytes()
}

func tasks(got []archive.Archived) []string {
	var ts []string
	for _, a := range got {
		ts = append(ts, a.Task)
	}
	return ts
}

func TestEachTriggerAlone(t *testing.T) {
	in := triggerSession()
	cases := []struct {
		name string
		set  func(*archive.Options)
		want string
	}{
		{"token-threshold", func(o *archive.Options) { o.TokenThreshold = 1000 }, "big turn: read the log"},
		{"tool-call-threshold", func(o *archive.Options) { o.ToolCallThreshold = 4 }, "many calls: look around"},
		{"on-max-turns", func(o *archive.Options) { o.OnMaxTurns = true }, "long task: refactor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := only()
			c.set(&o)
			out, st, got := run(t, in, o)
			if st.Archived != 1 || got[0].Task != c.want {
				t.Fatalf("archived %v, want only %q", tasks(got), c.want)
			}
			if st.Turns != 4 {
				t.Errorf("saw %d turns, want 4", st.Turns)
			}
			// The prompt stays, byte for byte; the rest of the turn is one
			// synthetic entry, after the spend records of its answers.
			lines := strings.SplitAfter(string(out), "\n")
			found := false
			for i, l := range lines {
				if strings.Contains(l, `"_archived"`) {
					found = true
					before := i - 1
					for before > 0 && strings.Contains(lines[before], `"_spent":`) {
						before--
					}
					if !strings.Contains(lines[before], c.want) {
						t.Errorf("the line before the synthetic entry and its spend records is not the prompt: %s", lines[before])
					}
					if !strings.Contains(l, `"text":"[archived turn]\nsubagent_id: `+got[0].ID+`\n\n`) {
						t.Errorf("synthetic entry text: %s", l)
					}
				}
			}
			if !found {
				t.Fatal("no synthetic entry")
			}
		})
	}
	// All off: nothing changes.
	out, st, _ := run(t, in, only())
	if st.Archived != 0 || !bytes.Equal(out, in) {
		t.Fatalf("with every trigger off the transcript changed (%d archived)", st.Archived)
	}
	// Thresholds are strict for tokens (more than N) and inclusive for
	// calls (at least M).
	o := only()
	o.ToolCallThreshold = 5
	if _, st, _ := run(t, in, o); st.Archived != 0 {
		t.Errorf("4 pairs archived under --tool-call-threshold 5")
	}
}

func TestKeepRecent(t *testing.T) {
	in := triggerSession()
	o := only()
	o.TokenThreshold = 1
	o.KeepRecent = 0
	_, st, got := run(t, in, o)
	if st.Archived != 4 {
		t.Errorf("--keep-recent 0 archived %v, want all four turns", tasks(got))
	}
	o.KeepRecent = 2
	_, _, got = run(t, in, o)
	if len(got) != 2 || got[1].Task != "many calls: look around" {
		t.Errorf("--keep-recent 2 archived %v, want the first two turns", tasks(got))
	}
}

func TestUnfinishedToolCallRefused(t *testing.T) {
	s := newSession()
	s.user("interrupted")
	s.call("read", "a.go", 9000, true)
	s.call("bash", "", 0, false) // no result: the user spoke again
	s.user("next")
	s.reply("ok")
	in := s.bytes()
	o := only()
	o.TokenThreshold = 100
	o.KeepRecent = 0
	var skips []archive.Skip
	o.OnSkip = func(sk archive.Skip) { skips = append(skips, sk) }
	out, st, _ := run(t, in, o)
	if st.Archived != 0 || !bytes.Equal(out, in) {
		t.Fatalf("a turn ending on a tool call with no result was archived")
	}
	if len(skips) != 1 || skips[0].Line != 2 || !strings.Contains(skips[0].Reason, "tool call with no result") {
		t.Fatalf("skips %+v, want the turn at line 2 refused for its open call", skips)
	}
	// The last turn of a live session, still waiting for its result, is
	// refused the same way.
	s = newSession()
	s.user("working")
	s.call("read", "a.go", 9000, true)
	s.call("bash", "", 0, false)
	skips = nil
	if _, st, _ := run(t, s.bytes(), o); st.Archived != 0 || len(skips) != 1 {
		t.Fatalf("a live last turn was archived (%d) or not reported (%v)", st.Archived, skips)
	}
}

func TestDepthCap(t *testing.T) {
	in := triggerSession()
	o := only()
	o.TokenThreshold = 1
	o.DepthCap = 2
	store := new(blobstore.Mem)
	o.Store = store
	cur := in
	depths := []int{}
	for round := 1; round <= 4; round++ {
		out, _, got := run(t, cur, o)
		maxDepth := 0
		for _, a := range got {
			maxDepth = max(maxDepth, a.Depth)
		}
		depths = append(depths, maxDepth)
		cur = out
		// However deep, restore --all gives back the original.
		var back bytes.Buffer
		if _, _, err := restore.Run(context.Background(), "t", bytes.NewReader(out), &back, restore.Options{All: true, Store: store}); err != nil || !bytes.Equal(back.Bytes(), in) {
			t.Fatalf("round %d: restore --all is not the original (%v)", round, err)
		}
	}
	// Round 1 archives raw turns (depth 1), round 2 archives them again
	// (depth 2), then the cap holds.
	if fmt.Sprint(depths) != "[1 2 0 0]" {
		t.Fatalf("holder depths per round %v, want [1 2 0 0]", depths)
	}
	if !strings.Contains(string(cur), `"depth":2`) {
		t.Error("no holder at depth 2 in the final transcript")
	}
}

func markerSummary(t *testing.T, out []byte) []string {
	t.Helper()
	var sums []string
	var p transcript.Parser
	for _, line := range bytes.Split(out, []byte("\n")) {
		tr, err := p.Parse(line)
		if err != nil || tr.Get(0, transcript.ArchivedField) < 0 {
			continue
		}
		text := tr.Str(tr.Path(0, "message", "content"))
		if text == "" {
			var v struct {
				Message struct {
					Content []struct{ Text string }
				}
			}
			json.Unmarshal(line, &v)
			if len(v.Message.Content) > 0 {
				text = v.Message.Content[0].Text
			}
		}
		head, sum, ok := strings.Cut(text, "\n\n")
		id, isMarker := strings.CutPrefix(head, "[archived turn]\nsubagent_id: ")
		// Seed 002: the parent gets an [archived: <id>] line.
		sum, hasLine := strings.CutSuffix(sum, "\n\n[archived: "+id+"]")
		if !ok || !isMarker || !hasLine {
			t.Fatalf("synthetic text %q", text)
		}
		sums = append(sums, sum)
	}
	return sums
}

func TestStructuredSummary(t *testing.T) {
	s := newSession()
	s.user("find the auth handler")
	s.call("read", "src/auth.go", 9000, true)
	s.call("edit", "src/login.go", 10, true)
	s.reply("Found it.\n\n- The handler is in src/auth.go\n- Login validates nothing\n1. Tests are missing\n\nShould I add validation? I can also add tests.")
	s.user("last")
	s.reply("ok")
	o := only()
	o.TokenThreshold = 100
	out, _, _ := run(t, s.bytes(), o)
	sums := markerSummary(t, out)
	if len(sums) != 1 {
		t.Fatalf("%d summaries", len(sums))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(sums[0]), &m); err != nil {
		t.Fatalf("structured summary is not JSON: %v\n%s", err, sums[0])
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	if len(m) != 5 {
		t.Fatalf("keys %v, want the five of seed 002", keys)
	}
	var sum archive.StructuredSummary
	json.Unmarshal([]byte(sums[0]), &sum)
	want := archive.StructuredSummary{
		Outcome:       "Found it.",
		KeyFindings:   []string{"The handler is in src/auth.go", "Login validates nothing", "Tests are missing"},
		FilesTouched:  []string{"src/auth.go", "src/login.go"},
		ToolsUsed:     []string{"read", "edit"},
		OpenQuestions: []string{"Should I add validation?"},
	}
	if g, w := fmt.Sprintf("%q", sum), fmt.Sprintf("%q", want); g != w {
		t.Errorf("summary\n got %s\nwant %s", g, w)
	}
	// Findings never exceed five.
	s = newSession()
	s.user("many findings")
	s.call("read", "a", 9000, true)
	s.reply("- one\n- two\n- three\n- four\n- five\n- six\n- seven")
	s.user("last")
	s.reply("ok")
	out, _, _ = run(t, s.bytes(), o)
	json.Unmarshal([]byte(markerSummary(t, out)[0]), &sum)
	if len(sum.KeyFindings) != 5 {
		t.Errorf("%d key findings, want at most 5", len(sum.KeyFindings))
	}
}

func TestSummaryEscaping(t *testing.T) {
	s := newSession()
	s.user("quote \"this\" \\ and \u2028 that </script>")
	s.call("read", "we\"ird\\path\n", 9000, true)
	s.reply("Done \"quoted\" \\ back\tslash\u0001")
	s.user("last")
	s.reply("ok")
	for _, style := range []string{archive.Structured, archive.Paragraph} {
		o := only()
		o.TokenThreshold, o.Style = 100, style
		out, _, got := run(t, s.bytes(), o)
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if !json.Valid([]byte(line)) {
				t.Fatalf("%s: invalid JSON line %s", style, line)
			}
		}
		sum := markerSummary(t, out)[0]
		if style == archive.Structured && !json.Valid([]byte(sum)) {
			t.Errorf("structured summary is not JSON: %s", sum)
		}
		if got[0].Task != `quote "this" \ and that </script>` { // white space collapsed
			t.Errorf("task %q", got[0].Task)
		}
	}
}

func TestParagraphSummary(t *testing.T) {
	s := newSession()
	s.user("find the auth handler")
	s.call("read", "src/auth.go", 9000, true)
	s.reply("Found it in src/auth.go. It looks fine. Want me to test it?")
	s.user("last")
	s.reply("ok")
	o := only()
	o.TokenThreshold, o.Style = 100, archive.Paragraph
	out, _, _ := run(t, s.bytes(), o)
	sum := markerSummary(t, out)[0]
	want := "The user asked: find the auth handler. The assistant made 1 tool calls (read ×1). It touched src/auth.go. Outcome: Found it in src/auth.go; It looks fine; Want me to test it? It left open: Want me to test it?"
	if sum != want {
		t.Errorf("paragraph\n got %q\nwant %q", sum, want)
	}
	if n := strings.Count(sum, ". ") + strings.Count(sum, "? ") + 1; n < 3 || n > 5 {
		t.Errorf("%d sentences, want 3 to 5", n)
	}
}

func TestSummarizeCmd(t *testing.T) {
	s := newSession()
	s.user("find the auth handler")
	s.call("read", "src/auth.go", 9000, true)
	s.reply("Found it.")
	s.user("last")
	s.reply("ok")
	in := s.bytes()
	o := only()
	o.TokenThreshold = 100
	var failures []error
	o.OnSummaryFailed = func(id string, err error) { failures = append(failures, err) }

	// Success: the holder is on stdin (4 lines), stdout is the summary.
	o.SummarizeCmd = `printf 'LLM says: %s lines, holder %s' "$(wc -l | tr -d ' ')" "$BS_HOLDER_ID"`
	out, _, got := run(t, in, o)
	if sum := markerSummary(t, out)[0]; sum != "LLM says: 4 lines, holder "+got[0].ID || len(failures) > 0 {
		t.Fatalf("summary %q (failures %v)", sum, failures)
	}
	mechanical := func() string {
		o := o
		o.SummarizeCmd = ""
		out, _, _ := run(t, in, o)
		return markerSummary(t, out)[0]
	}()

	// Failure: the mechanical summary, and a warning.
	o.SummarizeCmd = `echo oops >&2; exit 3`
	out, _, _ = run(t, in, o)
	if sum := markerSummary(t, out)[0]; sum != mechanical || len(failures) != 1 || !strings.Contains(failures[0].Error(), "oops") {
		t.Fatalf("after a failing command: summary %q, failures %v", sum, failures)
	}
	// Empty output counts as a failure.
	o.SummarizeCmd = `cat >/dev/null`
	out, _, _ = run(t, in, o)
	if sum := markerSummary(t, out)[0]; sum != mechanical || len(failures) != 2 {
		t.Fatalf("after an empty summary: %q, failures %v", sum, failures)
	}
	// Timeout: the command and what it started are killed.
	o.SummarizeCmd = `sleep 30 & sleep 30; echo late`
	o.SummarizeTimeout = 200 * time.Millisecond
	start := time.Now()
	out, _, _ = run(t, in, o)
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("the timeout took %s", el)
	}
	if sum := markerSummary(t, out)[0]; sum != mechanical || len(failures) != 3 || !strings.Contains(failures[2].Error(), "timed out") {
		t.Fatalf("after a timeout: summary %q, failures %v", sum, failures)
	}
}

func TestHoldersAndShow(t *testing.T) {
	in := triggerSession()
	dir := t.TempDir()
	o := only()
	o.TokenThreshold = 1000
	o.HoldersDir = dir
	store := new(blobstore.Mem)
	o.Store = store
	out, _, got := run(t, in, o)
	if len(got) != 1 {
		t.Fatalf("archived %d turns", len(got))
	}
	// The holder is the turn's lines byte for byte, its prompt included.
	lines := strings.SplitAfter(string(in), "\n")
	want := strings.Join(lines[1:5], "")
	file, err := os.ReadFile(filepath.Join(dir, got[0].ID+".jsonl"))
	if err != nil || string(file) != want {
		t.Fatalf("holder file %q (%v), want %q", file, err, want)
	}
	var buf bytes.Buffer
	if err := got[0].WriteHolder(context.Background(), store, &buf, 0); err != nil || buf.String() != want {
		t.Fatalf("holder from the store %q (%v)", buf.String(), err)
	}
	if got[0].From != int64(len(lines[1])) || got[0].Entries != 4 || got[0].ToolCalls != 1 {
		t.Errorf("marker %+v", got[0].Marker)
	}
	// A missing blob: restore keeps the synthetic entry and says which.
	if err := store.List(context.Background(), func(d blobstore.Digest) error {
		return store.Delete(context.Background(), d)
	}); err != nil {
		t.Fatal(err)
	}
	var back bytes.Buffer
	_, _, err = restore.Run(context.Background(), "t", bytes.NewReader(out), &back, restore.Options{All: true, Store: store})
	if err == nil || !strings.Contains(err.Error(), got[0].ID) || !bytes.Equal(back.Bytes(), out) {
		t.Fatalf("restore with the holder gone: %v", err)
	}
}

// Each dialect's synthetic entry is an assistant message of that dialect,
// and the round trip holds.
func TestDialects(t *testing.T) {
	big := strings.Repeat("y", 5000)
	cases := map[string]string{
		"claude-code": `{"type":"user","message":{"role":"user","content":"find it"},"uuid":"u1","parentUuid":null,"sessionId":"S","timestamp":"2026-01-01T00:00:00Z"}
{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/a.go"}}]},"uuid":"u2","parentUuid":"u1","sessionId":"S","timestamp":"2026-01-01T00:00:01Z"}
{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"` + big + `"}]},"uuid":"u3","parentUuid":"u2","sessionId":"S","timestamp":"2026-01-01T00:00:02Z"}
{"type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"Found."}]},"uuid":"u4","parentUuid":"u3","sessionId":"S","timestamp":"2026-01-01T00:00:03Z"}
{"type":"system","subtype":"turn_duration","uuid":"u5","parentUuid":"u4","timestamp":"2026-01-01T00:00:04Z"}
{"type":"user","message":{"role":"user","content":"next"},"uuid":"u6","parentUuid":"u5","sessionId":"S","timestamp":"2026-01-01T00:00:05Z"}
`,
		"codex": `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"S"}}
{"timestamp":"2026-01-01T00:00:01Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"find it"}]}}
{"timestamp":"2026-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"find it"}}
{"timestamp":"2026-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"cmd\":\"cat a.go\",\"path\":\"a.go\"}","call_id":"c1"}}
{"timestamp":"2026-01-01T00:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"` + big + `"}}
{"timestamp":"2026-01-01T00:00:04Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Found."}]}}
{"timestamp":"2026-01-01T00:00:05Z","type":"event_msg","payload":{"type":"task_complete"}}
{"timestamp":"2026-01-01T00:00:06Z","type":"event_msg","payload":{"type":"user_message","message":"next"}}
`,
		"brainsurgeon": `{"__id":"e1","type":"user_message","text":"find it","timestamp":"2026-01-01T00:00:00Z"}
{"__id":"e2","type":"tool_call","toolName":"read","input":{"path":"a.go"},"timestamp":"2026-01-01T00:00:01Z"}
{"__id":"e3","type":"tool_result","toolName":"read","output":"` + big + `","timestamp":"2026-01-01T00:00:02Z"}
{"__id":"e4","type":"assistant_message","text":"Found.","timestamp":"2026-01-01T00:00:03Z"}
{"__id":"e5","type":"user_message","text":"next","timestamp":"2026-01-01T00:00:04Z"}
`,
		"generic": `{"role":"user","content":"find it"}
{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"read","arguments":"{\"path\":\"a.go\"}"}}]}
{"role":"tool","tool_call_id":"c1","content":"` + big + `"}
{"role":"assistant","content":"Found."}
{"role":"user","content":"next"}
`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			o := only()
			o.TokenThreshold = 500
			out, st, got := run(t, []byte(in), o)
			if st.Archived != 1 || got[0].Task != "find it" {
				t.Fatalf("archived %v", tasks(got))
			}
			d, _ := transcript.ParseDialect(name)
			var p transcript.Parser
			n := 0
			for _, line := range bytes.Split(out, []byte("\n")) {
				tr, err := p.Parse(line)
				if err != nil || tr.Get(0, transcript.ArchivedField) < 0 {
					continue
				}
				n++
				if c := transcript.Classify(tr); c != d && c != transcript.Unknown {
					t.Errorf("synthetic entry reads as %s", c)
				}
				e := transcript.View(tr, d)
				if !e.Message || (e.Role != "assistant" && name != "brainsurgeon") {
					t.Errorf("synthetic entry is not an assistant message: %+v %s", e, line)
				}
			}
			if n != 1 {
				t.Fatalf("%d synthetic entries", n)
			}
			if name == "claude-code" && !bytes.Contains(out, []byte(`"parentUuid":"u1"`)) && !bytes.Contains(out, []byte(`"uuid":"u4"`)) {
				t.Errorf("the synthetic entry does not keep the uuid chain: %s", out)
			}
		})
	}
}

func TestExtractedThenArchived(t *testing.T) {
	in := triggerSession()
	store := new(blobstore.Mem)
	opt := extract.Defaults()
	opt.Store = store
	opt.KeepRecent = 1
	var lean bytes.Buffer
	if _, err := extract.Run(context.Background(), "t", bytes.NewReader(in), &lean, opt); err != nil {
		t.Fatal(err)
	}
	o := only()
	o.TokenThreshold, o.ToolCallThreshold = 10, 1
	o.Store = store
	out, st, _ := run(t, lean.Bytes(), o)
	if st.Archived == 0 {
		t.Fatal("nothing archived")
	}
	var back bytes.Buffer
	if _, _, err := restore.Run(context.Background(), "t", bytes.NewReader(out), &back, restore.Options{All: true, Store: store}); err != nil || !bytes.Equal(back.Bytes(), in) {
		t.Fatalf("extract | archive | restore --all is not the input (%v)", err)
	}
}

func TestBadLinesAndNoFinalNewline(t *testing.T) {
	s := newSession()
	s.user("a")
	s.call("read", "a", 9000, true)
	s.b.WriteString("{not json\n")
	s.reply("done a")
	s.user("b")
	s.call("read", "b", 9000, true)
	s.reply("done b")
	in := s.bytes()
	in = in[:len(in)-1] // no final line feed
	o := only()
	o.TokenThreshold = 100
	o.KeepRecent = 0
	var skips []archive.Skip
	o.OnSkip = func(sk archive.Skip) { skips = append(skips, sk) }
	out, st, _ := run(t, in, o)
	if st.Archived != 0 || !bytes.Equal(out, in) || len(skips) != 2 {
		t.Fatalf("archived %d, skips %+v", st.Archived, skips)
	}
}

func TestStoreFailureLeavesTurn(t *testing.T) {
	in := triggerSession()
	o := only()
	o.TokenThreshold = 1000
	o.Store = failingStore{new(blobstore.Mem)}
	var out bytes.Buffer
	o.Now = now
	_, err := archive.Run(context.Background(), "t", bytes.NewReader(in), &out, o)
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err %v", err)
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Fatal("a turn whose holder could not be stored changed")
	}
}

type failingStore struct{ *blobstore.Mem }

func (failingStore) Put(context.Context, []byte) (blobstore.Digest, error) {
	return blobstore.Digest{}, fmt.Errorf("disk full")
}

// Every corpus file: archive with thresholds that fire on every turn, then
// restore --all, byte for byte.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("corpus not present")
	}
	total := 0
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			o := only()
			o.TokenThreshold, o.ToolCallThreshold, o.OnMaxTurns, o.KeepRecent = 1, 1, true, 0
			o.Store = new(blobstore.Mem)
			out, st, _ := run(t, in, o)
			total += st.Archived
			// Archiving again archives nothing new (the depth of a holder
			// only grows when its synthetic entry alone is over a
			// threshold) and still restores.
			o.TokenThreshold, o.ToolCallThreshold = 8000, 10
			run(t, out, o)
			t.Logf("%d of %d turns archived, %d refused", st.Archived, st.Turns, st.Skipped)
		})
	}
	if total < 100 {
		t.Errorf("only %d turns archived over the corpus", total)
	}
}

// The dialect given by --format is used for the synthetic entries, and
// stdin (not a file) is spooled.
func TestStdinSpool(t *testing.T) {
	in := triggerSession()
	o := only()
	o.TokenThreshold = 1000
	o.Store = new(blobstore.Mem)
	o.Now = now
	pr, pw := io.Pipe()
	go func() { pw.Write(in); pw.Close() }()
	var a, b bytes.Buffer
	if _, err := archive.Run(context.Background(), "-", pr, &a, o); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	os.WriteFile(path, in, 0o600)
	f, _ := os.Open(path)
	defer f.Close()
	if _, err := archive.Run(context.Background(), path, f, &b, o); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) || bytes.Equal(a.Bytes(), in) {
		t.Fatal("archiving a pipe and a file differ, or nothing was archived")
	}
}

func FuzzArchiveRoundTrip(f *testing.F) {
	f.Add(triggerSession(), 100, 2, 0)
	f.Add([]byte(`{"role":"user","content":"a"}`+"\n"+`{"role":"assistant","content":"b"}`+"\n"), 1, 1, 0)
	f.Fuzz(func(t *testing.T, in []byte, tokens, calls, keep int) {
		if tokens < 0 || calls < 0 || keep < 0 || keep > 5 {
			return
		}
		o := only()
		o.TokenThreshold, o.ToolCallThreshold, o.OnMaxTurns, o.KeepRecent = tokens, calls, true, keep
		run(t, in, o)
	})
}

// benchSession is a session shaped like scripts/benchgen's: turns of one
// to three tool calls with results of varied sizes.
func benchSession(size int) []byte {
	s := newSession()
	text := strings.Repeat(`grep result line with \"quotes\" and a tab\t and more words\n`, 20)
	for i := 0; s.b.Len() < size; i++ {
		s.user(fmt.Sprintf("step %d: do the thing", i))
		for c := 0; c <= i%3; c++ {
			s.call("bash", "", 0, false)
			id := fmt.Sprintf("call_%d", s.n-1)
			n := 1 + (i*7+c*13)%40
			s.emit(`{"role":"toolResult","toolCallId":"` + id + `","toolName":"bash","content":[{"type":"text","text":"` + fmt.Sprint(i) + strings.Repeat(text, n) + `"}],"isError":false,"timestamp":1772971200002}`)
		}
		s.reply("Done with the step.")
	}
	return s.bytes()
}

// BenchmarkArchive measures the engine (scan, store, write) with an
// in-memory store and default thresholds.
func BenchmarkArchive(b *testing.B) {
	in := benchSession(32 << 20)
	o := archive.Defaults()
	o.Store = new(blobstore.Mem)
	o.Now = now
	b.SetBytes(int64(len(in)))
	var st archive.Stats
	for b.Loop() {
		var err error
		if st, err = archive.Run(context.Background(), "bench", bytes.NewReader(in), io.Discard, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(st.Archived)/float64(st.Turns), "archived/turn")
}

// TestV1CompactionRenumbered: in a pi v1 session, whose compactions keep
// their first entry by number, archiving a turn before that entry
// renumbers it to where the entry now stands, keeping the number pi wrote
// in ReindexedField, and restore --all puts it back (run checks the round
// trip).
func TestV1CompactionRenumbered(t *testing.T) {
	msg := func(m string) string {
		return `{"type":"message","timestamp":"2025-12-24T10:00:00.000Z","message":` + m + "}\n"
	}
	user := func(text string) string {
		return msg(`{"role":"user","content":[{"type":"text","text":` + js(text) + `}],"timestamp":1766570400000}`)
	}
	reply := func(text string) string {
		return msg(`{"role":"assistant","content":[{"type":"text","text":` + js(text) + `}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":20,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":25},"stopReason":"stop","timestamp":1766570400001}`)
	}
	result := func(id string) string {
		return msg(`{"role":"toolResult","toolCallId":"` + id + `","toolName":"read","content":[{"type":"text","text":"` + strings.Repeat("x", 8000) + `"}],"isError":false,"timestamp":1766570400003}`)
	}
	in := `{"type":"session","id":"v1","timestamp":"2025-12-24T10:00:00.000Z","cwd":"/w"}` + "\n" + // entry 0
		user("read the big logs") + // 1
		msg(`{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.log"}},{"type":"toolCall","id":"c2","name":"read","arguments":{"path":"b.log"}},{"type":"toolCall","id":"c3","name":"read","arguments":{"path":"c.log"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":10,"output":1,"cacheRead":0,"cacheWrite":0,"totalTokens":11},"stopReason":"toolUse","timestamp":1766570400002}`) + // 2
		result("c1") + result("c2") + result("c3") + // 3, 4, 5
		reply("The logs are big.") + // 6
		user("second question") + // 7
		reply("second answer") + // 8
		`{"type":"compaction","timestamp":"2025-12-24T10:05:00.000Z","summary":"earlier work","firstKeptEntryIndex":7,"tokensBefore":9000}` + "\n" + // 9
		user("third question") +
		reply("third answer") +
		user("last question") +
		reply("last answer")
	o := only()
	o.TokenThreshold, o.KeepRecent = 1000, 1
	out, st, _ := run(t, []byte(in), o)
	if st.Archived != 1 {
		t.Fatalf("%d turns archived, want the big one:\n%s", st.Archived, out)
	}
	// The turn's six entries are four now (its prompt, the spend records
	// of its two answers and the entry that stands for it): entry 7 is
	// entry 5.
	if !bytes.Contains(out, []byte(`"firstKeptEntryIndex":5`)) || !bytes.Contains(out, []byte(`"`+archive.ReindexedField+`":{"firstKeptEntryIndex":7}`)) {
		t.Fatalf("the compaction was not renumbered from 7 to 5:\n%s", out)
	}
}
