package roll_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

func rollAndCheck(t *testing.T, name string, in []byte, opt roll.Options) []byte {
	t.Helper()
	ctx := context.Background()
	store := opt.Store
	if store == nil {
		var err error
		if store, err = blobstore.OpenLocal(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	}
	opt.Store = store
	opt.Now = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
	var out bytes.Buffer
	st, err := roll.Run(ctx, name, bytes.NewReader(in), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Rolled {
		if float64(st.TokensBefore) < opt.Trigger*float64(st.Window) {
			t.Skipf("below the trigger: %+v", st)
		}
		t.Fatalf("did not roll: %+v", st)
	}
	// The gauge of the output reads what roll aimed for, at or below target.
	res, err := gauge.Measure(name, bytes.NewReader(out.Bytes()), nil, gauge.Options{Window: opt.Window})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens != st.TokensAfter {
		t.Errorf("gauge of the output %d, roll aimed for %d", res.Tokens, st.TokensAfter)
	}
	if res.OffPath {
		t.Error("the gauge of the output, streamed, says the last entry's path leaves the line it read from")
	}
	// Read from the end of a file, past the stale usage after a note.
	fres, err := gaugeFile(t, out.Bytes(), gauge.Options{Window: opt.Window})
	if err != nil || fres.Tokens != st.TokensAfter {
		t.Errorf("gauge of the output file %d (%v), roll aimed for %d", fres.Tokens, err, st.TokensAfter)
	}
	if target := int(opt.Target * float64(res.Window)); res.Tokens > target && !st.Short {
		t.Errorf("gauge of the output %d above the target %d", res.Tokens, target)
	}
	// Byte for byte back: restore --all of the output is restore --all of
	// the input (the input itself, unless it was rolled before).
	restoreAll := func(b []byte) []byte {
		var back bytes.Buffer
		if _, _, err := restore.Run(ctx, name, bytes.NewReader(b), &back, restore.Options{All: true, Store: store}); err != nil {
			t.Fatal(err)
		}
		return back.Bytes()
	}
	if back, want := restoreAll(out.Bytes()), restoreAll(in); !bytes.Equal(back, want) {
		t.Fatalf("restore --all after roll differs from the input's (%d vs %d bytes)", len(back), len(want))
	}
	// The header stays first.
	if first := strings.SplitAfter(string(in), "\n")[0]; !strings.HasPrefix(out.String(), first) {
		t.Error("the first line did not stay first")
	}
	// No tool result loses its call.
	if o, i := orphans(out.Bytes()), orphans(in); len(o) > len(i) {
		t.Errorf("roll orphaned tool results: %d before, %d after", len(i), len(o))
	}
	// The last MinKeep messages are untouched at the end.
	if kept := messagesAfterNote(t, out.Bytes()); kept < opt.MinKeep {
		t.Errorf("only %d messages after the note, want at least %d", kept, opt.MinKeep)
	}
	return out.Bytes()
}

// orphans lists tool-result call ids with no call in the transcript.
func orphans(data []byte) []string {
	calls, results := map[string]bool{}, []string{}
	for _, line := range strings.Split(string(data), "\n") {
		var v any
		if json.Unmarshal([]byte(line), &v) != nil {
			continue
		}
		walk(v, func(m map[string]any) {
			typ, _ := m["type"].(string)
			switch {
			case typ == "toolCall" || typ == "tool_use":
				calls[fmt.Sprint(m["id"])] = true
			case typ == "function_call" || typ == "custom_tool_call":
				calls[fmt.Sprint(m["call_id"])] = true
			case typ == "tool_result":
				results = append(results, fmt.Sprint(m["tool_use_id"]))
			case typ == "function_call_output" || typ == "custom_tool_call_output":
				results = append(results, fmt.Sprint(m["call_id"]))
			case m["role"] == "toolResult":
				results = append(results, fmt.Sprint(m["toolCallId"]))
			}
		})
	}
	var o []string
	for _, r := range results {
		if !calls[r] {
			o = append(o, r)
		}
	}
	return o
}

func walk(v any, fn func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(x)
		for _, e := range x {
			walk(e, fn)
		}
	case []any:
		for _, e := range x {
			walk(e, fn)
		}
	}
}

func messagesAfterNote(t *testing.T, out []byte) int {
	src := transcript.NewSource("x", bytes.NewReader(out), transcript.Unknown, func(*transcript.BadLineError) error { return nil })
	n := 0
	for {
		_, tr, err := src.Next()
		if err != nil {
			break
		}
		if tr == nil {
			continue
		}
		if tr.Get(0, transcript.EvictedField) >= 0 {
			n = 0
			continue
		}
		if tr.Get(0, transcript.RolledField) >= 0 {
			continue
		}
		if transcript.View(tr, src.Dialect()).Message {
			n++
		}
	}
	return n
}

// synthetic is a long OpenClaw v3 session: each turn a user message, an
// assistant tool call with usage, its result and a reply.
func synthetic(turns int) []byte {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"syn","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	b.WriteString(`{"type":"model_change","id":"m0000000","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}` + "\n")
	parent, usage := "m0000000", 3000
	for i := 0; i < turns; i++ {
		id := func(k int) string { return fmt.Sprintf("%07x%d", i, k) }
		text := strings.Repeat(fmt.Sprintf("output line %d of turn %d ", i, i), 200)
		usage += 2600
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-03-08T12:%02d:00.000Z","message":{"role":"user","content":"question %d","timestamp":1}}`+"\n", id(1), parent, i%60, i)
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-03-08T12:%02d:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call%d","name":"bash","arguments":{"command":"ls"}}],"model":"claude-sonnet-4-5","usage":{"input":%d,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"toolUse","timestamp":1}}`+"\n", id(2), id(1), i%60, i, usage, usage+20)
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-03-08T12:%02d:02.000Z","message":{"role":"toolResult","toolCallId":"call%d","toolName":"bash","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":1}}`+"\n", id(3), id(2), i%60, i, text)
		fmt.Fprintf(&b, `{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-03-08T12:%02d:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done %d"}],"model":"claude-sonnet-4-5","usage":{"input":%d,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop","timestamp":1}}`+"\n", id(4), id(3), i%60, i, usage+1300, usage+1305)
		parent = id(4)
	}
	return []byte(b.String())
}

func TestRollSynthetic(t *testing.T) {
	in := synthetic(70) // ~185k tokens of usage: over 90% of 200k
	opt := roll.Defaults()
	opt.Index = new(recordingIndex) // the evicted entries are searchable
	out := rollAndCheck(t, "syn", in, opt)
	// The OpenClaw note is a compaction entry appended last, naming the
	// first kept entry, and a custom marker stands where the range was.
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil {
		t.Fatal(err)
	}
	if last["type"] != "compaction" || last["firstKeptEntryId"] == nil || last["tokensBefore"] == nil || last["summary"] == nil || last["id"] == nil || last["parentId"] == nil {
		t.Errorf("last line is not a pi compaction entry: %v", last)
	}
	if s, _ := last["summary"].(string); !strings.HasPrefix(s, "[Context rolled: ") || !strings.Contains(s, "bs search") {
		t.Errorf("note text %q", s)
	}
	if !strings.Contains(string(out), `"customType":"bs:evicted"`) {
		t.Error("no marker entry")
	}
	// The model_change entry is kept: the runtime needs it to load.
	if !strings.Contains(string(out), `"type":"model_change"`) {
		t.Error("model_change was evicted")
	}
}

// TestRollAimsFromTheUsage: the context before a roll is the provider's
// count (it covers the system prompt and tool schemas the transcript does
// not show), not an estimate of the transcript's text. Here usage grows
// about twice as fast as the text, and roll must evict enough to bring the
// usage figure under the target, and not a unit more.
func TestRollAimsFromTheUsage(t *testing.T) {
	in := synthetic(70)
	opt := roll.Defaults()
	store, _ := blobstore.OpenLocal(t.TempDir())
	opt.Store = store
	var out bytes.Buffer
	st, err := roll.Run(context.Background(), "syn", bytes.NewReader(in), &out, opt)
	if err != nil || !st.Rolled {
		t.Fatalf("rolled=%v, err=%v", st.Rolled, err)
	}
	target := int(opt.Target * float64(st.Window))
	need := st.TokensBefore - target
	// The largest unit here is a tool call with its result: under 1,500
	// tokens of text.
	if st.EvictedTokens < need || st.EvictedTokens > need+1500 {
		t.Errorf("evicted %d tokens; the usage figure %d needs %d to reach the target %d, and at most a unit more", st.EvictedTokens, st.TokensBefore, need, target)
	}
	rollAndCheck(t, "syn", in, opt)
}

// TestRollKeepsTheSystemPrompt: a chat's system message is the runtime's
// instructions, not conversation: it stays first, and its tokens stay in
// the context roll aims for.
func TestRollKeepsTheSystemPrompt(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"role":"system","content":"You are a careful SQL assistant. Never run DROP. ` + strings.Repeat("Rule. ", 300) + `"}` + "\n")
	for i := range 20 {
		role := []string{"user", "assistant"}[i%2]
		fmt.Fprintf(&b, `{"role":%q,"content":%q}`+"\n", role, strings.Repeat(fmt.Sprintf("m%d ", i), 600))
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 10000, 4
	out := rollAndCheck(t, "chat", []byte(b.String()), opt)
	if !strings.HasPrefix(string(out), `{"role":"system","content":"You are a careful SQL assistant.`) {
		t.Errorf("the system prompt is not first in the output:\n%.300s", out)
	}
}

// TestRollV1FirstKeptEntryIndex: pi numbers the entries of a v1 file from
// 0, the header first, skipping blank and bad lines; the compaction's
// firstKeptEntryIndex must name the first kept message that way.
func TestRollV1FirstKeptEntryIndex(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","id":"v1","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/","provider":"anthropic","modelId":"claude-sonnet-4-5","thinkingLevel":"off"}` + "\n\n")
	b.WriteString(`{"type":"message","timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":"glued"}}{"type":"message"}` + "\n")
	// Invalid UTF-8: bs passes the line through, pi (as encoding/json
	// below) reads it with U+FFFD and numbers it.
	b.WriteString(`{"type":"custom","customType":"note","data":{"text":"caf` + "\xff" + `"},"timestamp":"2026-03-08T12:00:00.000Z"}` + "\n")
	for i := range 12 {
		text := strings.Repeat(fmt.Sprintf("output of turn %d ", i), 120)
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-08T12:%02d:00.000Z","message":{"role":"user","content":"question %d","timestamp":1}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-08T12:%02d:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"call%d","name":"bash","arguments":{}}],"stopReason":"toolUse","timestamp":1}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-08T12:%02d:02.000Z","message":{"role":"toolResult","toolCallId":"call%d","toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":1}}`+"\n", i, i, text)
		b.WriteString("\n")
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 6000, 5
	out := rollAndCheck(t, "v1", []byte(b.String()), opt)
	// The entries as pi reads them.
	var entries []map[string]any
	for _, l := range strings.Split(string(out), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(l), &e) == nil {
			entries = append(entries, e)
		}
	}
	comp := entries[len(entries)-1]
	k, ok := comp["firstKeptEntryIndex"].(float64)
	if comp["type"] != "compaction" || !ok {
		t.Fatalf("last entry %v", comp)
	}
	// The first kept message is the first message after the marker.
	want := -1
	for i, e := range entries {
		if e["customType"] == "bs:evicted" {
			for j := i + 1; j < len(entries); j++ {
				if entries[j]["type"] == "message" {
					want = j
					break
				}
			}
			break
		}
	}
	if int(k) != want {
		t.Errorf("firstKeptEntryIndex %d names %v; the first kept message is entry %d", int(k), entries[int(k)], want)
	}
}

// TestRollCountsPiKeptEntries: a pi compaction keeps the entries from its
// first kept one on, which stand before it; they are in context, so a
// session whose kept entries fill the window is over the trigger (the
// gauge once read only the summary: 4 of 10k tokens, for a context of 12k).
func TestRollCountsPiKeptEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	parent := "null"
	for i := range 6 {
		role := []string{"user", "assistant"}[i%2]
		fmt.Fprintf(&b, `{"type":"message","id":"m%07d","parentId":%s,"timestamp":"2026-03-08T12:00:0%d.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]}}`+"\n", i, parent, i, role, strings.Repeat(fmt.Sprintf("w%d ", i), 4000))
		parent = fmt.Sprintf(`"m%07d"`, i)
	}
	b.WriteString(`{"type":"compaction","id":"c0000000","parentId":"m0000005","timestamp":"2026-03-08T12:01:00.000Z","summary":"before","firstKeptEntryId":"m0000002","tokensBefore":20000}` + "\n")
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 10000, 1
	out := rollAndCheck(t, "pi", []byte(b.String()), opt)
	if strings.Contains(string(out), `{"type":"message","id":"m0000002"`) {
		t.Error("the oldest kept entry was not evicted")
	}
}

func TestRollBelowTriggerPassesThrough(t *testing.T) {
	in := synthetic(10)
	store, _ := blobstore.OpenLocal(t.TempDir())
	opt := roll.Defaults()
	opt.Store = store
	var out bytes.Buffer
	st, err := roll.Run(context.Background(), "x", bytes.NewReader(in), &out, opt)
	if err != nil || st.Rolled || !bytes.Equal(out.Bytes(), in) {
		t.Fatalf("below the trigger: rolled=%v err=%v, output changed=%v", st.Rolled, err, !bytes.Equal(out.Bytes(), in))
	}
}

func TestRollCorpus(t *testing.T) {
	for _, f := range corpustest.Files(t, "*/*.jsonl") {
		info, _ := os.Stat(f)
		if info.Size() < 500<<10 {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			in, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			opt := roll.Defaults()
			opt.Trigger, opt.Target = 0.05, 0.04
			out := rollAndCheck(t, filepath.Base(f), in, opt)
			checkNoteShape(t, filepath.Base(filepath.Dir(f)), out)
		})
	}
}

// TestRollNoNoteClaudeSummary: under --no-note a Claude Code summary is
// still not empty, since the API takes it as a user message and refuses an
// empty one.
func TestRollNoNoteClaudeSummary(t *testing.T) {
	var in []byte
	for _, f := range corpustest.Files(t, "claude-code/*.jsonl") { // the longest session
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > len(in) {
			in = b
		}
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep, opt.NoNote = 100, 2, true
	out := rollAndCheck(t, "cc", in, opt)
	found := false
	for _, l := range strings.Split(string(out), "\n") {
		var e struct {
			IsCompactSummary bool `json:"isCompactSummary"`
			Message          struct {
				Content string `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal([]byte(l), &e) == nil && e.IsCompactSummary && strings.Contains(l, `"_rolled"`) {
			found = true
			if e.Message.Content != "[Context rolled]" {
				t.Errorf("summary content %q under --no-note", e.Message.Content)
			}
		}
	}
	if !found {
		t.Error("no summary line")
	}
}

// TestRollClaudeChain: Claude Code loads the conversation by walking
// parentUuid up from the last message. In a rolled file that walk must
// reach the summary and end at the compact boundary, as after Claude
// Code's own compaction, not stop at a parent that was evicted.
func TestRollClaudeChain(t *testing.T) {
	for _, f := range corpustest.Files(t, "claude-code/*.jsonl") {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(in) < 500<<10 {
			continue // as TestRollCorpus: the small ones hardly roll
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			opt := roll.Defaults()
			opt.Trigger, opt.Target, opt.MinKeep = 0.02, 0.01, 4
			out := rollAndCheck(t, "cc", in, opt)
			byID, _ := claudeChain(t, out)
			// The boundary's logical parent is not the summary below it:
			// a tool that follows logicalParentUuid would loop.
			var boundary struct {
				Logical *string `json:"logicalParentUuid"`
			}
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, `"subtype":"compact_boundary"`) && strings.Contains(l, `"_rolled"`) {
					json.Unmarshal([]byte(l), &boundary)
				}
			}
			if boundary.Logical != nil {
				if p, ok := byID[*boundary.Logical]; ok && p.Summary && p.Rolled {
					t.Error("the boundary's logicalParentUuid is roll's own summary")
				}
			}
		})
	}
}

// claudeEntry is what Claude Code's walk up the chain reads of a line.
type claudeEntry struct {
	UUID, ParentUUID, Type, Subtype string
	Summary                         bool
	Rolled                          bool
}

// claudeChain walks parentUuid up from the last message of a rolled Claude
// Code file, as Claude Code loads the conversation. The walk must run
// through roll's summary to its compact boundary, not stop at a parent
// that was evicted. It returns the file's lines by uuid and the uuids on
// the chain.
func claudeChain(t *testing.T, out []byte) (byID map[string]claudeEntry, chain map[string]bool) {
	t.Helper()
	byID, chain = map[string]claudeEntry{}, map[string]bool{}
	var last claudeEntry
	for _, l := range strings.Split(string(out), "\n") {
		var e struct {
			UUID             string          `json:"uuid"`
			ParentUUID       *string         `json:"parentUuid"`
			Type             string          `json:"type"`
			Subtype          string          `json:"subtype"`
			IsCompactSummary bool            `json:"isCompactSummary"`
			Rolled           json.RawMessage `json:"_rolled"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.UUID == "" {
			continue
		}
		en := claudeEntry{UUID: e.UUID, Type: e.Type, Subtype: e.Subtype, Summary: e.IsCompactSummary, Rolled: e.Rolled != nil}
		if e.ParentUUID != nil {
			en.ParentUUID = *e.ParentUUID
		}
		byID[e.UUID] = en
		if e.Type == "user" || e.Type == "assistant" {
			last = en
		}
	}
	sawSummary := false
	e := last
	chain[e.UUID] = true
	for steps := 0; e.ParentUUID != ""; steps++ {
		p, ok := byID[e.ParentUUID]
		if !ok {
			t.Fatalf("the chain from the last message stops at %s, whose parent %s is not in the file", e.UUID, e.ParentUUID)
		}
		if steps > len(byID) {
			t.Fatal("the chain loops")
		}
		e = p
		chain[e.UUID] = true
		sawSummary = sawSummary || (e.Summary && e.Rolled)
	}
	if !sawSummary || e.Subtype != "compact_boundary" || !e.Rolled {
		t.Errorf("the chain ends at %+v (through the summary: %v); want roll's compact boundary", e, sawSummary)
	}
	return byID, chain
}

// TestRollClaudeRewind: a user who rewinds a Claude Code conversation to
// an earlier message leaves the messages after it on a branch; the chain
// from the last message skips them, and so does the context the last
// usage measured. After the roll the chain still reaches the summary
// (whichever message comes first after the range in the file), and what
// is left on it is within the target: the branch's messages counted for
// nothing, before or evicted.
func TestRollClaudeRewind(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"file-history-snapshot","messageId":"x","snapshot":{"messageId":"x","trackedFileBackups":{},"timestamp":"2026-03-08T12:00:00.000Z"},"isSnapshotUpdate":false}` + "\n")
	parent := "null"
	for i := 1; i <= 30; i++ {
		if i == 7 {
			parent = `"c0000002"` // the rewind: messages 3 to 6 are a branch
		}
		id := fmt.Sprintf("c%07d", i)
		text := strings.Repeat(fmt.Sprintf("w%02d ", i), 1000) // 1000 tokens
		usage := ""
		if i == 30 {
			// The context the provider saw: the 26 messages on the chain.
			usage = `,"usage":{"input_tokens":26000,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`
		}
		if i%2 == 1 {
			fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":"2026-03-08T12:00:%02d.000Z","sessionId":"s"}`+"\n", parent, text, id, i)
		} else {
			fmt.Fprintf(&b, `{"parentUuid":%s,"isSidechain":false,"type":"assistant","message":{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":%q}]%s},"uuid":%q,"timestamp":"2026-03-08T12:00:%02d.000Z","sessionId":"s"}`+"\n", parent, i, text, usage, id, i)
		}
		parent = strconv.Quote(id)
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 26000*100/95, 4
	out := rollAndCheck(t, "cc", []byte(b.String()), opt)
	byID, chain := claudeChain(t, out)
	left := 0
	for i := 7; i <= 30; i++ {
		id := fmt.Sprintf("c%07d", i)
		if _, in := byID[id]; in && !chain[id] {
			t.Errorf("%s is in the rolled file but not on the chain", id)
		}
		if chain[id] && !byID[id].Summary { // the summary may take an evicted uuid
			left += 1000
		}
	}
	if target := int(opt.Target * float64(opt.Window)); left > target {
		t.Errorf("the chain holds %d tokens of messages after the roll, above the target %d", left, target)
	}
}

// claudeLines writes Claude Code lines c<from>… to c<to>, each the child
// of the one before (the first of parent), 1000 tokens each.
func claudeLines(b *strings.Builder, from, to int, parent string, sidechain bool) {
	for i := from; i <= to; i++ {
		id := fmt.Sprintf("c%07d", i)
		text := strings.Repeat(fmt.Sprintf("w%02d ", i%100), 1000)
		if i%2 == 1 {
			fmt.Fprintf(b, `{"parentUuid":%s,"isSidechain":%t,"type":"user","message":{"role":"user","content":%q},"uuid":%q,"timestamp":"2026-03-08T12:00:00.000Z","sessionId":"s"}`+"\n", parent, sidechain, text, id)
		} else {
			fmt.Fprintf(b, `{"parentUuid":%s,"isSidechain":%t,"type":"assistant","message":{"id":"msg_%d","role":"assistant","content":[{"type":"text","text":%q}]},"uuid":%q,"timestamp":"2026-03-08T12:00:00.000Z","sessionId":"s"}`+"\n", parent, sidechain, i, text, id)
		}
		parent = strconv.Quote(id)
	}
}

// TestRollClaudeSidechains: a subagent's file, every line a sidechain's,
// rolls again after more turns (roll's own lines are a sidechain's too,
// and never the chain's start); in a main file whose chain cannot be read
// (its first line names a parent elsewhere), a subagent's lines at the end
// are not the main thread's: --min-keep counts the main thread's messages,
// and the summary takes no sidechain uuid.
func TestRollClaudeSidechains(t *testing.T) {
	opt := roll.Defaults()
	opt.Window, opt.MinKeep, opt.Store = 20000, 4, new(blobstore.Mem)
	const snapshot = `{"type":"file-history-snapshot","messageId":"x","snapshot":{"messageId":"x","trackedFileBackups":{},"timestamp":"2026-03-08T12:00:00.000Z"},"isSnapshotUpdate":false}` + "\n"
	var b strings.Builder
	b.WriteString(snapshot)
	claudeLines(&b, 1, 20, "null", true)
	first := rollAndCheck(t, "agent", []byte(b.String()), opt)
	if strings.Contains(string(first), `"isSidechain":false`) {
		t.Error("roll wrote lines that are not a sidechain's into a subagent's file")
	}
	last := strings.Split(strings.TrimSpace(string(first)), "\n")
	var tail struct{ UUID string }
	json.Unmarshal([]byte(last[len(last)-1]), &tail)
	b.Reset()
	b.Write(first)
	claudeLines(&b, 21, 40, strconv.Quote(tail.UUID), true)
	if st, err := roll.Run(context.Background(), "agent2", strings.NewReader(b.String()), io.Discard, opt); err != nil || !st.Rolled {
		t.Fatalf("the second roll of the subagent's file: %+v, %v", st, err)
	}
	second := rollAndCheck(t, "agent2", []byte(b.String()), opt)
	claudeChain(t, second)

	b.Reset()
	b.WriteString(snapshot)
	claudeLines(&b, 1, 20, `"elsewhere"`, false)
	claudeLines(&b, 21, 26, `"c0000020"`, true) // a subagent's run, at the end
	out := rollAndCheck(t, "main", []byte(b.String()), opt)
	for _, id := range []string{"c0000017", "c0000018", "c0000019", "c0000020"} {
		if n := strings.Count(string(out), `"uuid":"`+id+`"`); n != 1 {
			t.Errorf("main message %s is in the rolled file %d times, want once (--min-keep)", id, n)
		}
	}
	if strings.Contains(string(out), `"isCompactSummary":true,"uuid":"c00000`) {
		summary := out[bytes.Index(out, []byte(`"isCompactSummary":true,"uuid":"`)):]
		if id := string(summary[32:40]); id > "c0000020" {
			t.Errorf("the summary took the uuid of sidechain line %s", id)
		}
	}
}

// piContext is what pi gives the model from a v2+ session, as its
// buildSessionContext does: the path from the last entry up its
// parentIds; cut at the latest compaction on it, the compaction's summary,
// the path's entries from its first kept one on and what follows. It
// returns the ids of the compaction and the messages in context, and of
// the settings entries on the path; the path must reach the root.
func piContext(t *testing.T, data []byte) (messages, settings []string) {
	t.Helper()
	type entry struct {
		ID, Type, FirstKeptEntryID string
		ParentID                   *string
	}
	byID := map[string]entry{}
	var last entry
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e entry
		if json.Unmarshal([]byte(l), &e) != nil || e.Type == "session" {
			continue
		}
		if _, dup := byID[e.ID]; dup {
			t.Fatalf("id %s twice in the file", e.ID)
		}
		byID[e.ID], last = e, e
	}
	var path []entry
	for e := last; ; {
		path = append(path, e)
		if e.ParentID == nil {
			break
		}
		p, ok := byID[*e.ParentID]
		if !ok {
			t.Fatalf("the path from the last entry stops at %s: its parent %s is not in the file", e.ID, *e.ParentID)
		}
		if len(path) > len(byID) {
			t.Fatal("the path loops")
		}
		e = p
	}
	slices.Reverse(path)
	from, c := 0, -1
	for i, e := range path {
		if e.Type == "compaction" {
			c, from = i, i+1
		}
	}
	for i := 0; i < c; i++ {
		if path[i].ID == path[c].FirstKeptEntryID {
			from = i
			break
		}
	}
	if c >= 0 {
		messages = append(messages, path[c].ID)
	}
	for i, e := range path {
		switch {
		case (e.Type == "message" || e.Type == "custom_message") && i >= from:
			messages = append(messages, e.ID)
		case e.Type == "thinking_level_change" || e.Type == "model_change":
			settings = append(settings, e.ID)
		}
	}
	return messages, settings
}

// TestRollPiBackIntoTheKeptRange: after a roll, a pi user goes back to a
// message roll kept (before its compaction, which is appended last) and
// goes on from there. The path then passes the marker but not the
// compaction: the model gets the marker's note, and the usage recorded on
// the kept messages counted the messages since evicted. The gauge and a
// second roll take those off, as roll's own figure for the compaction
// does, and add the note.
func TestRollPiBackIntoTheKeptRange(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	parent := "null"
	for i := 1; i <= 30; i++ {
		id := fmt.Sprintf("m%07d", i)
		text := strings.Repeat(fmt.Sprintf("w%02d ", i), 500) // 500 tokens
		if i%2 == 1 {
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":"user","content":[{"type":"text","text":%q}]}}`+"\n", id, parent, i, text)
		} else {
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"text","text":%q}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop"}}`+"\n", id, parent, i, text, 6300*i, 6300*i)
		}
		parent = strconv.Quote(id)
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep, opt.Target = 200000, 6, 0.01 // all but m25..m30 go
	opt.Store = new(blobstore.Mem)                        // both rolls'
	rolled := rollAndCheck(t, "pi", []byte(b.String()), opt)
	var marker, note string
	evicted, scale := 0, 0.0
	for _, l := range strings.Split(string(rolled), "\n") {
		var e struct {
			ID, Type, Content, CustomType string
			Rolled                        struct {
				EvictedTokens int     `json:"evicted_tokens"`
				Scale         float64 `json:"scale"`
			} `json:"_rolled"`
		}
		if json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		if e.Rolled.Scale != 0 {
			scale = e.Rolled.Scale // the note's: what an estimated token is worth
		}
		if e.CustomType == "bs:evicted" {
			if e.Type != "custom_message" {
				t.Fatalf("the marker is a %s entry: pi keeps it out of every context", e.Type)
			}
			evicted = e.Rolled.EvictedTokens
			marker, note = e.ID, e.Content
		}
	}
	// The usage here grows 12.6 tokens for each estimated one, so a token
	// is worth the most the calibration allows.
	if want := gauge.Worth(24*500, scale); scale != 2 || evicted != want {
		t.Fatalf("the marker says %d tokens evicted at a worth of %v, want 24 messages' 12000 estimated, worth 2 each", evicted, scale)
	}
	const prompt = "a prompt of forty characters, give or t" // 10 tokens
	// Going back to the first kept message (it hangs from the bridge)
	// resumes with the model the evicted answers named.
	edit := append(slices.Clip(rolled), `{"type":"message","id":"n0000000","parentId":"m0000024","timestamp":"2026-03-08T13:00:00.000Z","message":{"role":"user","content":"again"}}`+"\n"...)
	if model, answers := piModel(edit); answers > 0 || model != "anthropic/claude-sonnet-4-5" {
		t.Errorf("going back to the first kept message: pi resumes with %q (%d answers on the path), want anthropic/claude-sonnet-4-5", model, answers)
	}
	branched := append(slices.Clip(rolled), fmt.Sprintf(`{"type":"message","id":"n0000001","parentId":"m0000027","timestamp":"2026-03-08T13:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":%q}]}}`+"\n", prompt)...)
	messages, _ := piContext(t, branched)
	if len(messages) != 5 || messages[0] != marker || messages[4] != "n0000001" {
		t.Fatalf("the context after going back: %v, want the marker, m25 to m27 and the prompt", messages)
	}
	// m26's usage less the evicted messages, the note, m27 and the prompt.
	want := 26*6300 - evicted + gauge.CharsPer4{}.Tokens(utf8.RuneCountInString(note)) + 500 + 10
	res, err := gaugeFile(t, branched, gauge.Options{Window: 200000})
	if err != nil || res.Tokens != want || res.Source != "usage" {
		t.Errorf("gauge of the branched file: %d (%s, %v), want %d (usage)", res.Tokens, res.Source, err, want)
	}
	// A second roll reads the same figure, under the trigger: nothing goes.
	st, err := roll.Run(context.Background(), "pi", bytes.NewReader(branched), io.Discard, roll.Options{Window: 200000, Trigger: 0.9, Target: 0.8, MinKeep: 2, Store: new(blobstore.Mem)})
	if err != nil || st.Rolled || st.TokensBefore != want {
		t.Errorf("second roll: rolled %v, tokens before %d (%v), want no roll from %d", st.Rolled, st.TokensBefore, err, want)
	}
	// The branch goes on and rolls in its turn: the first roll's marker
	// and kept entries on the path go with the second range, and restore
	// --all gives the branched file back.
	var more strings.Builder
	parent = `"n0000001"`
	for i := 1; i <= 12; i++ {
		id := fmt.Sprintf("n%07d", i+1)
		fmt.Fprintf(&more, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-08T13:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"text","text":%q}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop"}}`+"\n", id, parent, i, strings.Repeat("v ", 1000), 20000*i, 20000*i)
		parent = strconv.Quote(id)
	}
	opt.MinKeep, opt.Target = 2, 0.5
	twice := rollAndCheck(t, "pi", append(branched, more.String()...), opt)
	if messages, _ := piContext(t, twice); len(messages) != 3 || messages[1] != "n0000012" {
		t.Errorf("the context after the second roll: %v, want its compaction and the last two messages", messages)
	}
}

// gaugeFile is gauge.MeasureFile of data written to a file.
func gaugeFile(t *testing.T, data []byte, opt gauge.Options) (gauge.Result, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gauged.jsonl")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return gauge.MeasureFile(f, opt)
}

// TestRollPiBackOverAnEvictedCompaction: pi compacted once (its summary
// stands for messages 1 to 7, and it keeps 8 on); roll evicts from 8 on,
// that compaction with it. A user who goes back to a kept entry leaves
// roll's compaction off the path: roll's copy of pi's keeps the summary
// there, so messages 1 to 7 stay out of the context.
func TestRollPiBackOverAnEvictedCompaction(t *testing.T) {
	header := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	in := piTurns(header, "null", 1, 10)
	in = append(in, `{"type":"compaction","id":"c0000000","parentId":"m0000010","timestamp":"2026-03-08T12:00:10.500Z","summary":"what messages 1 to 7 said","firstKeptEntryId":"m0000008","tokensBefore":63000}`+"\n"...)
	in = piTurns(in, `"c0000000"`, 11, 30)
	opt := roll.Defaults()
	opt.Window, opt.MinKeep, opt.Trigger, opt.Target = 200000, 6, 0.01, 0.01
	opt.Store = new(blobstore.Mem)
	rolled := rollAndCheck(t, "pi", in, opt)
	back := append(slices.Clip(rolled), `{"type":"message","id":"n0000001","parentId":"m0000026","timestamp":"2026-03-08T13:00:00.000Z","message":{"role":"user","content":"again"}}`+"\n"...)
	messages, _ := piContext(t, back)
	if len(messages) != 5 || slices.Contains(messages, "m0000001") || messages[2] != "m0000025" {
		t.Errorf("context after going back to m26: %v, want pi's summary, the note, m25, m26 and the prompt", messages)
	}
	// The gauge: m26's usage less what roll evicted, plus the note and
	// the prompt.
	var marker struct {
		Content string
		Rolled  struct {
			EvictedTokens int `json:"evicted_tokens"`
		} `json:"_rolled"`
	}
	for _, l := range strings.Split(string(rolled), "\n") {
		if strings.Contains(l, `"customType":"bs:evicted"`) {
			json.Unmarshal([]byte(l), &marker)
		}
	}
	est := gauge.CharsPer4{}
	want := 26*6300 - marker.Rolled.EvictedTokens + est.Tokens(utf8.RuneCountInString(marker.Content)) + est.Tokens(len("again"))
	if res, err := gaugeFile(t, back, gauge.Options{Window: 200000}); err != nil || res.Tokens != want {
		t.Errorf("gauge after going back to m26: %d (%v), want %d", res.Tokens, err, want)
	}
}

// piTurns appends pi messages from..to (odd: a user's, even: an answer
// with usage 6300 a message), the first hanging from parent.
func piTurns(b []byte, parent string, from, to int) []byte {
	for i := from; i <= to; i++ {
		id := fmt.Sprintf("m%07d", i)
		text := strings.Repeat(fmt.Sprintf("w%02d ", i), 500) // 500 tokens
		if i%2 == 1 {
			b = fmt.Appendf(b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":"user","content":[{"type":"text","text":%q}]}}`+"\n", id, parent, i%60, text)
		} else {
			b = fmt.Appendf(b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"text","text":%q}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop"}}`+"\n", id, parent, i%60, text, 6300*i, 6300*i)
		}
		parent = strconv.Quote(id)
	}
	return b
}

// TestRollPiBackAfterTwoRolls: going back to a kept entry after two rolls.
// When the second roll evicted only entries the first kept, an entry it
// kept has usage from before both: the gauge takes off what each evicted.
// When the second range held the first roll's compaction, an entry after
// it has usage from after the first roll: only the second's count. When
// the first compaction stays, on the path back to an entry after it, pi
// keeps the entries from its first kept one, which the second roll
// evicted: the second marker took its id, so they start there, with the
// second note.
func TestRollPiBackAfterTwoRolls(t *testing.T) {
	header := []byte(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	for _, c := range []struct {
		name       string
		more       int    // messages after the first roll
		backTo     string // the kept answer the user goes back to
		both       bool   // its usage predates both rolls
		minKeep    int
		secondKeep int
	}{
		{"second range inside the first's kept entries", 0, "m0000028", true, 8, 4},
		{"second range over the first compaction", 10, "m0000038", false, 6, 4},
		{"back past the first compaction, which stays", 4, "m0000032", false, 8, 6},
	} {
		t.Run(c.name, func(t *testing.T) {
			opt := roll.Defaults()
			opt.Window, opt.MinKeep, opt.Trigger, opt.Target = 200000, c.minKeep, 0.01, 0.01
			opt.Store = new(blobstore.Mem)
			first := rollAndCheck(t, "pi", piTurns(header, "null", 1, 30), opt)
			lines := strings.Split(strings.TrimSpace(string(first)), "\n")
			var compaction struct{ ID string }
			json.Unmarshal([]byte(lines[len(lines)-1]), &compaction)
			grown := piTurns(first, strconv.Quote(compaction.ID), 31, 30+c.more)
			opt.MinKeep = c.secondKeep
			second := rollAndCheck(t, "pi", grown, opt)
			type marker struct {
				ID, Content string
				Rolled      struct {
					EvictedTokens int      `json:"evicted_tokens"`
					Closes        []string `json:"closes"`
				} `json:"_rolled"`
			}
			var markers []marker
			for _, l := range strings.Split(string(second), "\n") {
				var m marker
				if strings.Contains(l, `"customType":"bs:evicted"`) && json.Unmarshal([]byte(l), &m) == nil {
					markers = append(markers, m)
				}
			}
			firstStays := strings.Contains(string(second), `"id":`+strconv.Quote(compaction.ID))
			if len(markers) != 2 || (len(markers[1].Rolled.Closes) == 1) == firstStays {
				t.Fatalf("markers %+v: the second closes the first only when its range held the first's compaction", markers)
			}
			const prompt = "a prompt of forty characters, give or t" // 10 tokens
			back := fmt.Appendf(slices.Clip(second), `{"type":"message","id":"n0000001","parentId":%q,"timestamp":"2026-03-08T13:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":%q}]}}`+"\n", c.backTo, prompt)
			var usage int
			fmt.Sscanf(c.backTo, "m%d", &usage)
			want := 6300*usage + 10
			for i, m := range markers {
				if i == 0 && !c.both {
					continue
				}
				want -= m.Rolled.EvictedTokens - gauge.CharsPer4{}.Tokens(utf8.RuneCountInString(m.Content))
			}
			if res, err := gaugeFile(t, back, gauge.Options{Window: 200000}); err != nil || res.Tokens != want {
				t.Errorf("gauge after going back to %s: %d (%v), want %d", c.backTo, res.Tokens, err, want)
			}
			messages, _ := piContext(t, back)
			switch {
			case c.more > 0 && firstStays:
				// The first compaction's summary, the second note, then
				// m29 on: what the second roll kept.
				if len(messages) != 7 || messages[1] != markers[1].ID || messages[2] != "m0000029" {
					t.Errorf("context after going back past the first compaction: %v, want its summary, the second note and m29 to the prompt", messages)
				}
			case c.more > 0:
				// Roll's copy of the first compaction, which the second
				// range held, then the second note.
				if messages[1] != markers[1].ID || messages[2] != "m0000037" {
					t.Errorf("context after going back: %v, want the first roll's summary, the second note, then m37", messages)
				}
			case messages[0] != markers[0].ID || messages[1] != markers[1].ID:
				t.Errorf("context after going back: %v, want both notes first", messages)
			}
		})
	}
}

// TestRollPiBranch: a pi user went back to message 5 and went on from
// there, and later back to message 15: messages 6 to 8 with a thinking
// level set among them, and 16 to 20, are branches, in the file but not
// in the context. Roll evicts from the context, so the messages it
// counts and keeps are the path's: the context after is the summary and
// the end of the context before, the branch's setting stays off the
// path, and the path reaches the root.
func TestRollPiBranch(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	b.WriteString(`{"type":"thinking_level_change","id":"t0000000","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","thinkingLevel":"high"}` + "\n")
	parent := "t0000000"
	for i := 1; i <= 30; i++ {
		switch i {
		case 7:
			fmt.Fprintf(&b, `{"type":"thinking_level_change","id":"t0000007","parentId":%q,"timestamp":"2026-03-08T12:00:00.000Z","thinkingLevel":"low"}`+"\n", parent)
			parent = "t0000007"
		case 9:
			parent = "m0000005" // the user went back
		case 21:
			parent = "m0000015" // and again
		case 25:
			// A branch written late that forks from message 9, which the
			// roll evicts: it still hangs from the tree after.
			b.WriteString(`{"type":"message","id":"b0000001","parentId":"m0000009","timestamp":"2026-03-08T12:00:24.500Z","message":{"role":"user","content":[{"type":"text","text":"another way"}]}}` + "\n")
		}
		id := fmt.Sprintf("m%07d", i)
		role := []string{"assistant", "user"}[i%2]
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]}}`+"\n", id, parent, i, role, strings.Repeat(fmt.Sprintf("w%02d ", i), 1000))
		parent = id
	}
	in := []byte(b.String())
	before, _ := piContext(t, in)
	if len(before) != 22 {
		t.Fatalf("the test's context holds %d messages, want 22", len(before))
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 22*1000*100/120, 4 // 120%: the target is reached by evicting 8 of the path's messages
	out := rollAndCheck(t, "pi", in, opt)
	after, settings := piContext(t, out)
	if want := before[8:]; !slices.Equal(after[1:], want) {
		t.Errorf("the context after the roll is the summary and %v, want %v", after[1:], want)
	}
	if !slices.Equal(settings, []string{"t0000000"}) {
		t.Errorf("settings on the path %v, want the thinking level set at the start only", settings)
	}
	ids := map[string]bool{}
	var parents []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e struct {
			ID       string
			ParentID *string
			Type     string
		}
		json.Unmarshal([]byte(l), &e)
		if e.Type != "session" {
			ids[e.ID] = true
			if e.ParentID != nil {
				parents = append(parents, *e.ParentID)
			}
		}
	}
	for _, p := range parents {
		if !ids[p] {
			t.Errorf("an entry names %s as its parent, which is not in the rolled file", p)
		}
	}
}

// TestRollKeepsTheModel: pi resumes with the model the last answer or
// model change on the path names. When every answer goes, roll keeps that
// model in a model_change of its own after the marker, or pi would fall
// back to the model set before: at the start, or by a model change kept
// from the range (then roll's goes after it, even when the last message
// hangs from a later kept settings entry, with no bridge to go before).
func TestRollKeepsTheModel(t *testing.T) {
	for _, c := range []struct {
		name                 string
		changeInRange, level bool
	}{
		{"model set at the start", false, false},
		{"model set in the range", true, false},
		{"model set in the range, a thinking level last", true, true},
	} {
		t.Run(c.name, func(t *testing.T) { rollKeepsTheModel(t, c.changeInRange, c.level) })
	}
}

func rollKeepsTheModel(t *testing.T, changeInRange, level bool) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	change := `{"type":"model_change","id":"mc000000","parentId":%q,"timestamp":"2026-03-08T12:00:00.000Z","provider":"openai","modelId":"gpt-old"}` + "\n"
	parent := "mc000000"
	if changeInRange {
		parent = "s0000000"
		b.WriteString(`{"type":"message","id":"s0000000","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":"start"}}` + "\n")
		fmt.Fprintf(&b, change, parent)
		parent = "mc000000"
	} else {
		fmt.Fprintf(&b, strings.Replace(change, "%q", "%s", 1), "null")
	}
	for i := 1; i <= 11; i++ {
		id := fmt.Sprintf("m%07d", i)
		text := strings.Repeat(fmt.Sprintf("w%02d ", i), 500)
		if i == 11 && level {
			fmt.Fprintf(&b, `{"type":"thinking_level_change","id":"tl000000","parentId":%q,"timestamp":"2026-03-08T12:00:10.000Z","thinkingLevel":"high"}`+"\n", parent)
			parent = "tl000000"
		}
		if i%2 == 1 {
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":"user","content":%q}}`+"\n", id, parent, i, text)
		} else {
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":"assistant","content":[{"type":"text","text":%q}],"provider":"anthropic","model":"claude-x","stopReason":"stop"}}`+"\n", id, parent, i, text)
		}
		parent = id
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep, opt.Target = 3000, 1, 0.01 // all but the last message go
	out := rollAndCheck(t, "pi", []byte(b.String()), opt)
	model, assistants := piModel(out)
	if assistants > 0 {
		t.Fatalf("an answer is left on the path: the test evicts them all")
	}
	if model != "anthropic/claude-x" {
		t.Errorf("pi resumes with %s, want the last answer's anthropic/claude-x", model)
	}
}

// piModel is the provider/model pi resumes a session with: the last
// model_change or answer on the path from the last entry; and how many
// answers the path holds.
func piModel(data []byte) (model string, answers int) {
	type entry struct {
		ID, Type, Provider, ModelID string
		ParentID                    *string
		Message                     struct{ Role, Provider, Model string }
	}
	byID := map[string]entry{}
	var last entry
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e entry
		if json.Unmarshal([]byte(l), &e) == nil && e.Type != "session" {
			byID[e.ID], last = e, e
		}
	}
	var path []entry
	for e := last; ; e = byID[*e.ParentID] {
		path = append(path, e)
		if e.ParentID == nil || len(path) > len(byID) {
			break
		}
	}
	for i := len(path) - 1; i >= 0; i-- {
		switch e := path[i]; {
		case e.Type == "model_change":
			model = e.Provider + "/" + e.ModelID
		case e.Message.Role == "assistant":
			model = e.Message.Provider + "/" + e.Message.Model
			answers++
		}
	}
	return model, answers
}

// TestRollPiTreePath: pi builds the context from the path that runs from
// the last entry up its parentIds to the root, applying the settings
// entries on it. After a roll that path must still reach the root and
// pass the settings entries kept from the evicted range (a thinking level
// set early on would otherwise revert).
func TestRollPiTreePath(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	b.WriteString(`{"type":"thinking_level_change","id":"d0000001","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","thinkingLevel":"high"}` + "\n")
	parent := "d0000001"
	for i := 2; i < 14; i++ {
		role := []string{"user", "assistant"}[i%2]
		id := fmt.Sprintf("d%07d", i)
		fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%q,"timestamp":"2026-03-08T12:00:%02d.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]}}`+"\n", id, parent, i, role, strings.Repeat(fmt.Sprintf("w%d ", i), 1500))
		parent = id
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 15000, 4
	out := rollAndCheck(t, "pi", []byte(b.String()), opt)
	type entry struct {
		ID, Type string
		ParentID *string
	}
	byID := map[string]entry{}
	var last entry
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var e struct {
			ID       string  `json:"id"`
			Type     string  `json:"type"`
			ParentID *string `json:"parentId"`
		}
		if json.Unmarshal([]byte(l), &e) != nil || e.Type == "session" {
			continue
		}
		if _, dup := byID[e.ID]; dup {
			t.Fatalf("id %s twice in the rolled file", e.ID)
		}
		byID[e.ID] = entry{e.ID, e.Type, e.ParentID}
		last = byID[e.ID]
	}
	onPath := map[string]bool{}
	for e := last; ; {
		onPath[e.ID] = true
		if e.ParentID == nil {
			break
		}
		p, ok := byID[*e.ParentID]
		if !ok {
			t.Fatalf("the path from the last entry stops at %s: its parent %s is not in the file", e.ID, *e.ParentID)
		}
		if onPath[p.ID] {
			t.Fatal("the path loops")
		}
		e = p
	}
	if !onPath["d0000001"] {
		t.Error("the thinking level change is not on the path")
	}
	if last.Type != "compaction" || !onPath["d0000013"] {
		t.Errorf("the path runs from %+v and passes the last message: %v", last, onPath["d0000013"])
	}
}

// TestRollTwiceGaugeAgrees: a Codex session rolled twice, without the
// window its token_count events state, gauges alike from the end of the
// file and as a stream: the model named before the second note sets the
// window in both.
func TestRollTwiceGaugeAgrees(t *testing.T) {
	f := filepath.Join(corpustest.Dir(), "codex", "codemie__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Skip("corpus not present")
	}
	in := regexp.MustCompile(`,"model_context_window":[0-9]+`).ReplaceAll(data, nil)
	store, _ := blobstore.OpenLocal(t.TempDir())
	roll1 := func(b []byte, window int, now time.Time) []byte {
		opt := roll.Defaults()
		opt.Store, opt.Window, opt.Now = store, window, now
		var out bytes.Buffer
		if _, err := roll.Run(context.Background(), "cx", bytes.NewReader(b), &out, opt); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	}
	out := roll1(roll1(in, 140000, time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)), 100000, time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
	streamed, err := gauge.Measure("cx", bytes.NewReader(out), nil, gauge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromEnd, err := gaugeFile(t, out, gauge.Options{})
	if err != nil || fromEnd != streamed {
		t.Errorf("from the end %+v (%v), streamed %+v", fromEnd, err, streamed)
	}
}

// TestRollReadsKeptEntriesAsTheGauge: the context roll starts from counts
// a pi compaction's kept entries exactly as the gauge does, within its
// lookback and not beyond it, when roll reads every line (--strict); as
// the gauge, it counts no blank line's bytes against the lookback.
func TestRollReadsKeptEntriesAsTheGauge(t *testing.T) {
	for _, c := range []struct {
		words, blanks int
		counted       bool
	}{
		{2000, 0, true},    // four kept entries of 4 KB
		{600000, 0, false}, // of 1.2 MB: past the lookback
		{524000, 20, true}, // just within it, with blank lines that count for nothing
	} {
		words := c.words
		var b strings.Builder
		b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
		for i := range 6 {
			if i == 4 {
				b.WriteString(strings.Repeat(strings.Repeat(" ", 99)+"\n", c.blanks))
			}
			parent := "null"
			if i > 0 {
				parent = fmt.Sprintf(`"m%07d"`, i-1)
			}
			fmt.Fprintf(&b, `{"type":"message","id":"m%07d","parentId":%s,"timestamp":"2026-03-08T12:00:0%d.000Z","message":{"role":"user","content":[{"type":"text","text":%q}]}}`+"\n", i, parent, i, strings.Repeat("w ", words))
		}
		b.WriteString(`{"type":"compaction","id":"c0000000","parentId":"m0000005","timestamp":"2026-03-08T12:01:00.000Z","summary":"before","firstKeptEntryId":"m0000002","tokensBefore":20000}` + "\n")
		in := []byte(b.String())
		want, err := gaugeFile(t, in, gauge.Options{Window: 100_000_000})
		if err != nil {
			t.Fatal(err)
		}
		opt := roll.Defaults()
		opt.Window, opt.Strict, opt.Store = 100_000_000, true, new(blobstore.Mem)
		st, err := roll.Run(context.Background(), "pi", bytes.NewReader(in), io.Discard, opt)
		if counted := want.Tokens > 4*words/2; counted != c.counted {
			t.Fatalf("kept entries of %d words each: the gauge reads %d tokens; the test expects them counted only within the lookback", words, want.Tokens)
		}
		if err != nil || st.Rolled || st.TokensBefore != want.Tokens {
			t.Errorf("kept entries of %d words each: roll read %d tokens (rolled %v, %v), the gauge %d", words, st.TokensBefore, st.Rolled, err, want.Tokens)
		}
	}
}

// TestRollTwice: a second roll of an OpenClaw session starts from the
// entries the first one kept (they stand before its compaction), and the
// two rolls undo together.
func TestRollTwice(t *testing.T) {
	store, _ := blobstore.OpenLocal(t.TempDir())
	opt := roll.Defaults()
	opt.Store = store
	first := rollAndCheck(t, "syn", synthetic(70), opt)
	// The agent goes on: append turns after the compaction, the first a
	// child of it, as pi appends to its leaf.
	var compaction struct{ ID string }
	firstLines := strings.Split(strings.TrimSpace(string(first)), "\n")
	json.Unmarshal([]byte(firstLines[len(firstLines)-1]), &compaction)
	more := strings.SplitAfter(string(synthetic(110)), "\n")
	more[2+4*70] = regexp.MustCompile(`"parentId":"[^"]*"`).ReplaceAllString(more[2+4*70], `"parentId":"`+compaction.ID+`"`)
	grown := append([]byte(nil), first...)
	for _, l := range more[2+4*70:] {
		grown = append(grown, l...)
	}
	second := rollAndCheck(t, "syn2", grown, opt)
	// The first roll's compaction stood inside the second range and went
	// with it: a copy after the marker would name a first kept entry that
	// is gone.
	if n := strings.Count(string(second), `"_rolled":{"by":"bs roll","tokens"`); n != 1 {
		t.Errorf("%d roll notes, want the second roll's alone", n)
	}
	// Both rolls undone give the whole session back.
	var back bytes.Buffer
	if _, _, err := restore.Run(context.Background(), "x", bytes.NewReader(second), &back, restore.Options{All: true, Store: store}); err != nil {
		t.Fatal(err)
	}
	if back.String() != strings.Join(more, "") {
		t.Error("restore --all after two rolls is not the whole session")
	}
}

// TestExtractThenRoll: values extracted before a roll come back with the
// range that held them.
func TestExtractThenRoll(t *testing.T) {
	ctx := context.Background()
	store, _ := blobstore.OpenLocal(t.TempDir())
	in := synthetic(70)
	eopt := extract.Defaults()
	eopt.Store = store
	var lean bytes.Buffer
	if _, err := extract.Run(ctx, "x", bytes.NewReader(in), &lean, eopt); err != nil {
		t.Fatal(err)
	}
	ropt := roll.Defaults()
	ropt.Store, ropt.Window = store, 40000
	var rolled, back bytes.Buffer
	st, err := roll.Run(ctx, "x", bytes.NewReader(lean.Bytes()), &rolled, ropt)
	if err != nil || !st.Rolled {
		t.Fatalf("roll: %v %+v", err, st)
	}
	if _, _, err := restore.Run(ctx, "x", bytes.NewReader(rolled.Bytes()), &back, restore.Options{All: true, Store: store}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), in) {
		t.Fatal("extract | roll | restore --all differs from the input")
	}
}

// TestParallelCalls: two calls before their results stay one unit.
func TestParallelCalls(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"timestamp":"t","type":"session_meta","payload":{"id":"s"}}` + "\n")
	for i := 0; i < 12; i++ {
		big := strings.Repeat("x", 4000)
		fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"go %d"}]}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec","arguments":"{}","call_id":"a%d"}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call","name":"exec","arguments":"{}","call_id":"b%d"}}`+"\n", i)
		fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"a%d","output":"%s"}}`+"\n", i, big)
		fmt.Fprintf(&b, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"b%d","output":"%s"}}`+"\n", i, big)
	}
	for _, minKeep := range []int{0, 3, 4, 7} {
		opt := roll.Defaults()
		opt.Window, opt.MinKeep = 25000, minKeep
		rollAndCheck(t, "par", []byte(b.String()), opt)
	}
}

// TestStoreFailurePassesThrough: if the range cannot be stored, the input
// comes out unchanged and the error is reported.
func TestStoreFailurePassesThrough(t *testing.T) {
	in := synthetic(70)
	opt := roll.Defaults()
	opt.Store = failingStore{}
	var out bytes.Buffer
	if _, err := roll.Run(context.Background(), "x", bytes.NewReader(in), &out, opt); err == nil {
		t.Fatal("no error")
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Fatal("output differs from the input after a store failure")
	}
}

type failingStore struct{ blobstore.Store }

func (failingStore) Put(context.Context, []byte) (blobstore.Digest, error) {
	return blobstore.Digest{}, fmt.Errorf("disk full")
}

// TestCommitFailurePassesThrough: with a store that batches its syncs
// (as the local one does), a failed commit also leaves the input as it was
// and puts no evicted entry in the index: the chunks may not be durable.
func TestCommitFailurePassesThrough(t *testing.T) {
	in := synthetic(70)
	opt := roll.Defaults()
	st := &failingCommit{Store: new(blobstore.Mem)}
	opt.Store = st
	ix := new(countingIndex)
	opt.Index = ix
	var out bytes.Buffer
	if _, err := roll.Run(context.Background(), "x", bytes.NewReader(in), &out, opt); err == nil {
		t.Fatal("no error")
	}
	if !bytes.Equal(out.Bytes(), in) {
		t.Fatal("output differs from the input after a failed commit")
	}
	if st.pending.Load() == 0 || ix.kept != 0 {
		t.Errorf("%d chunks went to the batch and %d entries stayed in the index; want some and none", st.pending.Load(), ix.kept)
	}
}

// countingIndex counts the entries it was given and not then taken back.
type countingIndex struct{ kept int }

func (ix *countingIndex) WantsText(context.Context, blobstore.Digest) bool { return true }
func (ix *countingIndex) Add(roll.Evicted)                                 { ix.kept++ }
func (ix *countingIndex) Discard()                                         { ix.kept = 0 }

// recordingIndex keeps the entries it is given.
type recordingIndex struct {
	wantText bool
	rows     []roll.Evicted
}

func (ix *recordingIndex) WantsText(context.Context, blobstore.Digest) bool { return ix.wantText }
func (ix *recordingIndex) Add(e roll.Evicted)                               { ix.rows = append(ix.rows, e) }
func (ix *recordingIndex) Discard()                                         { ix.rows = nil }

// TestEvictedRowsPlaceTheirLines: each evicted message's row names the
// bytes of its line in the chunk stored, so an index can take the text from
// the store later instead of from the roll; the text, when the index wants
// it, is that line's.
func TestEvictedRowsPlaceTheirLines(t *testing.T) {
	in := synthetic(70)
	for _, wantText := range []bool{true, false} {
		opt := roll.Defaults()
		store := new(blobstore.Mem)
		ix := &recordingIndex{wantText: wantText}
		opt.Store, opt.Index = store, ix
		opt.Window = 4000
		var out bytes.Buffer
		st, err := roll.Run(context.Background(), "x", bytes.NewReader(in), &out, opt)
		if err != nil || !st.Rolled {
			t.Fatalf("rolled %v, %v", st.Rolled, err)
		}
		if len(ix.rows) != st.Messages {
			t.Fatalf("%d rows for %d evicted messages", len(ix.rows), st.Messages)
		}
		for _, r := range ix.rows {
			d, err := blobstore.ParseDigest(r.Blob)
			if err != nil {
				t.Fatal(err)
			}
			chunk, err := store.Get(context.Background(), d)
			if err != nil {
				t.Fatal(err)
			}
			body := chunk[r.At : r.At+int64(r.Len)]
			if !bytes.Contains(in, append(append([]byte{'\n'}, body...), '\n')) || !bytes.Contains(body, []byte(`"id":"`+r.EntryID+`"`)) {
				t.Fatalf("row %s places %q", r.EntryID, body)
			}
			switch {
			case wantText && !bytes.Equal(r.Text, roll.EntryTextJSON(body)):
				t.Fatalf("row %s: text %s, want %s", r.EntryID, r.Text, roll.EntryTextJSON(body))
			case !wantText && r.Text != nil:
				t.Fatalf("row %s: text %s made for an index that takes it from the store", r.EntryID, r.Text)
			}
		}
	}
}

type failingCommit struct {
	blobstore.Store
	pending atomic.Int32 // chunks are stored on several goroutines
}

func (s *failingCommit) PutPending(context.Context, blobstore.Digest, []byte) error {
	s.pending.Add(1)
	return nil
}

func (*failingCommit) Commit(context.Context) error { return fmt.Errorf("sync failed") }

// fuzzDialects numbers the dialects for the fuzzer as the old int enum did
// (0 auto), so the seeds keep meaning what they meant.
var fuzzDialects = []transcript.Dialect{nil, transcript.OpenClaw, transcript.ClaudeCode, transcript.Codex, transcript.BrainSurgeon, transcript.Generic}

// FuzzRollRoundTrip: whatever the input, a roll that fires is undone byte
// for byte by restore --all, and never panics.
func FuzzRollRoundTrip(f *testing.F) {
	f.Add(synthetic(3), uint8(0), uint8(1))
	f.Add([]byte(`{"role":"user","content":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}`+"\n"+`{"role":"assistant","content":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb","tool_calls":[{"id":"x","function":{"name":"f","arguments":"{}"}}]}`+"\n"+`{"role":"tool","tool_call_id":"x","content":"cccccccccccccccccccccccc"}`+"\n"+`{"role":"user","content":"dd"}`), uint8(5), uint8(1))
	f.Add([]byte(`{"uuid":"a","type":"user","message":{"content":"hello there"}}`+"\n"+`{"type":"progress"}`+"\n"+`{"uuid":"b","type":"assistant","message":{"id":"m","content":[{"type":"tool_use","id":"t","name":"Bash","input":{}}]}}`+"\n"+`{"uuid":"c","type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"out"}]}}`+"\n"+`{"uuid":"d","type":"user","message":{"content":"bye"}}`), uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, in []byte, format, minKeep uint8) {
		for _, m := range []string{"_rolled", "_evicted", "_extracted", "extracted-"} {
			if bytes.Contains(in, []byte(m)) {
				return // output of bs, not an original
			}
		}
		ctx := context.Background()
		store := new(blobstore.Mem)
		opt := roll.Defaults()
		opt.Store, opt.Window, opt.Trigger, opt.Target = store, 40, 0.01, 0.005
		opt.MinKeep = int(minKeep % 4)
		opt.Format = fuzzDialects[format%6]
		opt.Now = time.Date(2026, 11, 22, 5, 0, 0, 0, time.UTC)
		var out, back bytes.Buffer
		if _, err := roll.Run(ctx, "fuzz", bytes.NewReader(in), &out, opt); err != nil {
			t.Fatalf("roll: %v", err)
		}
		if _, _, err := restore.Run(ctx, "fuzz", bytes.NewReader(out.Bytes()), &back, restore.Options{All: true, Store: store, Format: opt.Format}); err != nil {
			t.Fatalf("restore: %v", err)
		}
		if !bytes.Equal(back.Bytes(), in) {
			t.Fatalf("restore --all after roll differs\n in: %q\nout: %q\nback: %q", in, out.Bytes(), back.Bytes())
		}
	})
}

// checkNoteShape: the note takes the runtime's own compaction shape.
func checkNoteShape(t *testing.T, dialect string, out []byte) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	decode := func(i int) map[string]any {
		var m map[string]any
		json.Unmarshal([]byte(lines[i]), &m)
		return m
	}
	marker := -1
	for i, l := range lines {
		if strings.Contains(l, `"_evicted":{`) {
			marker = i
		}
	}
	if marker < 0 {
		t.Fatal("no marker line")
	}
	m := decode(marker)
	switch dialect {
	case "claude-code":
		next := decode(marker + 1)
		if m["type"] != "system" || m["subtype"] != "compact_boundary" || m["uuid"] == nil || next["isCompactSummary"] != true || next["parentUuid"] != m["uuid"] {
			t.Errorf("Claude Code note is not a compact boundary plus summary: %v / %v", m, next)
		}
	case "codex":
		p, _ := m["payload"].(map[string]any)
		if m["type"] != "compacted" || p["message"] == nil || m["timestamp"] == nil {
			t.Errorf("Codex note is not a compacted item: %v", m)
		}
	case "openclaw":
		last := decode(len(lines) - 1)
		if m["type"] != "custom" || last["type"] != "compaction" || last["summary"] == nil || last["tokensBefore"] == nil ||
			(last["firstKeptEntryId"] == nil && last["firstKeptEntryIndex"] == nil) {
			t.Errorf("OpenClaw note is not a custom marker plus a compaction entry: %v / %v", m, last)
		}
	}
}

func chat(n, from int, blankEvery int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"role":"user","content":"m%03d %s"}`+"\n", i, strings.Repeat("y", 395))
		if blankEvery > 0 && i%blankEvery == 0 {
			b.WriteString("\n") // blank lines count as lines of the note's scope
		}
	}
	return b.String()
}

// TestScopeCountsEveryLine: after a roll, text appended later counts in
// full, blank lines in the kept part notwithstanding, and a second roll's
// note is not hidden by the first one's scope: file and pipe agree.
func TestScopeCountsEveryLine(t *testing.T) {
	ctx := context.Background()
	store, _ := blobstore.OpenLocal(t.TempDir())
	opt := roll.Defaults()
	opt.Store, opt.Window, opt.MinKeep = store, 2000, 4
	gaugeBoth := func(b []byte) int {
		res, _ := gauge.Measure("x", bytes.NewReader(b), nil, gauge.Options{Window: opt.Window})
		fres, _ := gaugeFile(t, b, gauge.Options{Window: opt.Window})
		if fres.Tokens != res.Tokens {
			t.Errorf("file reads %d tokens, pipe %d", fres.Tokens, res.Tokens)
		}
		return res.Tokens
	}
	var out bytes.Buffer
	if st, err := roll.Run(ctx, "x", strings.NewReader(chat(20, 0, 3)), &out, opt); err != nil || !st.Rolled {
		t.Fatalf("roll: %v %+v", err, st)
	}
	before := gaugeBoth(out.Bytes())
	grown := append(out.Bytes(), chat(3, 100, 0)...) // 3 × 100 tokens
	if got := gaugeBoth(grown); got != before+300 {
		t.Errorf("after appending 300 tokens the gauge reads %d, want %d", got, before+300)
	}
	// Roll the grown file again.
	more := append(grown, chat(10, 200, 0)...)
	var again bytes.Buffer
	if st, err := roll.Run(ctx, "x", bytes.NewReader(more), &again, opt); err != nil || !st.Rolled {
		t.Fatalf("second roll: %v %+v", err, st)
	} else if got := gaugeBoth(again.Bytes()); got != st.TokensAfter {
		t.Errorf("after the second roll the gauge reads %d, roll aimed for %d", got, st.TokensAfter)
	}
}

// TestUnfinishedLastLine: a last line cut short, without its newline (an
// agent still writing it), is never evicted, even with --min-keep 0, and
// stays last.
func TestUnfinishedLastLine(t *testing.T) {
	in := append(synthetic(70), `{"type":"message","id":"ffff0001","parentId":"00000454","timestamp":"2026-03-08T12:0`...)
	opt := roll.Defaults()
	opt.MinKeep = 0
	out := rollAndCheck(t, "open", in, opt)
	if !bytes.HasSuffix(out, in[bytes.LastIndexByte(in, '\n'):]) {
		t.Error("the unfinished last line did not stay last")
	}
}

// TestLastLineWithoutNewline: a whole last entry without its line feed is
// pi's leaf. The compaction goes after it, as pi would append it (else pi
// would never see it), so the entry gets a line feed, which restore takes
// away again.
func TestLastLineWithoutNewline(t *testing.T) {
	in := bytes.TrimSuffix(synthetic(70), []byte("\n"))
	opt := roll.Defaults()
	opt.Store = new(blobstore.Mem)
	out := rollAndCheck(t, "whole", in, opt) // restore --all gives in back
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	last := string(in[bytes.LastIndexByte(in, '\n')+1:])
	if len(lines) < 2 || lines[len(lines)-2] != last || !strings.Contains(lines[len(lines)-1], `"type":"compaction"`) {
		t.Fatalf("the rolled file ends with %.80q and %.80q; want the last entry, then the compaction", lines[len(lines)-2], lines[len(lines)-1])
	}
	if messages, _ := piContext(t, out); len(messages) < 2 || !strings.Contains(last, messages[len(messages)-1]) {
		t.Errorf("pi's context %v does not end with the last entry", messages)
	}
	// The agent goes on after the roll: the line feed roll added is now
	// inside the file and stays there.
	grown := append(append([]byte(nil), out...), `{"type":"message","id":"ffff0002","parentId":"x","timestamp":"2026-03-08T13:00:00.000Z","message":{"role":"user","content":"more"}}`+"\n"...)
	var back bytes.Buffer
	if _, _, err := restore.Run(context.Background(), "g", bytes.NewReader(grown), &back, restore.Options{All: true, Store: opt.Store}); err != nil {
		t.Fatal(err)
	}
	if want := string(in) + "\n" + `{"type":"message","id":"ffff0002"`; !strings.HasPrefix(back.String(), want) {
		t.Errorf("restore --all of the grown file does not give the input and the new line after a line feed")
	}
	// Rolled again with nothing appended: the second compaction follows
	// the first, and the line feed still goes (rollAndCheck restores).
	opt.Target, opt.Trigger = 0.3, 0.5
	again := rollAndCheck(t, "whole2", out, opt)
	if strings.Count(string(again), `"type":"compaction"`) != 2 {
		t.Fatalf("the second roll wrote no compaction")
	}
}

// TestSpendRecordsLeaveTheChain: the spend records a roll leaves in a
// Claude Code session change nothing of the chain Claude Code loads from
// the last line: the lines in its context are the same with them and
// without them.
func TestSpendRecordsLeaveTheChain(t *testing.T) {
	records := 0
	for _, f := range corpustest.Files(t, "claude-code/*.jsonl") {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		opt := roll.Defaults()
		opt.Trigger, opt.Target, opt.MinKeep, opt.Store = 0.01, 0.005, 4, new(blobstore.Mem)
		var out bytes.Buffer
		if _, err := roll.Run(context.Background(), f, bytes.NewReader(in), &out, opt); err != nil {
			t.Fatal(err)
		}
		var nodesWith, nodesWithout []transcript.ChainNode
		var p transcript.Parser
		for _, line := range strings.Split(out.String(), "\n") {
			tr, err := p.Parse([]byte(line))
			if err != nil {
				continue
			}
			n := transcript.ChainNodeOf(tr, transcript.ClaudeCode)
			nodesWith = append(nodesWith, n)
			if tr.Get(0, transcript.SpentField) >= 0 {
				records++
				continue
			}
			nodesWithout = append(nodesWithout, n)
		}
		// The chain is of uuids: the lines that have one, on it.
		chain := func(nodes []transcript.ChainNode) []string {
			on := transcript.ChainContext(nodes)
			var ids []string
			for i, n := range nodes {
				if transcript.GivenID(n.ID) && (on == nil || on[i]) {
					ids = append(ids, n.ID)
				}
			}
			return ids
		}
		if a, b := chain(nodesWith), chain(nodesWithout); !slices.Equal(a, b) {
			t.Errorf("%s: the chain holds %d lines with the records, %d without", filepath.Base(f), len(a), len(b))
		}
	}
	if records == 0 {
		t.Fatal("no spend record written: the test checks nothing")
	}
}

// TestRollNoteWithoutIndex: rolling without the search index is seed 004's
// fallback, and the note says how to get the evicted text back instead of
// promising a search that cannot find it.
func TestRollNoteWithoutIndex(t *testing.T) {
	out := rollAndCheck(t, "syn", synthetic(70), roll.Defaults())
	s := string(out)
	if !strings.Contains(s, "not indexed for search") || !strings.Contains(s, "Restore with: bs restore --all") || strings.Contains(s, "searchable via") {
		t.Errorf("the note of an unindexed roll does not say how to get the text back: %s", s[strings.LastIndex(s, "[Context rolled"):])
	}
}

// TestRollRangeByTime: the evicted range runs from the earliest time the
// evicted entries carry to the latest, whatever their order in the file
// (seed 004: first and last timestamp), and a generic chat line's
// timestamp is one.
func TestRollRangeByTime(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"role":"system","content":"You are helpful."}` + "\n")
	for i := 0; i < 40; i++ {
		// Written backwards, as the BrainSurgeon fixtures are.
		fmt.Fprintf(&b, `{"role":"%s","content":"%s","timestamp":"2026-02-21T13:%02d:06+00:00"}`+"\n",
			[]string{"user", "assistant"}[i%2], strings.Repeat("word ", 200), 59-i)
	}
	opt := roll.Defaults()
	opt.Window, opt.MinKeep = 10000, 4
	out := string(rollAndCheck(t, "gen", []byte(b.String()), opt))
	note := out[strings.Index(out, "[Context rolled"):]
	if !strings.Contains(note, "Evicted range: 2026-02-21T13:") || strings.Contains(note, "line ") {
		t.Fatalf("note %s", note[:200])
	}
	var first, last string
	if _, err := fmt.Sscanf(note[strings.Index(note, "Evicted range: "):], "Evicted range: %s to %s", &first, &last); err != nil {
		t.Fatal(err)
	}
	last = strings.TrimSuffix(last, "]")
	if first >= last {
		t.Errorf("evicted range %s to %s runs backwards", first, last)
	}
	if last != "2026-02-21T13:59:06+00:00" {
		t.Errorf("the range ends at %s; the first line, evicted, is the latest", last)
	}
}
