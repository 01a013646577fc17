package searchqueue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
)

// TestRollIndexDiscard: the rows of a roll that failed leave the queue,
// and only those: an earlier roll's rows in the same run stay.
func TestRollIndexDiscard(t *testing.T) {
	var warnings []error
	w := NewWriter(filepath.Join(t.TempDir(), "index.db"), func(err error) { warnings = append(warnings, err) })
	at := func(path, id string) Session { return Session{Path: path, ID: func() string { return id }} }
	first := w.ForRoll(at("/s/a.jsonl", ""), nil)
	first.Add(roll.Evicted{EntryID: "a1", Blob: "sha256:aa", Text: []byte(`"kept"`)})
	failed := w.ForRoll(at("/s/b.jsonl", "S-b"), nil)
	failed.Add(roll.Evicted{EntryID: "b1", Blob: "sha256:bb", Text: []byte(`"taken back"`)})
	failed.Add(roll.Evicted{EntryID: "b2", Blob: "sha256:bb", Text: []byte(`"taken back too"`)})
	failed.Discard()
	last := w.ForRoll(at("/s/c.jsonl", "S-c"), nil)
	last.Add(roll.Evicted{EntryID: "c1", Blob: "sha256:cc", Text: []byte(`"kept too"`)})
	w.Close()
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
	if string(got) != want || len(warnings) > 0 {
		t.Errorf("queue:\n%s\nwant:\n%s\nwarnings: %v", got, want, warnings)
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
		var warnings []error
		err := ingest(ctx, ix, file, func(err error) { warnings = append(warnings, err) }, nil, nil)
		if _, serr := os.Stat(file); err == nil || serr != nil || len(warnings) > 0 {
			t.Fatalf("interrupted ingest: %v; the file: %v; warnings: %v", err, serr, warnings)
		}
	}
}

// TestOpenIngests: Open adds the queued rows to the index and removes the
// file; a file damaged halfway gives up the rows before the damage, is set
// aside as .bad and said to be damaged; the rows of a blob in Gone are
// left out.
func TestOpenIngests(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	var warnings []error
	w := NewWriter(path, func(err error) { warnings = append(warnings, err) })
	s := Session{Path: "/s/a.jsonl", ID: func() string { return "A" }}
	w.add(s.row(index.Row{EntryID: "e1", Blob: "sha256:" + strings.Repeat("1", 64), Kind: "tool_result", Text: "alpha kept"}))
	w.add(s.row(index.Row{EntryID: "e2", Blob: "sha256:" + strings.Repeat("2", 64), Kind: "tool_result", Text: "alpha gone"}))
	w.Close()
	damaged := filepath.Join(pendingDir(path), queuePrefix+"9.jsonl")
	row := `{"Session":"/s/b.jsonl","EntryID":"b1","Pointer":"","Blob":"sha256:` + strings.Repeat("3", 64) + `","Kind":"entry","Tool":"","Time":"","Text":"alpha damaged"}`
	if err := os.WriteFile(damaged, []byte(row+"\n{\"Sess"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(ctx, path, OpenOptions{Warn: func(err error) { warnings = append(warnings, err) }, Gone: map[string]bool{"sha256:" + strings.Repeat("2", 64): true}})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(ctx, index.Query{Text: "alpha"})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.EntryID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"b1", "e1"}) {
		t.Errorf("hits %v, want b1 and e1", ids)
	}
	var bad *DamagedError
	if len(warnings) != 1 || !errors.As(warnings[0], &bad) || bad.File != damaged {
		t.Errorf("warnings %v, want the damaged file", warnings)
	}
	if left := pendingFiles(path); len(left) != 0 {
		t.Errorf("left in the queue: %v", left)
	}
	if _, err := os.Stat(damaged + ".bad"); err != nil {
		t.Errorf("the damaged file is not kept as .bad: %v", err)
	}
}

// TestRemovedText: what the index holds of a removed value.
func TestRemovedText(t *testing.T) {
	var p transcript.Parser
	for raw, want := range map[string]string{
		`"a string"`: "a string",
		`[{"type":"text","text":"one"},{"type":"image","data":"x"},{"type":"output_text","text":"two"}]`: "one\ntwo",
		`{"type":"thinking","thinking":"hmm"}`: "hmm",
		`{"type":"image","data":"AAAA"}`:       "",
		`not json`:                             "",
	} {
		if got := removedText(&p, []byte(raw)); got != want {
			t.Errorf("removedText(%s) = %q, want %q", raw, got, want)
		}
	}
}

// TestUnreachableStoreWaits: a row whose text is in a bucket that cannot
// be reached at ingestion (opening it asks nothing; every read fails)
// waits with its queue file, its text still in the store, rather than go
// into the index without it.
func TestUnreachableStoreWaits(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	var queue bytes.Buffer
	d := blobstore.Sum([]byte(`"the text"`))
	row := queued{Row: index.Row{Blob: d.String(), Kind: "tool_result"}, From: "s3://bucket/bs?endpoint=http://127.0.0.1:1&region=us-east-1", Value: true}
	if err := json.NewEncoder(&queue).Encode(row); err != nil {
		t.Fatal(err)
	}
	var added []index.Row
	err := readQueue(context.Background(), &queue, func(err error) { t.Logf("warned: %v", err) }, nil, func(rows []index.Row) bool {
		added = append(added, rows...)
		return true
	})
	var away *storeAway
	if !errors.As(err, &away) || len(added) > 0 {
		t.Fatalf("readQueue = %v, %d rows added; want a *storeAway and none", err, len(added))
	}
}
