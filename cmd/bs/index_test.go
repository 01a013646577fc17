package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/roll"
)

// TestRollIndexDiscard: the rows of a roll that failed leave the queue,
// and only those: an earlier roll's rows in the same run stay.
func TestRollIndexDiscard(t *testing.T) {
	var warnings bytes.Buffer
	w := newIndexWriter(filepath.Join(t.TempDir(), "index.db"), ui{&warnings})
	at := func(path, id string) rowSession { return rowSession{path: path, id: func() string { return id }} }
	first := w.forRoll(at("/s/a.jsonl", ""), nil)
	first.Add(roll.Evicted{EntryID: "a1", Blob: "sha256:aa", Text: []byte(`"kept"`)})
	failed := w.forRoll(at("/s/b.jsonl", "S-b"), nil)
	failed.Add(roll.Evicted{EntryID: "b1", Blob: "sha256:bb", Text: []byte(`"taken back"`)})
	failed.Add(roll.Evicted{EntryID: "b2", Blob: "sha256:bb", Text: []byte(`"taken back too"`)})
	failed.Discard()
	last := w.forRoll(at("/s/c.jsonl", "S-c"), nil)
	last.Add(roll.Evicted{EntryID: "c1", Blob: "sha256:cc", Text: []byte(`"kept too"`)})
	w.close()
	files := pendingFiles(w.path)
	if len(files) != 1 {
		t.Fatalf("queue files %v, want one", files)
	}
	got, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	want := `{"Session":"/s/a.jsonl","EntryID":"a1","Pointer":"","Blob":"sha256:aa","Kind":"entry","Tool":"","Time":"","Text":"kept"}
{"Session":"/s/c.jsonl","EntryID":"c1","Pointer":"","Blob":"sha256:cc","Kind":"entry","Tool":"","Time":"","SessionID":"S-c","Text":"kept too"}
`
	if string(got) != want || warnings.Len() > 0 {
		t.Errorf("queue:\n%s\nwant:\n%s\nwarnings: %s", got, want, warnings.String())
	}
}

// TestIngestInterruptedKeepsTheFile: a search interrupted while it adds
// queued rows (Ctrl-C cancels its context) returns the error and leaves
// the queue file for the next one, whichever goroutine sees the
// cancellation first.
func TestIngestInterruptedKeepsTheFile(t *testing.T) {
	dir := t.TempDir()
	ix, err := index.Open(filepath.Join(dir, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	var rows bytes.Buffer
	for j := range 10 {
		fmt.Fprintf(&rows, `{"Session":"s","EntryID":"e%d","Pointer":"","Blob":"sha256:%064d","Kind":"entry","Tool":"","Time":"","Text":"queued"}`+"\n", j, j)
	}
	file := filepath.Join(dir, "queue-1.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for range 40 { // the goroutines race: try both orders
		if err := os.WriteFile(file, rows.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		var warnings bytes.Buffer
		err := ingest(ctx, ix, file, ui{&warnings}, nil, nil)
		if _, serr := os.Stat(file); err == nil || serr != nil || warnings.Len() > 0 {
			t.Fatalf("interrupted ingest: %v; the file: %v; warnings: %s", err, serr, warnings.String())
		}
	}
}

// TestRowStore: a row names a directory store by its absolute path, and a
// URL as given; a directory whose name holds "://" is a directory, as the
// store opener reads it.
func TestRowStore(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, want string }{
		{"s3://bucket/bs?region=x", "s3://bucket/bs?region=x"},
		{"store", filepath.Join(wd, "store")},
		{"a b://c", filepath.Join(wd, "a b:", "c")},
		{defaultStoreDir(), ""},
	} {
		if got := rowStore(c.spec); got != c.want {
			t.Errorf("rowStore(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}
