package blobstore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// A Put of data already stored relies on the stored blob only when it can
// vouch for it: these are the cases where encryption stands in the way.
func TestPutOverOtherRecipients(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	k1, k2 := newKeys(t, t.TempDir()), newKeys(t, t.TempDir())
	data := bytes.Repeat([]byte("secret tool output "), 40)

	s1, err := blobstore.Open(ctx, dir, k1.options())
	if err != nil {
		t.Fatal(err)
	}
	d, err := s1.Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}

	// A writer with its own identity cannot open the blob: it must
	// neither replace it (K1 would lose it) nor rely on it.
	s2, err := blobstore.Open(ctx, dir, k2.options())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Put(ctx, data); err == nil || !errors.Is(err, blobstore.ErrNoIdentity) {
		t.Fatalf("Put over a blob encrypted to others = %v, want an ErrNoIdentity error", err)
	}
	if got, err := s1.Get(ctx, d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the first owner's Get after that = %v", err)
	}

	// A writer with recipients only cannot check, and keeps the blob.
	s3, err := blobstore.Open(ctx, dir, blobstore.OpenOptions{Recipients: []string{k2.recipient}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s3.Put(ctx, data); err != nil {
		t.Fatalf("Put by a writer without identities = %v, want the blob kept", err)
	}
	if got, err := s1.Get(ctx, d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the first owner's Get after that = %v", err)
	}
}

// The batched path extract uses repairs a damaged blob as Put does.
func TestPutPendingRepairsDamage(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	data := bytes.Repeat([]byte("batched value "), 40)
	d := put(t, s, data)
	if err := os.WriteFile(blobPath(dir, d), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.PutPending(ctx, d, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, d); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after PutPending over a damaged blob = %v", err)
	}
}
