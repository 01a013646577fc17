package output

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPath: standard output redirected to a file is named by its path; a
// pipe, or a file since removed, is not.
func TestPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	real, _ := filepath.EvalSymlinks(path)
	if got := Path(New(f)); got != path && got != real {
		t.Errorf("Path of %s = %q", path, got)
	}
	os.Remove(path)
	if got := Path(f); got != "" {
		t.Errorf("a removed file: %q", got)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := Path(w); got != "" {
		t.Errorf("a pipe: %q", got)
	}
}
