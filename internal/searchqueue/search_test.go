package searchqueue

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/index"
)

// TestSearch: no index at the path is ErrNoIndex, and none is made there;
// queued rows are added before the search answers.
func TestSearch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	if _, err := Search(ctx, path, index.Query{Text: "alpha"}); !errors.Is(err, ErrNoIndex) {
		t.Errorf("no index: %v, want ErrNoIndex", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a search made an index: %v", err)
	}
	w := NewWriter(path, func(err error) { t.Error(err) })
	s := Session{Path: "/s/a.jsonl", ID: func() string { return "A" }}
	w.add(s.row(index.Row{EntryID: "e1", Blob: "sha256:" + strings.Repeat("1", 64), Kind: "tool_result", Text: "alpha queued"}))
	w.Close()
	hits, err := Search(ctx, path, index.Query{Text: "alpha"})
	if err != nil || len(hits) != 1 || hits[0].EntryID != "e1" {
		t.Errorf("hits %v, %v; want e1", hits, err)
	}
}

// TestExists: an index file, or rows queued; not an empty queue, which a
// filter that removed nothing leaves.
func TestExists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	if Exists(path) {
		t.Error("nothing there exists")
	}
	NewWriter(path, func(err error) { t.Error(err) }).Close() // no rows
	if _, err := os.Stat(pendingDir(path)); err != nil || Exists(path) {
		t.Errorf("an empty queue (%v) exists", err)
	}
	w := NewWriter(path, func(err error) { t.Error(err) })
	w.add(index.Row{Session: "/s/a.jsonl", EntryID: "e1", Blob: "sha256:" + strings.Repeat("1", 64), Kind: "text", Text: "queued"})
	w.Close()
	if !Exists(path) {
		t.Error("queued rows do not exist")
	}
	other := filepath.Join(t.TempDir(), "index.db")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if !Exists(other) {
		t.Error("an index file does not exist")
	}
}

// TestForget: the rows of the blobs gone leave the index, queued or not,
// and the others stay; with no index, nothing is made.
func TestForget(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "index.db")
	gone := map[string]bool{"sha256:" + strings.Repeat("1", 64): true}
	if n, err := Forget(ctx, path, gone, OpenOptions{}); n != 0 || err != nil || Exists(path) {
		t.Errorf("no index: %d, %v, exists %v", n, err, Exists(path))
	}
	row := func(entry, digit string) index.Row {
		return index.Row{Session: "/s/a.jsonl", EntryID: entry, Blob: "sha256:" + strings.Repeat(digit, 64), Kind: "text", Text: "alpha " + entry}
	}
	w := NewWriter(path, func(err error) { t.Error(err) })
	w.add(row("e1", "1"))
	w.add(row("e2", "2"))
	w.Close()
	if _, err := Search(ctx, path, index.Query{Text: "alpha"}); err != nil { // into the index
		t.Fatal(err)
	}
	w = NewWriter(path, func(err error) { t.Error(err) })
	w.add(row("e3", "1")) // queued, of a blob gone
	w.Close()
	n, err := Forget(ctx, path, gone, OpenOptions{Warn: func(err error) { t.Error(err) }})
	if n != 1 || err != nil {
		t.Errorf("forgot %d rows, %v; want 1", n, err)
	}
	hits, err := Search(ctx, path, index.Query{Text: "alpha"})
	if err != nil || len(hits) != 1 || hits[0].EntryID != "e2" {
		t.Errorf("left %v, %v; want e2", hits, err)
	}
}
