package blobstore_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/bstools/bs/blobstore"
)

func TestLocalDeleteUnsynced(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	a, _ := s.Put(ctx, []byte("a"))
	b, _ := s.Put(ctx, []byte("b"))
	if err := s.DeleteUnsynced(ctx, a); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Has(ctx, a); ok {
		t.Error("Has reports a deleted blob")
	}
	if _, err := os.Lstat(blobPath(dir, a)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the file is still there: %v", err)
	}
	var listed []blobstore.Digest
	s.List(ctx, func(d blobstore.Digest) error { listed = append(listed, d); return nil })
	if len(listed) != 1 || listed[0] != b {
		t.Errorf("List gives %v, want only %s", listed, b)
	}
	if err := s.DeleteUnsynced(ctx, a); !errors.Is(err, blobstore.ErrNotFound) {
		t.Errorf("deleting it again: %v, want ErrNotFound", err)
	}
	if err := s.SyncDeletes(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.SyncDeletes(ctx); err != nil {
		t.Fatal("a second sync with nothing to do:", err)
	}
}
