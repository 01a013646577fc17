package watch

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/bstools/bs/internal/sessions"
)

// TestWatchReadsOnlyChanged: the first pass runs the filter on every file;
// a pass with no change runs it on none (and watch itself only stats
// files); a changed file is the only one run again.
func TestWatchReadsOnlyChanged(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(dir, n+".jsonl"), []byte(`{"role":"user","content":"x"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var ran []string
	w := &Watcher{Roots: []string{dir}, Filter: []string{"extract"}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Progress: io.Discard, StatePath: filepath.Join(dir, "state", "watch.json"),
		Run: func(_ context.Context, args []string) error {
			ran = append(ran, filepath.Base(args[len(args)-1]))
			return nil
		},
		Busy: func(error) (string, bool) { return "", false }}
	pass := func() []string {
		ran = nil
		if err := w.pass(context.Background()); err != nil {
			t.Fatal(err)
		}
		slices.Sort(ran)
		return ran
	}
	if got := pass(); !slices.Equal(got, []string{"a.jsonl", "b.jsonl", "c.jsonl"}) {
		t.Fatalf("first pass ran %v", got)
	}
	if got := pass(); len(got) != 0 {
		t.Fatalf("a pass with no change ran %v", got)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "b.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"role":"assistant","content":"y"}` + "\n")
	f.Close()
	if got := pass(); !slices.Equal(got, []string{"b.jsonl"}) {
		t.Fatalf("after b grew the pass ran %v", got)
	}
	os.Remove(filepath.Join(dir, "c.jsonl"))
	if got := pass(); len(got) != 0 {
		t.Fatalf("after c was removed the pass ran %v", got)
	}
	st, err := sessions.ReadState(w.StatePath)
	if err != nil || len(st.Files) != 2 {
		t.Fatalf("state %+v %v: want a and b only", st, err)
	}
}

// TestStoreArgs: the store flags of the filter, in any form, are passed on
// to prune-retention; other flags are not.
func TestStoreArgs(t *testing.T) {
	got := storeArgs([]string{"--keep-recent", "1", "--store", "/s2", "--identity=k.txt", "-cache", "/c",
		"-cache-size=2G", "--encrypt-to", "age1x", "--min-length", "50", "--", "--store", "/no"})
	want := []string{"--store=/s2", "--identity=k.txt", "--cache=/c", "--cache-size=2G"}
	if !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if got := storeArgs([]string{"--keep-recent", "1"}); len(got) != 0 {
		t.Fatalf("no store flags: got %q", got)
	}
}
