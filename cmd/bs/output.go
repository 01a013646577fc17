package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
)

// output is standard output as the commands see it. It keeps the first
// error a write met, so that output that could not be written fails the
// run (exitCode) even where a command printed without looking, and it
// gives that error one name, "write: <cause>", whatever wrapped it.
type output struct {
	w   io.Writer
	err error
}

func (o *output) Write(p []byte) (int, error) {
	if o.err != nil {
		return 0, o.err
	}
	n, err := o.w.Write(p)
	if err != nil {
		o.err = &writeError{err}
	}
	return n, o.err
}

// ReadFrom lets io.Copy reach the file underneath (splice on Linux).
func (o *output) ReadFrom(r io.Reader) (int64, error) {
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
		o.err = &writeError{err}
		return n, o.err
	}
	return n, err
}

// Fd is the descriptor underneath, for isTerminal.
func (o *output) Fd() uintptr {
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

// writeError is output that could not be written: "write: no space left
// on device", the cause without the path (/dev/stdout says nothing).
type writeError struct{ err error }

func (e *writeError) Error() string {
	cause := e.err
	var pe *fs.PathError
	if errors.As(cause, &pe) {
		cause = pe.Err
	}
	return "write: " + cause.Error()
}

func (e *writeError) Unwrap() error { return e.err }

// localStores are the directories of the local stores this run opened,
// so that a full disk names the store rather than a blob's temp file.
var localStores struct {
	sync.Mutex
	dirs []string
}

// noteStore records dir, a local store's directory.
func noteStore(dir string) {
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

// diskError is the message for an error of a disk that is full or cannot
// be written: the place that failed and why, "blob store DIR: no space
// left on device" when it is a store's, whatever wrapped it.
func diskError(err error) (string, bool) {
	var pe *fs.PathError
	if !errors.As(err, &pe) || !(errors.Is(pe.Err, syscall.ENOSPC) || errors.Is(pe.Err, syscall.EROFS) || isQuotaError(pe.Err)) {
		return "", false
	}
	path, aerr := filepath.Abs(pe.Path)
	if aerr != nil {
		path = pe.Path
	}
	localStores.Lock()
	defer localStores.Unlock()
	for _, d := range localStores.dirs {
		if path == d || strings.HasPrefix(path, d+string(filepath.Separator)) {
			return fmt.Sprintf(msgStoreDisk, d, pe.Err), true
		}
	}
	return fmt.Sprintf("%s: %v", pe.Path, pe.Err), true
}
