//go:build !linux

package blobstore

import "os"

// syncFiles makes the contents of the batch's files durable, one fsync
// each where the system has no syncfs.
func (l *Local) syncFiles(batch []pendingBlob, path func(pendingBlob) string) error {
	for _, p := range batch {
		f, err := os.Open(path(p))
		if err != nil {
			return err
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// syncDirs fsyncs each shard directory the batch renamed into, once.
func (l *Local) syncDirs(batch []pendingBlob) error {
	seen := map[string]bool{}
	for _, p := range batch {
		if !seen[p.shard] {
			seen[p.shard] = true
			if err := syncDir(p.shard); err != nil {
				return err
			}
		}
	}
	return nil
}
