package blobstore_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// TestHugeBlobs: a blob above the huge threshold (lowered here to 4 KiB)
// is compressed and read back as a stream, in a pack of its own, and
// behaves as any other: it reads back (plain and encrypted), a second Put
// relies on its copy, a damaged copy is an ErrCorrupt and a Put writes a
// fresh one, and a store without the key cannot read it.
func TestHugeBlobs(t *testing.T) {
	defer blobstore.SetHugeBlob(4 << 10)()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	small := randomText(rng, 1<<10)
	huge := [][]byte{randomText(rng, 100<<10), randomText(rng, 5<<10)}
	for _, encrypted := range []bool{false, true} {
		name := "plain"
		var opt blobstore.OpenOptions
		if encrypted {
			name = "encrypted"
			dir := t.TempDir()
			k := newKeys(t, dir)
			opt = blobstore.OpenOptions{Recipients: []string{k.recipient}, IdentityFiles: []string{k.identityFile}}
		}
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "store")
			open := func(opt blobstore.OpenOptions) blobstore.Store {
				s, err := blobstore.Open(ctx, dir, opt)
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			pending := func(s blobstore.Store, blobs ...[]byte) {
				b := s.(blobstore.Batcher)
				for _, data := range blobs {
					if err := b.PutPending(ctx, blobstore.Sum(data), data); err != nil {
						t.Fatal(err)
					}
				}
				if err := b.Commit(ctx); err != nil {
					t.Fatal(err)
				}
			}
			s := open(opt)
			pending(s, huge[0], small, huge[1], huge[0])
			check := func(s blobstore.Store) {
				t.Helper()
				for _, data := range append(huge, small) {
					got, err := s.Get(ctx, blobstore.Sum(data))
					if err != nil || string(got) != string(data) {
						t.Fatalf("Get of a %d-byte blob: %d bytes, %v", len(data), len(got), err)
					}
				}
			}
			check(s)
			sum := summarize(t, s)
			if sum.Packed != 3 || sum.Packs != 3 || sum.DataBytes != int64(len(small)+len(huge[0])+len(huge[1])) {
				t.Fatalf("after one commit: %+v; want 3 blobs packed, each huge one in a pack of its own, sizes known", sum)
			}
			if encrypted {
				if _, err := open(blobstore.OpenOptions{}).Get(ctx, blobstore.Sum(huge[0])); !errors.Is(err, blobstore.ErrNoIdentity) {
					t.Fatalf("Get without the key: %v, want ErrNoIdentity", err)
				}
			}

			// Another writer relies on the copies.
			s = open(opt)
			pending(s, huge...)
			if got := summarize(t, s); got.Packs != sum.Packs {
				t.Fatalf("a second Put of the huge blobs wrote %d packs, want none", got.Packs-sum.Packs)
			}

			// A damaged copy is corrupt, and a Put writes a fresh one.
			d := blobstore.Sum(huge[0])
			if err := blobstore.DamagePacked(ctx, s, d); err != nil {
				t.Fatal(err)
			}
			s = open(opt)
			if _, err := s.Get(ctx, d); !errors.Is(err, blobstore.ErrCorrupt) {
				t.Fatalf("Get of a damaged huge blob: %v, want ErrCorrupt", err)
			}
			pending(s, huge[0])
			check(open(opt))
		})
	}
}

// TestHugeBlobTruncatedPack: a huge blob whose pack lacks the bytes its
// index names is an error, not other bytes.
func TestHugeBlobTruncatedPack(t *testing.T) {
	defer blobstore.SetHugeBlob(4 << 10)()
	ctx := context.Background()
	s, dir := openTemp(t)
	data := randomText(rand.New(rand.NewPCG(8, 8)), 64<<10)
	if err := s.PutPending(ctx, blobstore.Sum(data), data); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	packs, err := filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
	if err != nil || len(packs) != 1 {
		t.Fatalf("packs %v (%v), want one", packs, err)
	}
	if err := os.Truncate(packs[0], 1000); err != nil {
		t.Fatal(err)
	}
	o, err := blobstore.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := o.Get(ctx, blobstore.Sum(data)); err == nil {
		t.Fatalf("Get from a truncated pack gave %d bytes and no error", len(got))
	}
}

func summarize(t *testing.T, s blobstore.Store) blobstore.Summary {
	t.Helper()
	sum, err := blobstore.Summarize(context.Background(), s, 2)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}
