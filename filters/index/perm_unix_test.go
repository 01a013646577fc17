//go:build unix

package index

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestPermissions: the index file (and SQLite's -wal and -shm beside it)
// is 0600 and the directories Open makes are 0700, whatever the umask.
// The umask is process-wide, so this test must not run in parallel.
func TestPermissions(t *testing.T) {
	for _, umask := range []int{0, 0o022, 0o277} {
		old := syscall.Umask(umask)
		func() {
			defer syscall.Umask(old)
			base := t.TempDir()
			path := filepath.Join(base, "state", "bs", "index.db")
			ix, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer ix.Close()
			mustAdd(t, ix, sample()...)
			if _, err := ix.Search(context.Background(), Query{Text: "config"}); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{filepath.Join(base, "state"), filepath.Join(base, "state", "bs")} {
				if m := mode(t, d); m != fs.ModeDir|0o700 {
					t.Errorf("umask %#o: %s has mode %v, want drwx------", umask, d, m)
				}
			}
			if m := mode(t, path); m != 0o600 {
				t.Errorf("umask %#o: %s has mode %v, want -rw-------", umask, path, m)
			}
			for _, side := range []string{path + "-wal", path + "-shm"} {
				if fi, err := os.Stat(side); err == nil && fi.Mode() != 0o600 {
					t.Errorf("umask %#o: %s has mode %v, want -rw-------", umask, side, fi.Mode())
				} else if err != nil {
					t.Errorf("umask %#o: %v (the index should be in WAL mode)", umask, err)
				}
			}
		}()
	}
	// An existing directory keeps its mode.
	base := t.TempDir()
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	ix, err := Open(filepath.Join(base, "index.db"))
	if err != nil {
		t.Fatal(err)
	}
	ix.Close()
	if m := mode(t, base); m != fs.ModeDir|0o755 {
		t.Errorf("existing directory changed to %v", m)
	}
}

func mode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode()
}
