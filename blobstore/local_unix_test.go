//go:build unix

package blobstore_test

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// TestLocalPermissions checks that the store is private whatever the umask,
// including directories OpenLocal creates above the store's own layout.
func TestLocalPermissions(t *testing.T) {
	for _, umask := range []int{0, 0o022, 0o777} {
		t.Run(fmt.Sprintf("umask%04o", umask), func(t *testing.T) {
			base := t.TempDir()
			old := syscall.Umask(umask)
			defer syscall.Umask(old)

			dir := filepath.Join(base, "new", "store")
			s, err := blobstore.OpenLocal(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 20 {
				put(t, s, fmt.Appendf(nil, "blob %d", i))
			}
			put(t, s, []byte("blob 0")) // dedup path
			ctx := context.Background()
			for i := 20; i < 25; i++ { // the batch path: a pack and its index
				data := fmt.Appendf(nil, "blob %d", i)
				if err := s.PutPending(ctx, blobstore.Sum(data), data); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			syscall.Umask(old) // so the walk below is not affected

			var files int
			err = filepath.WalkDir(filepath.Join(base, "new"), func(path string, e fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				fi, err := e.Info()
				if err != nil {
					return err
				}
				switch {
				case e.IsDir() && fi.Mode().Perm() != 0o700:
					t.Errorf("directory %s has mode %04o, want 0700", path, fi.Mode().Perm())
				case fi.Mode().IsRegular():
					files++
					if fi.Mode().Perm() != 0o600 {
						t.Errorf("file %s has mode %04o, want 0600", path, fi.Mode().Perm())
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if files != 22 {
				t.Errorf("found %d files, want 22: 20 loose blobs, a pack and its index", files)
			}
			n := 0
			s.List(ctx, func(blobstore.Digest) error { n++; return nil })
			if n != 25 {
				t.Errorf("List found %d blobs, want 25", n)
			}
		})
	}
}
