package webui

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestCommandLines: each action is the bs command line the Commands
// interface names; a preview's values go to a scratch store beside it.
func TestCommandLines(t *testing.T) {
	var ran []string
	c := CommandLines{Run: func(_ context.Context, cmd string, args []string, file string, stdout *bytes.Buffer, skip ...string) error {
		line := strings.Join(append(append([]string{cmd}, args...), file), " ")
		if i := slices.Index(args, "--result"); i >= 0 {
			line = strings.Replace(line, args[i+1], "RESULT", 1)
			os.WriteFile(args[i+1], []byte(`{"restored":true}`+"\n"), 0o600)
		}
		ran = append(ran, line)
		stdout.WriteString(`{"file":"f"}` + "\n")
		if len(skip) > 0 && !slices.Contains(skip, "store") {
			t.Errorf("%s: the preview keeps the store flags: %v", cmd, skip)
		}
		return nil
	}}
	ctx := context.Background()
	out := filepath.Join(t.TempDir(), "preview.jsonl")
	stats, err := c.Stats(ctx, "f")
	if err != nil || string(stats) != `{"file":"f"}` {
		t.Errorf("stats %s, %v", stats, err)
	}
	if err := c.Preview(ctx, "trim", "f", out); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(out); string(b) != `{"file":"f"}`+"\n" {
		t.Errorf("preview wrote %q", b)
	}
	c.Apply(ctx, "extract", "f")
	res, err := c.Restore(ctx, "f", "e1")
	if err != nil || string(res) != `{"restored":true}` {
		t.Errorf("restore %s, %v", res, err)
	}
	c.SetExtractable(ctx, "f", "e1", "false")
	want := []string{"stats --json f", "trim --store=" + filepath.Join(filepath.Dir(out), "store") + " --no-index f", "extract -i f",
		"restore --id e1 --result RESULT -i f", "restore --set-extractable e1=false -i f"}
	if !slices.Equal(ran, want) {
		t.Errorf("ran %q\nwant %q", ran, want)
	}
}
