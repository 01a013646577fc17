//go:build !unix

package blobstore

import "os"

// writeTemp writes content to a new temp file in dir, mode 0400, unsynced,
// and returns its name.
func writeTemp(dir string, content []byte) (string, error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return "", err
	}
	err = f.Chmod(pendingMode)
	if err == nil {
		_, err = f.Write(content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}
