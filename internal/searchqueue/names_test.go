package searchqueue

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRowStore: a row names a directory store by its absolute path, and a
// URL as given; a directory whose name holds "://" is a directory, as the
// store opener reads it; the default store is "".
func TestRowStore(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(t.TempDir(), "bs")
	for _, c := range []struct{ spec, want string }{
		{"s3://bucket/bs?region=x", "s3://bucket/bs?region=x"},
		{"store", filepath.Join(wd, "store")},
		{"a b://c", filepath.Join(wd, "a b:", "c")},
		{def, ""},
	} {
		if got := RowStore(c.spec, def); got != c.want {
			t.Errorf("RowStore(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}

// TestInStore: rows name their store as RowStore does; a store that does
// not encrypt lends itself for their text, a directory made absolute.
func TestInStore(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	def := filepath.Join(t.TempDir(), "bs")
	for _, c := range []struct {
		spec          string
		encrypts      bool
		store, chunks string
	}{
		{"store", false, filepath.Join(wd, "store"), filepath.Join(wd, "store")},
		{def, false, "", def},
		{"store", true, filepath.Join(wd, "store"), ""},
		{"s3://bucket/bs", false, "s3://bucket/bs", "s3://bucket/bs"},
		{"s3://bucket/bs", true, "s3://bucket/bs", ""},
	} {
		var w Writer
		w.InStore(c.spec, def, c.encrypts)
		if w.Store != c.store || w.Chunks != c.chunks {
			t.Errorf("InStore(%q, encrypts %v): store %q, chunks %q; want %q, %q", c.spec, c.encrypts, w.Store, w.Chunks, c.store, c.chunks)
		}
	}
}

// TestSessionOf: the file rewritten in place, else the output file, else
// unknown; from standard input the identity is learnt as it is read.
func TestSessionOf(t *testing.T) {
	in := `{"type":"session","version":3,"id":"sid-1","timestamp":"2026-02-20T10:00:00.000Z","cwd":"/"}` + "\n"
	file := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(file, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, _ := SessionOf(file, true, "/out.jsonl", nil); s.Path != file || s.ID() != "sid-1" {
		t.Errorf("in place: %q %q", s.Path, s.ID())
	}
	if s, _ := SessionOf(file, false, "/out.jsonl", nil); s.Path != "/out.jsonl" {
		t.Errorf("to a file: %q", s.Path)
	}
	s, r := SessionOf("-", false, "", strings.NewReader(in))
	if s.Path != "-" {
		t.Errorf("to a pipe: %q", s.Path)
	}
	if b, err := io.ReadAll(r); err != nil || string(b) != in || s.ID() != "sid-1" {
		t.Errorf("standard input read as %q (%v), identity %q", b, err, s.ID())
	}
}
