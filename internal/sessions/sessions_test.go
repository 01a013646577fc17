package sessions

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestFind: *.jsonl files under directory roots (not hidden ones, through
// linked directories, a loop walked once), the files and directories a
// glob names, absolute, sorted, once each; strictly, a root that names
// nothing is an error; a bad pattern always is.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	touch := func(p string) {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700)
		os.WriteFile(filepath.Join(dir, p), nil, 0o600)
	}
	touch("a/one.jsonl")
	touch("a/sub/two.jsonl")
	touch("a/.hidden.jsonl")
	touch("a/notes.txt")
	touch("b/three.jsonl")
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "a", "sub", "loop"))
	os.Symlink(filepath.Join(dir, "b"), filepath.Join(dir, "a", "linked"))
	got, err := Find([]string{filepath.Join(dir, "a"), filepath.Join(dir, "b", "*.jsonl"), filepath.Join(dir, "nothing*")}, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		filepath.Join(dir, "a", "linked", "three.jsonl"),
		filepath.Join(dir, "a", "one.jsonl"),
		filepath.Join(dir, "a", "sub", "two.jsonl"),
		filepath.Join(dir, "b", "three.jsonl"),
	}
	if !slices.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	var nomatch *NoMatchError
	if _, err := Find([]string{filepath.Join(dir, "nothing*")}, true); !errors.As(err, &nomatch) {
		t.Errorf("strict, a root naming nothing: %v", err)
	}
	var glob *GlobError
	if _, err := Find([]string{filepath.Join(dir, "[")}, false); !errors.As(err, &glob) {
		t.Errorf("a bad pattern: %v", err)
	}
	if HasGlob(filepath.Join(dir, "a")) || !HasGlob("x/*.jsonl") {
		t.Error("HasGlob")
	}

	// A link that leads nowhere (a disk not mounted) is skipped by a
	// watch, but prune, which must read every live transcript, stops.
	os.Symlink(filepath.Join(dir, "unmounted"), filepath.Join(dir, "a", "proj"))
	os.Symlink(filepath.Join(dir, "gone.jsonl"), filepath.Join(dir, "b", "four.jsonl"))
	if got, err := Find([]string{filepath.Join(dir, "a")}, false); err != nil || len(got) != 3 {
		t.Errorf("not strict, a dangling link: %v, %v", got, err)
	}
	var dangling *DanglingError
	for _, root := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "b", "*.jsonl")} {
		if _, err := Find([]string{root}, true); !errors.As(err, &dangling) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("strict, a dangling link under %s: %v", root, err)
		}
	}
}

// TestState: the state written is the state read; a missing file is an
// empty state, a damaged one an error naming it.
func TestState(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "watch.json")
	st, err := ReadState(path)
	if err != nil || len(st.Files) != 0 {
		t.Fatalf("missing: %v %v", st, err)
	}
	info, _ := os.Stat(filepath.Dir(filepath.Dir(path)))
	st.Files["/s.jsonl"] = StampOf(info)
	st.Retention = time.Date(2026, 2, 20, 17, 30, 0, 0, time.UTC)
	if err := WriteState(path, st); err != nil {
		t.Fatal(err)
	}
	back, err := ReadState(path)
	if err != nil || back.Files["/s.jsonl"] != st.Files["/s.jsonl"] || !back.Retention.Equal(st.Retention) {
		t.Errorf("read back %+v, %v; wrote %+v", back, err, st)
	}
	os.WriteFile(path, []byte("{"), 0o600)
	var damaged *DamagedStateError
	if _, err := ReadState(path); !errors.As(err, &damaged) || damaged.Path != path {
		t.Errorf("damaged: %v", err)
	}
}

// TestDefaultRoots: the directories the runtimes keep their sessions in,
// under the home directory, those that exist and are directories, in the
// order the dialects are registered (OpenClaw and pi, Claude Code, Codex).
func TestDefaultRoots(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	if got := DefaultRoots(); len(got) != 0 {
		t.Errorf("DefaultRoots of an empty home = %v, want none", got)
	}
	all := []string{".openclaw/agents", ".pi/agent/sessions", ".claude/projects", ".codex/sessions"}
	for _, r := range all {
		if err := os.MkdirAll(filepath.Join(home, r), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, r := range all {
		want = append(want, filepath.Join(home, r))
	}
	if got := DefaultRoots(); !slices.Equal(got, want) {
		t.Errorf("DefaultRoots = %v, want %v", got, want)
	}
	// A file where a directory would be is no root.
	os.RemoveAll(filepath.Join(home, ".claude", "projects"))
	os.WriteFile(filepath.Join(home, ".claude", "projects"), nil, 0o600)
	want = slices.Delete(want, 2, 3)
	if got := DefaultRoots(); !slices.Equal(got, want) {
		t.Errorf("DefaultRoots with a file for .claude/projects = %v, want %v", got, want)
	}
}
