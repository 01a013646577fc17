package watch

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
		if failed, err := w.pass(context.Background()); err != nil || failed != 0 {
			t.Fatal(failed, err)
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

// TestWatchOnceFailed: a single pass whose runs failed is a FailedError
// counting them, after running every file; a watch that goes on does not
// stop for them.
func TestWatchOnceFailed(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(dir, n+".jsonl"), []byte(`{"role":"user","content":"x"}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	runs := 0
	w := &Watcher{Roots: []string{dir}, Filter: []string{"restore"}, Log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Progress: io.Discard, StatePath: filepath.Join(dir, "state", "watch.json"),
		Run:  func(context.Context, []string) error { runs++; return errors.New("no store") },
		Busy: func(error) (string, bool) { return "", false }}
	var failed *FailedError
	if err := w.Watch(context.Background(), time.Hour, true); !errors.As(err, &failed) || failed.Runs != 2 || runs != 2 {
		t.Fatalf("Watch once = %v after %d runs; want 2 runs failed", err, runs)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.Run = func(context.Context, []string) error { cancel(); return errors.New("no store") }
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("{}\n"), 0o600)
	if err := w.Watch(ctx, time.Millisecond, false); err != nil {
		t.Fatalf("a watch that goes on: %v", err)
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
