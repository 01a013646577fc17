package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rogpeppe/go-internal/lockedfile"
)

// rewriteInPlace replaces path with transform's output, atomically: the new
// content goes to a temp file in the same directory, is fsynced, and is
// renamed over the original, so a crash leaves the old file or the new one.
// The transform sees the first N bytes of the file (N noted at the start);
// bytes appended meanwhile are copied after its output unchanged. Two bs
// processes never rewrite one file at once.
func rewriteInPlace(ctx context.Context, path string, transform func(io.Reader, io.Writer) error) (err error) {
	// Rewrite the file a link points to, not the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	lock, err := lockPath(path)
	if err != nil {
		return err
	}
	unlock, err := lockedfile.MutexAt(lock).Lock()
	if err != nil {
		return fmt.Errorf("%s: lock: %w", path, err)
	}
	defer unlock()

	src, err := os.Open(path)
	if err != nil {
		return err
	}
	defer src.Close()
	info, err := src.Stat()
	if err != nil {
		return err
	}
	n := info.Size()

	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".bs-tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = transform(io.LimitReader(src, n), tmp); err != nil {
		return err
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	// Whatever a writer appended while we worked goes after our output.
	if _, err = src.Seek(n, io.SeekStart); err != nil {
		return err
	}
	if _, err = io.Copy(tmp, src); err != nil {
		return err
	}
	if err = tmp.Chmod(info.Mode().Perm()); err != nil {
		return err
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		_ = tmp.Chown(int(st.Uid), int(st.Gid)) // best effort: only root may give files away
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if d, derr := os.Open(filepath.Dir(path)); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// lockPath is the lock file bs holds while rewriting path. Lock files live
// under $XDG_STATE_HOME/bs/locks, named by the file's absolute path, and
// are never deleted: removing one while another process waits on it would
// let a third lock a new file of the same name.
func lockPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(stateDir(), "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), nil
}
