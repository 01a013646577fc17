package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/agent"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/xdg"
)

// mcpSession is an OpenClaw session whose k1 (a text and a bash command)
// and r1 (a tool result) are old and large enough to be extracted.
func mcpSession() string {
	plan := strings.Repeat("Here is my plan, in detail, before I run anything. ", 12)
	cmd := strings.Repeat("grep -rn TODO ./cmd ./filters | sort | uniq -c; ", 12)
	out := strings.Repeat("cmd/bs/app.go:12: TODO tidy the flags\\n", 20)
	lines := []string{
		`{"type":"session","version":3,"id":"ee000000-0000-4000-8000-000000000001","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}`,
		`{"type":"message","id":"k1","parentId":null,"timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"assistant","content":[{"type":"text","text":"` + plan + `"},{"type":"toolCall","id":"call_1","name":"bash","arguments":{"command":"` + cmd + `"}}],"stopReason":"toolUse","timestamp":1772971201000}}`,
		`{"type":"message","id":"r1","parentId":"k1","timestamp":"2026-03-08T12:00:02.000Z","message":{"role":"toolResult","toolCallId":"call_1","toolName":"bash","content":[{"type":"text","text":"` + out + `"}],"isError":false,"timestamp":1772971202000}}`,
	}
	for i := 1; i <= 3; i++ {
		lines = append(lines, fmt.Sprintf(`{"type":"message","id":"u%d","parentId":"r1","timestamp":"2026-03-08T12:00:0%d.000Z","message":{"role":"user","content":"next %d","timestamp":1772971203000}}`, i, i+2, i))
	}
	return strings.Join(lines, "\n") + "\n"
}

// mcpFixture extracts mcpSession into a file in a fresh store and index,
// and connects an SDK client to bs's MCP server over in-memory transports.
func mcpFixture(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	t.Setenv("BS_STORE", filepath.Join(dir, "store"))
	t.Setenv("BS_NOW", "2026-02-20T17:30:00Z")
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "config"))
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(mcpSession()), 0o600); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	if code := run([]string{"bs", "extract", "--types", "text,tool_call,tool_result", "-i", "--force", path}, nil, io.Discard, &stderr); code != 0 {
		t.Fatalf("extract: exit %d: %s", code, stderr.String())
	}
	store, err := blobstore.OpenLocal(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	env := agent.Env{
		Sessions: agent.Sessions{File: path},
		Store:    store,
		Now:      func() time.Time { return time.Date(2026, 2, 20, 17, 30, 0, 0, time.UTC) },
		Rewrite: func(ctx context.Context, p string, edit agent.EditFunc) error {
			return rewriteWhenQuiet(ctx, inplace.Options{LockTimeout: 2 * time.Second, Force: true, StateDir: xdg.State()}, p, edit)
		},
		Search: func(ctx context.Context, q index.Query) ([]index.Hit, error) {
			ix, err := openIndex(ctx, index.DefaultPath(), ui{io.Discard})
			if err != nil {
				return nil, err
			}
			defer ix.Close()
			return ix.Search(ctx, q)
		},
	}
	server := agent.NewMCPServer(agent.New(env), false)
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := server.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, path
}

// call calls a tool and decodes its JSON text result into out.
func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, out any) bool {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content items", name, len(res.Content))
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if err := json.Unmarshal([]byte(text), out); err != nil {
		t.Fatalf("%s: result %q: %v", name, text, err)
	}
	return res.IsError
}

// line returns the line of the file holding `"id":"<id>"`.
func line(t *testing.T, path, id string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, `"id":"`+id+`"`) {
			return l
		}
	}
	t.Fatalf("no entry %s in %s", id, path)
	return ""
}

func TestMCPTools(t *testing.T) {
	cs, path := mcpFixture(t)
	ctx := context.Background()

	// The tools, with their schemas; one session served: no session argument.
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		schema, _ := json.Marshal(tool.InputSchema)
		if strings.Contains(string(schema), `"session"`) {
			t.Errorf("%s: schema has a session argument with --session: %s", tool.Name, schema)
		}
		if !strings.Contains(tool.Description, "[[extracted-") && tool.Name != "checkpoint" {
			t.Errorf("%s: description does not explain the placeholder", tool.Name)
		}
		switch tool.Name {
		case "restore":
			if !strings.Contains(string(schema), `"required":["entry_id"]`) {
				t.Errorf("restore schema does not require entry_id: %s", schema)
			}
		case "purge_control":
			if !strings.Contains(string(schema), `"enum":["get_context","restore","set_extractable"]`) {
				t.Errorf("purge_control schema lacks the actions: %s", schema)
			}
		}
	}
	if want := []string{"checkpoint", "purge_control", "restore", "search"}; !slices.Equal(sortedCopy(names), want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	// get_context lists both extracted entries.
	var gc agent.ContextResult
	if call(t, cs, "purge_control", map[string]any{"action": "get_context"}, &gc) {
		t.Fatalf("get_context failed: %+v", gc)
	}
	if len(gc.Extracted) != 2 || gc.Extracted[0].EntryID != "k1" || gc.Extracted[1].EntryID != "r1" {
		t.Fatalf("get_context extracted = %+v", gc.Extracted)
	}
	k1 := gc.Extracted[0]
	if !slices.Equal(k1.Keys, []string{"/message/content/0/text", "/message/content/1/arguments/command"}) || k1.Sizes["/message/content/0/text"] != 614 || k1.Tool != "bash" {
		t.Errorf("get_context k1 = %+v", k1)
	}
	if gc.Extracted[1].Kind != "tool_result" || gc.Gauge == nil || !strings.HasPrefix(gc.Gauge.Text, "[Context: ") {
		t.Errorf("get_context r1 or gauge = %+v %+v", gc.Extracted[1], gc.Gauge)
	}

	// restore with keys: only the text comes back.
	var rr struct {
		Restored     bool                       `json:"restored"`
		EntryID      string                     `json:"entry_id"`
		KeysRestored []string                   `json:"keys_restored"`
		Pointers     []string                   `json:"pointers_restored"`
		Previous     string                     `json:"previous_restored_at"`
		Suggestion   string                     `json:"suggestion"`
		Values       map[string]json.RawMessage `json:"values"`
	}
	if call(t, cs, "restore", map[string]any{"entry_id": "k1", "keys": []string{"text"}}, &rr) {
		t.Fatalf("restore failed: %+v", rr)
	}
	if !rr.Restored || !slices.Equal(rr.KeysRestored, []string{"content"}) || !slices.Equal(rr.Pointers, []string{"/message/content/0/text"}) || len(rr.Values) != 1 || rr.Previous != "" {
		t.Fatalf("restore result = %+v", rr)
	}
	if !strings.HasPrefix(string(rr.Values["/message/content/0/text"]), `"Here is my plan`) {
		t.Errorf("restored value = %s", rr.Values["/message/content/0/text"])
	}
	l := line(t, path, "k1")
	if !strings.Contains(l, `"text":"Here is my plan`) || !strings.Contains(l, `"command":"[[extracted-k1]]"`) || !strings.HasSuffix(l, `,"_restored":"2026-02-20T17:30:00Z"}`) {
		t.Errorf("k1 after restore: %s", l)
	}

	// A second restore (the command) notes the first and suggests pinning.
	rr.Values = nil
	if call(t, cs, "purge_control", map[string]any{"action": "restore", "entry_id": "k1"}, &rr) {
		t.Fatalf("second restore failed: %+v", rr)
	}
	if rr.Previous != "2026-02-20T17:30:00Z" || !strings.Contains(rr.Suggestion, "_extractable: false") || !slices.Equal(rr.KeysRestored, []string{"content"}) || !slices.Equal(rr.Pointers, []string{"/message/content/1/arguments/command"}) {
		t.Errorf("second restore = %+v", rr)
	}

	// set_extractable false pins r1.
	var se agent.SetExtractableResult
	if call(t, cs, "purge_control", map[string]any{"action": "set_extractable", "entry_id": "r1", "value": false}, &se) {
		t.Fatalf("set_extractable failed: %+v", se)
	}
	if l := line(t, path, "r1"); !strings.HasSuffix(l, `,"_extractable":false}`) || !strings.Contains(l, `[[extracted-r1]]`) {
		t.Errorf("r1 after set_extractable: %s", l)
	}

	// search finds the tool result in the index.
	var sr agent.SearchResult
	if call(t, cs, "search", map[string]any{"query": "tidy the flags"}, &sr) {
		t.Fatalf("search failed: %+v", sr)
	}
	if len(sr.Hits) == 0 || sr.Hits[0].EntryID != "r1" || !strings.Contains(sr.Hits[0].Restore, `"entry_id":"r1"`) {
		t.Errorf("search = %+v", sr)
	}

	// Errors are results the agent reads, never protocol failures.
	var er agent.ErrorResult
	if !call(t, cs, "restore", map[string]any{"entry_id": "nope"}, &er) || er.Error != "entry nope not found" {
		t.Errorf("unknown entry: %+v", er)
	}
	if !call(t, cs, "purge_control", map[string]any{"action": "explode"}, &er) || !strings.Contains(er.Error, `unknown action "explode"`) {
		t.Errorf("unknown action: %+v", er)
	}
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}
