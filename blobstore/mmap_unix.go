//go:build unix

package blobstore

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps the file at path read-only, or reads it when it is empty
// (an empty mapping is an error), and returns its bytes and how to release
// them. A mapped index costs memory only for the pages a lookup touches:
// a lookup in an index of a million blobs reads a few pages of it.
func mapFile(path string) ([]byte, func(), error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if fi.Size() == 0 || fi.Size() != int64(int(fi.Size())) {
		return nil, func() {}, nil
	}
	b, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, &os.PathError{Op: "mmap", Path: path, Err: err}
	}
	return b, func() { unix.Munmap(b) }, nil
}
