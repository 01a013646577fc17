//go:build !unix

package blobstore

import "os"

// mapFile reads the file at path (where the system has no mmap we use)
// and returns its bytes and a no-op release.
func mapFile(path string) ([]byte, func(), error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, func() {}, nil
}
