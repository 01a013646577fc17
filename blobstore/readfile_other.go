//go:build !unix

package blobstore

import (
	"io"
	"os"
)

// readFileMax reads a whole blob file of at most limit bytes into buf,
// which it grows if needed, and returns it.
func readFileMax(name string, limit int64, buf []byte) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errNotRegular
	}
	if fi.Size() > limit {
		return nil, errTooLarge
	}
	buf = grow(buf, int(fi.Size()))
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, err
	}
	return buf, nil
}
