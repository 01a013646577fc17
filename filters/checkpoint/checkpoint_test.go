package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

var now = time.Date(2026, 2, 20, 17, 30, 0, 0, time.UTC)

func corpusFiles(t testing.TB) []string {
	files, _ := filepath.Glob("../../../shared/corpus/*/*.jsonl")
	if len(files) == 0 {
		t.Skip("no corpus at ../shared/corpus")
	}
	return files
}

func forced(dir string) Options {
	opt := Defaults()
	opt.Dir, opt.Force, opt.Now, opt.Keep = Dir{Root: dir}, true, now, 0
	return opt
}

// sections are the top-level keys of the schema, in order (seed 003 §5.3).
var sections = []string{"schema", "schema_version", "meta", "working", "decisions", "resources", "thread", "open_items", "learnings"}

// TestCorpus is the acceptance test: on every corpus file a forced
// checkpoint is written, the stream passes through byte for byte, the file
// parses back into the schema with every section present and in order, and
// the rendered text is at most 700 tokens (characters/4).
func TestCorpus(t *testing.T) {
	dir := t.TempDir()
	for _, path := range corpusFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			in, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, _ := os.Open(path)
			defer f.Close()
			var out bytes.Buffer
			opt := forced(dir)
			opt.SessionKey = filepath.Base(path)
			res, err := Run(path, f, &out, opt)
			if err != nil {
				t.Fatal(err)
			}
			// The stream passes through byte for byte; from 70% the
			// agent's notice follows it, one entry the runtime reads.
			rest, ok := bytes.CutPrefix(out.Bytes(), in)
			if !ok {
				t.Fatal("the stream did not pass through byte for byte")
			}
			if (len(rest) > 0) != (res.Gauge.Ratio >= NoticeFrom) || res.Injected != (len(rest) > 0) {
				t.Fatalf("at %.2f appended %q (notice %q)", res.Gauge.Ratio, rest, res.Notice)
			}
			if len(rest) > 0 {
				checkNotice(t, in, rest, res.Notice)
			}
			if res.Written == nil {
				t.Fatalf("no checkpoint written: %s", res.Skipped)
			}
			data, err := os.ReadFile(res.Path)
			if err != nil {
				t.Fatal(err)
			}
			var doc yaml.Node
			if err := yaml.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			root := doc.Content[0]
			var keys []string
			for i := 0; i < len(root.Content); i += 2 {
				keys = append(keys, root.Content[i].Value)
			}
			if strings.Join(keys, ",") != strings.Join(sections, ",") {
				t.Errorf("sections %v, want %v", keys, sections)
			}
			cp, err := decode(data)
			if err != nil {
				t.Fatal(err)
			}
			if cp.Schema != schema || cp.SchemaVersion != 1 || cp.Meta.CheckpointID != "cp_001" || cp.Meta.CreatedAt != "2026-02-20T17:30:00Z" {
				t.Errorf("meta = %+v", cp.Meta)
			}
			if cp.Meta.TokenUsage.ContextWindow == 0 || cp.Meta.TokenUsage.InputTokens == 0 {
				t.Errorf("token usage = %+v", cp.Meta.TokenUsage)
			}
			// Seed 003 §5.4: ~600-700 tokens, counted as the model would
			// (o200k), not by characters/4.
			if r := Render(cp); o200k(t, r) > renderBudget || !strings.HasPrefix(r, "[Post-compaction checkpoint restore]") {
				t.Errorf("render is %d o200k tokens:\n%s", o200k(t, r), r)
			}
		})
	}
}

// TestTreesAgree checks that the observer reads the same conversation
// whatever the dialect: the same exchange written as each runtime writes it
// gives the same working state, thread, decisions and resources.
func TestTreesAgree(t *testing.T) {
	long := strings.Repeat("The plan has several steps. ", 30)
	sessions := map[string]string{
		"openclaw": `{"type":"session","version":3,"id":"s1","timestamp":"2026-02-20T10:00:00.000Z","cwd":"/w"}
{"type":"message","id":"a1","parentId":null,"timestamp":"2026-02-20T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"Plan the trip to Japan"}]}}
{"type":"message","id":"a2","parentId":"a1","timestamp":"2026-02-20T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"/w/notes.md"}}]}}
{"type":"message","id":"a3","parentId":"a2","timestamp":"2026-02-20T10:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"no such file"}],"isError":true}}
{"type":"message","id":"a4","parentId":"a3","timestamp":"2026-02-20T10:00:04.000Z","message":{"role":"assistant","content":[{"type":"text","text":"` + long + `"}]}}
{"type":"message","id":"a5","parentId":"a4","timestamp":"2026-02-20T10:14:00.000Z","message":{"role":"user","content":"Budget options please"}}
{"type":"message","id":"a6","parentId":"a5","timestamp":"2026-02-20T10:15:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c2","name":"write","arguments":{"path":"/w/plan.md","content":"x"}}]}}
`,
		"claude": `{"parentUuid":null,"type":"user","message":{"role":"user","content":"Plan the trip to Japan"},"uuid":"u1","timestamp":"2026-02-20T10:00:01.000Z","sessionId":"s1"}
{"parentUuid":"u1","type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"c1","name":"Read","input":{"file_path":"/w/notes.md"}}]},"uuid":"u2","timestamp":"2026-02-20T10:00:02.000Z","sessionId":"s1"}
{"parentUuid":"u2","type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"c1","content":"no such file","is_error":true}]},"uuid":"u3","timestamp":"2026-02-20T10:00:03.000Z","sessionId":"s1"}
{"parentUuid":"u3","type":"assistant","message":{"id":"m2","role":"assistant","content":[{"type":"text","text":"` + long + `"}]},"uuid":"u4","timestamp":"2026-02-20T10:00:04.000Z","sessionId":"s1"}
{"parentUuid":"u4","type":"user","message":{"role":"user","content":"Budget options please"},"uuid":"u5","timestamp":"2026-02-20T10:14:00.000Z","sessionId":"s1"}
{"parentUuid":"u5","type":"assistant","message":{"id":"m3","role":"assistant","content":[{"type":"tool_use","id":"c2","name":"Write","input":{"file_path":"/w/plan.md","content":"x"}}]},"uuid":"u6","timestamp":"2026-02-20T10:15:00.000Z","sessionId":"s1"}
`,
		"codex": `{"timestamp":"2026-02-20T10:00:00.000Z","type":"session_meta","payload":{"id":"s1","cwd":"/w"}}
{"timestamp":"2026-02-20T10:00:00.500Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}
{"timestamp":"2026-02-20T10:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Plan the trip to Japan"}]}}
{"timestamp":"2026-02-20T10:00:02.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat /w/notes.md\"}","call_id":"c1"}}
{"timestamp":"2026-02-20T10:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 1\nOutput:\nno such file"}}
{"timestamp":"2026-02-20T10:00:04.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"` + long + `"}]}}
{"timestamp":"2026-02-20T10:14:00.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Budget options please"}]}}
{"timestamp":"2026-02-20T10:15:00.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c2","input":"*** Begin Patch\n*** Add File: /w/plan.md\n+x\n*** End Patch\n"}}
`,
	}
	for name, s := range sessions {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			res, err := Run("-", strings.NewReader(s), nil, forced(dir))
			if err != nil {
				t.Fatal(err)
			}
			cp := res.Written
			if res.Key != "s1" {
				t.Errorf("key %q, want s1 (the session header's id)", res.Key)
			}
			w := cp.Working
			if w.Topic != "Budget options please" || w.Status != inProgress || !w.Interrupted || w.LastToolCall == nil {
				t.Errorf("working = %+v", w)
			}
			if len(cp.Decisions) != 1 || !strings.HasPrefix(cp.Decisions[0].What, "Budget options please") || cp.Decisions[0].When != "2026-02-20T10:14:00.000Z" || cp.Decisions[0].ID != "d1" {
				t.Errorf("decisions = %+v", cp.Decisions)
			}
			r := cp.Resources
			if fmt.Sprint(r.FilesRead) != "[/w/notes.md]" || fmt.Sprint(r.FilesModified) != "[/w/plan.md]" || len(r.ToolsUsed) != 2 || len(r.Failures) != 1 {
				t.Errorf("resources = %+v", r)
			}
			if cp.Thread.Summary != "Plan the trip to Japan ... Budget options please" {
				t.Errorf("summary %q", cp.Thread.Summary)
			}
			if n := len(cp.Thread.KeyExchanges); n < 3 || cp.Thread.KeyExchanges[0].Gist != "Plan the trip to Japan" {
				t.Errorf("key exchanges = %+v", cp.Thread.KeyExchanges)
			}
			if fmt.Sprint(cp.OpenItems) != "[Unanswered: Budget options please]" {
				t.Errorf("open items = %v (no reply to the last user message yet)", cp.OpenItems)
			}
		})
	}
}

func TestStatus(t *testing.T) {
	for _, tc := range []struct {
		last, status string
	}{
		{`{"role":"assistant","content":"Done, the file is written."}`, idle},
		{`{"role":"assistant","content":"Shall I also book the hotel?"}`, waitingForUser},
		{`{"role":"user","content":"and the hotel?"}`, inProgress},
	} {
		s := `{"role":"user","content":"write the file"}` + "\n" + tc.last + "\n"
		cp := build(t, s, nil)
		if cp.Working.Status != tc.status {
			t.Errorf("after %s: status %q, want %q", tc.last, cp.Working.Status, tc.status)
		}
		if tc.status == inProgress && fmt.Sprint(cp.OpenItems) != "[Unanswered: and the hotel?]" {
			t.Errorf("open items %v", cp.OpenItems)
		}
	}
}

func build(t *testing.T, s string, prev *Checkpoint) *Checkpoint {
	t.Helper()
	obs, err := observe("-", strings.NewReader(s), nil, transcript.Unknown, nil)
	if err != nil {
		t.Fatal(err)
	}
	return buildCheckpoint(obs, prev, input{ID: "cp_002", SessionKey: "k"})
}

// TestCarryForward: what the stream no longer shows comes from the previous
// checkpoint; a todo list in the stream replaces earlier open items.
func TestCarryForward(t *testing.T) {
	prev := &Checkpoint{Meta: Meta{CheckpointID: "cp_001"},
		Decisions: []Decision{{ID: "d1", What: "use Go", When: "2026-02-19T10:00:00Z"}},
		Resources: Resources{FilesRead: []string{"/old.go"}, ToolsUsed: []string{"read"}},
		OpenItems: []string{"old item"}, Learnings: []string{"user likes tests"}}
	cp := build(t, `{"role":"user","content":"go on"}`+"\n", prev)
	if cp.Meta.PreviousCheckpoint != "cp_001" || len(cp.Decisions) != 1 || cp.Resources.FilesRead[0] != "/old.go" ||
		fmt.Sprint(cp.OpenItems) != "[old item Unanswered: go on]" || fmt.Sprint(cp.Learnings) != "[user likes tests]" {
		t.Errorf("not carried forward: %+v", cp)
	}
	todo := `{"type":"assistant","sessionId":"s","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"TodoWrite","input":{"todos":[{"content":"write tests","status":"in_progress"},{"content":"ship","status":"pending"},{"content":"plan","status":"completed"}]}}]}}` + "\n"
	cp = build(t, todo, prev)
	if fmt.Sprint(cp.OpenItems) != "[write tests (in_progress) ship (pending)]" {
		t.Errorf("open items from the todo list: %v", cp.OpenItems)
	}
}

func TestGist(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"  hello\n\n world\t", 20, "hello world"},
		{"abcdef", 6, "abcdef"},
		{"abcdefg", 6, "abcde…"},
		{"héllo wörld", 5, "héll…"},
		{"a\x00b", 5, "a b"},
	} {
		if got := Gist(tc.in, tc.n); got != tc.want {
			t.Errorf("Gist(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestEncodeSafe: user text that looks like YAML syntax stays text.
func TestEncodeSafe(t *testing.T) {
	nasty := []string{"key: value", "- item", "!!python/object", "'quoted'", "\"x\"", "#comment", "a\tb", "é\u2028x", "| block", "---", "..."}
	cp := &Checkpoint{Schema: schema, SchemaVersion: 1}
	cp.Meta.CheckpointID = "cp_001"
	cp.Meta.SessionKey = "telegram:user: 123"
	cp.Working.Topic = strings.Join(nasty, " ")
	cp.Resources.ToolsUsed = nasty
	cp.OpenItems = nasty
	cp.Learnings = nasty
	for _, s := range nasty {
		cp.Decisions = append(cp.Decisions, Decision{ID: "d", What: s})
		cp.Thread.KeyExchanges = append(cp.Thread.KeyExchanges, Exchange{Role: "user", Gist: s})
	}
	var b bytes.Buffer
	if err := cp.encode(&b); err != nil {
		t.Fatal(err)
	}
	back, err := decode(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if back.Meta.SessionKey != cp.Meta.SessionKey || back.Working.Topic != cp.Working.Topic ||
		fmt.Sprint(back.OpenItems) != fmt.Sprint(nasty) || fmt.Sprint(back.Resources.ToolsUsed) != fmt.Sprint(nasty) {
		t.Errorf("round trip changed the text:\n%s", b.String())
	}
	for i, d := range back.Decisions {
		if d.What != nasty[i] || back.Thread.KeyExchanges[i].Gist != nasty[i] {
			t.Errorf("decision %d: %q", i, d.What)
		}
	}
	if !strings.Contains(b.String(), `    - "key: value"`) {
		t.Errorf("tool names are not quoted:\n%s", b.String())
	}
}

func TestSanitizeKey(t *testing.T) {
	for in, want := range map[string]string{"agent:main:telegram:group:-100": "agent_main_telegram_group_-100", "..": "__", "a/../b": "a_.._b", "é": "_"} {
		if got := sanitizeKey(in); got != want {
			t.Errorf("SanitizeKey(%q) = %q, want %q", in, got, want)
		}
	}
}

// usageSession is an OpenClaw session whose last usage puts the context at
// tokens of a 200000-token window.
func usageSession(tokens int) string {
	return fmt.Sprintf(`{"type":"session","version":3,"id":"s","timestamp":"2026-02-20T10:00:00.000Z","cwd":"/"}
{"type":"message","id":"a","parentId":null,"timestamp":"2026-02-20T10:00:01.000Z","message":{"role":"user","content":"go"}}
{"type":"message","id":"b","parentId":"a","timestamp":"2026-02-20T10:00:02.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"model":"unknown-model","usage":{"input":%d,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop"}}
`, tokens, tokens)
}

func runAuto(t *testing.T, dir string, tokens int) Outcome {
	t.Helper()
	opt := Defaults()
	opt.Dir, opt.Now = Dir{Root: dir}, now
	res, err := Run("-", strings.NewReader(usageSession(tokens)), nil, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestThresholdAndDedup(t *testing.T) {
	dir := t.TempDir()
	if res := runAuto(t, dir, 158000); res.Written != nil { // 79%
		t.Fatalf("checkpoint written at 79%%")
	}
	res := runAuto(t, dir, 162000) // 81%
	if res.Written == nil || res.Written.Meta.Trigger != "auto-80pct" || res.Written.Meta.TokenUsage.Utilization != 0.81 {
		t.Fatalf("no checkpoint at 81%%: %+v", res)
	}
	if res := runAuto(t, dir, 162000+8000); res.Written != nil { // +4.9%
		t.Fatalf("checkpoint written though tokens moved less than 5%%")
	}
	if res := runAuto(t, dir, 162000+8100); res.Written == nil || res.Written.Meta.CheckpointID != "cp_002" {
		t.Fatalf("no checkpoint after tokens moved 5%%: %+v", res)
	}
}

func sums(t *testing.T, dir string) map[string][32]byte {
	out := map[string][32]byte{}
	files, _ := filepath.Glob(filepath.Join(dir, "*", "cp_*.yaml"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[f] = sha256.Sum256(b)
	}
	return out
}

// TestRetention: the last --keep files stay, older ones are deleted, and no
// file that stays is ever changed.
func TestRetention(t *testing.T) {
	dir := t.TempDir()
	opt := forced(dir)
	opt.Keep = 5
	before := map[string][32]byte{}
	for i := 1; i <= 8; i++ {
		if _, err := Run("-", strings.NewReader(usageSession(1000*i)), nil, opt); err != nil {
			t.Fatal(err)
		}
		for f, sum := range sums(t, dir) {
			if old, ok := before[f]; ok && old != sum {
				t.Fatalf("%s was modified", f)
			}
			before[f] = sum
		}
	}
	list, err := Dir{Root: dir}.List("s")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, e := range list {
		ids = append(ids, e.ID)
	}
	if fmt.Sprint(ids) != "[cp_004 cp_005 cp_006 cp_007 cp_008]" {
		t.Errorf("kept %v", ids)
	}
	var l latestPointer
	b, _ := os.ReadFile(filepath.Join(dir, "s", latestFile))
	if err := json.Unmarshal(b, &l); err != nil || l.CheckpointID != "cp_008" {
		t.Errorf("_latest.json = %s", b)
	}
	cp, _, err := Dir{Root: dir}.Latest("s")
	if err != nil || cp.Meta.PreviousCheckpoint != "cp_007" {
		t.Errorf("latest: %v %v", cp, err)
	}
}

func TestRenderBudget(t *testing.T) {
	cp := &Checkpoint{Meta: Meta{CheckpointID: "cp_009", SessionKey: "k", CompactionCount: 4}}
	long := strings.Repeat("x", 110)
	for i := 0; i < maxDecisions; i++ {
		cp.Decisions = append(cp.Decisions, Decision{What: long})
		cp.Learnings = append(cp.Learnings, long)
		cp.OpenItems = append(cp.OpenItems, long)
		cp.Resources.FilesRead = append(cp.Resources.FilesRead, "/"+long)
	}
	for i := 0; i < maxExchanges; i++ {
		cp.Thread.KeyExchanges = append(cp.Thread.KeyExchanges, Exchange{"user", long})
	}
	r := Render(cp)
	if n := o200k(t, r); n > renderBudget || n < renderBudget-100 {
		t.Errorf("render is %d o200k tokens, want %d or a little less", n, renderBudget)
	}
	// Every cl100k token count fits too, by --tokenizer.
	cl, err := gauge.NewTokenizer("cl100k")
	if err != nil {
		t.Fatal(err)
	}
	if n := cl.TextTokens(RenderWith(cp, cl)); n > renderBudget {
		t.Errorf("render with cl100k is %d tokens", n)
	}
	if !strings.Contains(r, "compacted 4 times") {
		t.Errorf("no death-spiral warning:\n%s", r)
	}
	cp.Meta.CompactionCount = 3
	if strings.Contains(Render(cp), "WARNING") {
		t.Error("warning at 3 compactions")
	}
}

// TestKilledMidWrite kills a process that writes checkpoints in a loop at
// random moments: every checkpoint file left parses, and _latest.json always
// names a complete one.
func TestKilledMidWrite(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	for round := 0; round < 8; round++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillChild$")
		cmd.Env = append(os.Environ(), "BS_CHECKPOINT_CHILD="+dir)
		ready, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// The child says when its first checkpoint of the round is
		// written; it is killed at a random moment of the writes after
		// that, however slow the machine.
		line, err := bufio.NewReader(ready).ReadString('\n')
		if err != nil || line != "written\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the child did not report its first checkpoint: %q %v", round, line, err)
		}
		time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		cp, path, err := Dir{Root: dir}.Latest("s")
		if err != nil || cp.Meta.CheckpointID == "" {
			t.Fatalf("round %d: _latest.json names %s: %v", round, path, err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "s", "cp_*.yaml"))
		for _, f := range files {
			if _, err := readFile(f); err != nil {
				t.Fatalf("round %d: a partial checkpoint is visible: %v", round, err)
			}
		}
	}
}

func TestKillChild(t *testing.T) {
	dir := os.Getenv("BS_CHECKPOINT_CHILD")
	if dir == "" {
		t.Skip("run by TestKilledMidWrite")
	}
	opt := forced(dir)
	opt.Keep = 3
	for i := 0; ; i++ {
		if _, err := Run("-", strings.NewReader(usageSession(1000+i)), nil, opt); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			fmt.Println("written") // TestKilledMidWrite kills from now on
		}
	}
}

// TestConcurrentWriters: runs for one key at once each get their own
// number, and _latest.json names one of them.
func TestConcurrentWriters(t *testing.T) {
	dir := t.TempDir()
	const n = 8
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			_, err := Run("-", strings.NewReader(usageSession(1000+i)), nil, forced(dir))
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	list, err := Dir{Root: dir}.List("s")
	if err != nil || len(list) != n || list[n-1].ID != fmt.Sprintf("cp_%03d", n) {
		t.Fatalf("%d checkpoints (%v), want cp_001…cp_%03d", len(list), err, n)
	}
	if cp, _, err := (Dir{Root: dir}).Latest("s"); err != nil || cp.Meta.CheckpointID != fmt.Sprintf("cp_%03d", n) {
		t.Fatalf("latest %v %v", cp, err)
	}
}

// o200k counts the tokens of s with the tokenizer Render fits.
func o200k(t testing.TB, s string) int {
	tok, err := gauge.NewTokenizer("o200k")
	if err != nil {
		t.Fatal(err)
	}
	return tok.TextTokens(s)
}

// TestRenderLowValueFirst: over the budget, the sections the agent needs
// least to resume lose their items first (tools used, then files read,
// then key exchanges, the oldest first), and the decisions and open items,
// which only the checkpoint holds, stay whole while those can give.
func TestRenderLowValueFirst(t *testing.T) {
	cp := &Checkpoint{Meta: Meta{CheckpointID: "cp_001", SessionKey: "k"}, Working: Working{Topic: "ship it", Status: "in_progress"}}
	for i := 0; i < 6; i++ {
		cp.Decisions = append(cp.Decisions, Decision{What: fmt.Sprintf("decision %d: keep the parser streaming and bounded, whatever the line length", i)})
		cp.OpenItems = append(cp.OpenItems, fmt.Sprintf("open item %d: benchmark the splicer on 16 MiB lines and report the numbers", i))
	}
	for i := 0; i < 8; i++ {
		cp.Resources.FilesRead = append(cp.Resources.FilesRead, fmt.Sprintf("/repo/pkg/sub%d/very/deep/path/to/some_source_file_%d.go", i, i))
		cp.Thread.KeyExchanges = append(cp.Thread.KeyExchanges, Exchange{"user", strings.Repeat(fmt.Sprintf("exchange %d ", i), 12)})
	}
	for i := 0; i < 15; i++ {
		cp.Resources.ToolsUsed = append(cp.Resources.ToolsUsed, fmt.Sprintf("mcp__server_%d__tool_name_%d_with_a_long_suffix", i, i))
	}
	full := render(cp, limits{decisions: 10, exchanges: maxExchanges, open: 10, files: 8, read: 8, tools: 15, failures: 5, learnings: 10})
	r := Render(cp)
	if n := o200k(t, r); n > renderBudget || o200k(t, full) <= renderBudget+200 {
		t.Fatalf("render is %d tokens, %d before it was fitted; want the budget, from well over it", n, o200k(t, full))
	}
	// The tools went whole, then files read from the oldest: the latest
	// file is there when any is.
	if strings.Contains(r, "Tools used:") || strings.Contains(r, "some_source_file_0.go") && !strings.Contains(r, "some_source_file_7.go") {
		t.Errorf("not the low-value sections first, oldest first:\n%s", r)
	}
	exchangesCut := !strings.Contains(r, "exchange 0 ")
	if exchangesCut && strings.Contains(r, "Files read:") {
		t.Errorf("key exchanges cut while files read were left:\n%s", r)
	}
	for i := 0; i < 6; i++ {
		if !strings.Contains(r, fmt.Sprintf("decision %d:", i)) || !strings.Contains(r, fmt.Sprintf("open item %d:", i)) {
			t.Errorf("decision or open item %d cut before the low-value sections were empty:\n%s", i, r)
		}
	}
}

// checkNotice checks the notice appended to the transcript in: one line
// of the transcript's own dialect, marked as bs's, holding the text; a
// later run over the output appends it no more.
func checkNotice(t *testing.T, in, rest []byte, text string) {
	t.Helper()
	rest = bytes.TrimPrefix(rest, []byte("\n")) // after an unfinished last line
	if bytes.Count(rest, []byte("\n")) != 1 || !bytes.HasSuffix(rest, []byte("\n")) {
		t.Fatalf("notice %q is not one line", rest)
	}
	var p transcript.Parser
	tr, err := p.Parse(bytes.TrimSuffix(rest, []byte("\n")))
	if err != nil {
		t.Fatal(err)
	}
	var d transcript.Dialect
	src := transcript.NewSource("-", bytes.NewReader(in), nil, func(*transcript.BadLineError) error { return nil })
	for {
		_, _, err := src.Next()
		if err != nil {
			break
		}
	}
	d = src.Dialect()
	if m := tr.Get(0, InjectedField); m < 0 || !isNotice(tr, m) || d.ContextText(tr) != text {
		t.Fatalf("notice line %s (dialect %v) does not carry %q", rest, d, text)
	}
	again := append(append([]byte{}, in...), rest...)
	if !bytes.HasSuffix(in, []byte("\n")) && len(in) > 0 {
		again = append(append(append([]byte{}, in...), '\n'), rest...)
	}
	var out bytes.Buffer
	opt := Defaults()
	opt.Dir, opt.Now, opt.SessionKey = Dir{Root: t.TempDir()}, now, "again"
	res, err := Run("-", bytes.NewReader(again), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Notice == text && !bytes.Equal(out.Bytes(), again) {
		t.Errorf("the same notice was appended again: %q", bytes.TrimPrefix(out.Bytes(), again))
	}
}
