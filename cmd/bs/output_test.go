package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"github.com/bstools/bs/internal/output"
)

// TestFullStoreNamed: a store on a full disk is named as the culprit, not
// the line, entry, digest and temp file the write was for.
func TestFullStoreNamed(t *testing.T) {
	dir := t.TempDir()
	output.NoteStore(dir)
	err := fmt.Errorf("writing output: line 96: entry e1: storing sha256:aa: put blob sha256:aa: %w",
		&fs.PathError{Op: "write", Path: filepath.Join(dir, "blobs", "sha256", "aa", ".tmp-1"), Err: syscall.ENOSPC})
	var stderr bytes.Buffer
	if code := exitCode(context.Background(), ui{&stderr}, "extract", err); code != exitFailure {
		t.Errorf("exit %d", code)
	}
	if got, want := stderr.String(), "bs: extract: blob store "+dir+": no space left on device\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// Elsewhere: the file that could not be written.
	stderr.Reset()
	exitCode(context.Background(), ui{&stderr}, "extract", fmt.Errorf("x: %w", &fs.PathError{Op: "write", Path: "/elsewhere/f", Err: syscall.ENOSPC}))
	if got, want := stderr.String(), "bs: extract: /elsewhere/f: no space left on device\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestFullStoreOnDisk: the same on a real full file system, where this
// test may mount a small tmpfs (as root on Linux).
func TestFullStoreOnDisk(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("mounts a tmpfs: root on Linux")
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	var in bytes.Buffer
	noise := make([]byte, 8000) // values that do not compress away
	for i := 0; i < 40; i++ {
		rand.Read(noise)
		fmt.Fprintf(&in, `{"role":"tool","content":"%d %x"}`+"\n", i, noise)
	}
	for i := 0; i < 4; i++ {
		in.WriteString(`{"role":"user","content":"next"}` + "\n")
	}
	store := filepath.Join(mnt, "store")
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	var stderr bytes.Buffer
	code := run([]string{"bs", "extract", "--no-index", "--store", store}, &in, io.Discard, &stderr)
	if code != exitFailure || stderr.String() != "bs: extract: blob store "+store+": no space left on device\n" {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}
