package agent

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/internal/rpcguard"
)

// TestMCPServerSchemas: the tools' schemas name the session argument only
// when many sessions are served, where checkpoint requires it; a call's
// result is the JSON of Call's result, < and > as they are.
func TestMCPServerSchemas(t *testing.T) {
	for _, many := range []bool{false, true} {
		store := new(blobstore.Mem)
		file := lean(t, []byte(k1Session(strings.Repeat("y", 600))), store)
		a := New(Env{Sessions: Sessions{File: "/s/k.jsonl"}, Store: store, Now: func() time.Time { return now }, Rewrite: memRewrite(&file)})
		ct, st := mcp.NewInMemoryTransports()
		ctx := context.Background()
		ss, err := NewMCPServer(a, many).Connect(ctx, st, nil)
		if err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		list, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range list.Tools {
			names = append(names, tool.Name)
			schema := tool.InputSchema.(map[string]any)
			_, hasSession := schema["properties"].(map[string]any)["session"]
			required, _ := schema["required"].([]any)
			if hasSession != many || slices.Contains(required, any("session")) != (many && tool.Name == toolCheckpoint) {
				t.Errorf("many=%v: %s: session property %v, required %v", many, tool.Name, hasSession, required)
			}
		}
		slices.Sort(names)
		if want := []string{toolCheckpoint, toolPurgeControl, toolRestore, toolSearch}; !slices.Equal(names, want) {
			t.Errorf("tools %v, want %v", names, want)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: toolRestore, Arguments: map[string]any{"entry_id": "<none>"}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*mcp.TextContent).Text; !res.IsError || !strings.Contains(text, "<none>") {
			t.Errorf("restore of an unknown entry: %v %s", res.IsError, text)
		}
		cs.Close()
		ss.Close()
	}
}

// TestServeStdio: a bad frame is answered with guard's message and the
// session goes on to answer the next request; the end of input ends it
// without an error, every request answered.
func TestServeStdio(t *testing.T) {
	in := "not json\n" +
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n"
	var out strings.Builder
	guard := rpcguard.Options{Wait: time.Second, Log: slog.New(slog.DiscardHandler), Message: func(rpcguard.Problem) string { return "refused" }}
	if err := ServeStdio(context.Background(), New(Env{}), false, strings.NewReader(in), &out, guard); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"message":"refused"`) || !strings.Contains(lines[1], `"id":1,"result":{`) {
		t.Errorf("answers:\n%s", out.String())
	}
}
