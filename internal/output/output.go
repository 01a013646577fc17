// Package output is standard output as bs's commands see it, and the
// naming of what could not be written: output that failed is one error,
// "write: <cause>", and a full disk names the blob store it holds (when
// it holds one this run opened) rather than a blob's temp file.
package output

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// Writer keeps the first error a write met, so that output that could
// not be written fails the run even where a command printed without
// looking, and gives that error one name (*WriteError), whatever wrapped
// it.
type Writer struct {
	w   io.Writer
	err error
}

// New is a Writer over w.
func New(w io.Writer) *Writer { return &Writer{w: w} }

// Err is the first error a write met (a *WriteError), or nil.
func (o *Writer) Err() error { return o.err }

func (o *Writer) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = &WriteError{err}
	}
	return n, o.err
}

// ReadFrom lets io.Copy reach the file underneath (splice on Linux).
func (o *Writer) ReadFrom(r io.Reader) (int64, error) {
	if o.err != nil {
		return 0, o.err
	}
	var n int64
	var err error
	if rf, ok := o.w.(io.ReaderFrom); ok {
		n, err = rf.ReadFrom(r)
	} else {
		n, err = io.Copy(struct{ io.Writer }{o.w}, r)
	}
	if isWriteError(err) {
		o.err = &WriteError{err}
		return n, o.err
	}
	return n, err
}

// Fd is the descriptor underneath, for terminal detection and Path.
func (o *Writer) Fd() uintptr {
	if f, ok := o.w.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// isWriteError is whether an error of copying into a file came from the
// file: *os.File names its own failures "write".
func isWriteError(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && pe.Op == "write"
}

// WriteError is output that could not be written: "write: no space left
// on device", the cause without the path (/dev/stdout says nothing).
type WriteError struct{ Err error }

func (e *WriteError) Error() string {
	cause := e.Err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err
	}
	return "write: " + cause.Error()
}

func (e *WriteError) Unwrap() error { return e.Err }

// localStores are the directories of the local stores this run opened,
// so that a full disk names the store rather than a blob's temp file.
var localStores struct {
	sync.Mutex
	dirs []string
}

// NoteStore records dir, a local store's directory.
func NoteStore(dir string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return
	}
	localStores.Lock()
	defer localStores.Unlock()
	if !slices.Contains(localStores.dirs, abs) {
		localStores.dirs = append(localStores.dirs, abs)
	}
}

// DiskFull is an error of a disk that is full or cannot be written.
type DiskFull struct {
	Store string // the local store (NoteStore) the file is in, or ""
	Path  string // the file that could not be written
	Err   error  // why: ENOSPC, EROFS, EDQUOT
}

// DiskError finds a full or read-only disk in err, whatever wrapped it.
func DiskError(err error) (DiskFull, bool) {
	var pe *fs.PathError
	if !errors.As(err, &pe) || !(errors.Is(pe.Err, syscall.ENOSPC) || errors.Is(pe.Err, syscall.EROFS) || isQuotaError(pe.Err)) {
		return DiskFull{}, false
	}
	path, aerr := filepath.Abs(pe.Path)
	if aerr != nil {
		path = pe.Path
	}
	localStores.Lock()
	defer localStores.Unlock()
	for _, d := range localStores.dirs {
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return DiskFull{Store: d, Path: pe.Path, Err: pe.Err}, true
		}
	}
	return DiskFull{Path: pe.Path, Err: pe.Err}, true
}
