package output

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriterKeepsFirstError: the first failed write is the error of every
// later one, named "write: <cause>", whether it came through Write or
// through ReadFrom.
func TestWriterKeepsFirstError(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	for _, write := range []func(*Writer) error{
		func(w *Writer) error { _, err := w.Write([]byte("x")); return err },
		func(w *Writer) error { _, err := io.Copy(w, strings.NewReader("x")); return err },
	} {
		w := New(full)
		err := write(w)
		var we *WriteError
		if !errors.As(err, &we) || err.Error() != "write: no space left on device" || w.Err() != err {
			t.Errorf("got %v (kept %v)", err, w.Err())
		}
		if _, again := w.Write([]byte("y")); again != err {
			t.Errorf("a later write: %v", again)
		}
	}
	if w := New(io.Discard); w.Fd() != ^uintptr(0) {
		t.Errorf("no descriptor under io.Discard, got %d", w.Fd())
	}
}

// TestDiskError: a full disk under a noted store names the store; one
// elsewhere names the file; other errors are not a full disk.
func TestDiskError(t *testing.T) {
	store := t.TempDir()
	NoteStore(store)
	err := fmt.Errorf("storing: %w", &fs.PathError{Op: "write", Path: filepath.Join(store, "blobs", ".tmp-1"), Err: syscall.ENOSPC})
	if d, ok := DiskError(err); !ok || d.Store != store || d.Err != syscall.ENOSPC {
		t.Errorf("in the store: %+v %v", d, ok)
	}
	if d, ok := DiskError(&fs.PathError{Op: "write", Path: "/elsewhere/f", Err: syscall.EROFS}); !ok || d.Store != "" || d.Path != "/elsewhere/f" {
		t.Errorf("elsewhere: %+v %v", d, ok)
	}
	if _, ok := DiskError(&fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist}); ok {
		t.Error("a missing file is no full disk")
	}
}
