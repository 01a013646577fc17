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
// is compressed as a stream, and lands where any other would: one that
// compresses well waits in memory and may go loose, one that does not
// joins the pack being filled or starts its own. It reads back (plain and
// encrypted), a second Put relies on its copy, a damaged copy is an
// ErrCorrupt and a Put writes a fresh one, and a store without the key
// cannot read it. In a directory and through object storage (a file://
// URL: Cloud, whose packs are read whole rather than as a stream).
func TestHugeBlobs(t *testing.T) {
	for _, kind := range []string{"dir", "file-url"} {
		t.Run(kind, func(t *testing.T) { testHugeBlobs(t, kind) })
	}
}

func testHugeBlobs(t *testing.T, kind string) {
	defer blobstore.SetHugeBlob(4 << 10)()
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 7))
	small := randomText(rng, 1<<10)
	text := [][]byte{randomText(rng, 100<<10), randomText(rng, 50<<10)}
	noise := [][]byte{noiseOf(rng, 1536<<10), noiseOf(rng, 1536<<10), noiseOf(rng, 1536<<10)}
	all := append(append([][]byte{small}, text...), noise...)
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
			if kind == "file-url" {
				if err := os.Mkdir(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				dir = "file://" + filepath.ToSlash(dir)
			}
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
			check := func(s blobstore.Store) {
				t.Helper()
				for _, data := range all {
					got, err := s.Get(ctx, blobstore.Sum(data))
					if err != nil || string(got) != string(data) {
						t.Fatalf("Get of a %d-byte blob: %d bytes, %v", len(data), len(got), err)
					}
				}
			}
			layout := func(step string, packed, packs, loose int64) blobstore.Summary {
				t.Helper()
				sum := summarize(t, s)
				if sum.Packed != packed || sum.Packs != packs || sum.Loose != loose {
					t.Fatalf("%s: %+v; want %d packed in %d packs, %d loose", step, sum, packed, packs, loose)
				}
				return sum
			}
			// Text waits in memory, then the noise fills the pack.
			pending(s, text[0], small, noise[0], noise[1], text[0])
			layout("a batch of text and noise", 4, 1, 0)
			pending(s, text[1])
			var sum blobstore.Summary
			if kind == "dir" {
				// A small batch goes loose in a directory.
				layout("a batch of one huge value that compresses well", 4, 1, 1)
				pending(s, noise[2]) // a pack of its own
				sum = layout("a batch of one huge value that does not compress", 5, 2, 1)
			} else {
				// Object storage packs every batch.
				layout("a batch of one huge value that compresses well", 5, 2, 0)
				pending(s, noise[2])
				sum = layout("a batch of one huge value that does not compress", 6, 3, 0)
			}
			check(s)
			var problems []blobstore.Problem
			res, err := blobstore.Verify(ctx, s, blobstore.VerifyOptions{OnProblem: func(p blobstore.Problem) { problems = append(problems, p) }})
			if err != nil || res.Checked != int64(len(all)) || len(problems) != 0 {
				t.Fatalf("Verify = %+v, %v, problems %v; want %d checked, none wrong (the streamed forms' CRCs among them)", res, err, problems, len(all))
			}
			if encrypted {
				if _, err := open(blobstore.OpenOptions{}).Get(ctx, blobstore.Sum(noise[0])); !errors.Is(err, blobstore.ErrNoIdentity) {
					t.Fatalf("Get without the key: %v, want ErrNoIdentity", err)
				}
			}

			// Another writer relies on the copies.
			s = open(opt)
			pending(s, all...)
			if got := summarize(t, s); got.Packs != sum.Packs || got.Loose != sum.Loose {
				t.Fatalf("a second Put of the blobs wrote %d packs and %d loose blobs, want none", got.Packs-sum.Packs, got.Loose-sum.Loose)
			}

			// A damaged copy is corrupt, and a Put writes a fresh one.
			d := blobstore.Sum(noise[0])
			if err := blobstore.DamagePacked(ctx, s, d); err != nil {
				t.Fatal(err)
			}
			s = open(opt)
			if _, err := s.Get(ctx, d); !errors.Is(err, blobstore.ErrCorrupt) {
				t.Fatalf("Get of a damaged huge blob: %v, want ErrCorrupt", err)
			}
			pending(s, noise[0])
			check(open(opt))

			if kind == "dir" {
				// A damaged loose copy too: a Put compares it with the
				// data as it decodes it, and writes it again.
				hex := blobstore.Sum(text[1]).Hex()
				name := filepath.Join(dir, "blobs", "sha256", hex[:2], hex[2:])
				b, err := os.ReadFile(name)
				if err != nil {
					t.Fatal(err)
				}
				b[len(b)/2] ^= 0x55
				if err := os.WriteFile(name, b, 0o600); err != nil {
					t.Fatal(err)
				}
				s = open(opt)
				if _, err := s.Get(ctx, blobstore.Sum(text[1])); !errors.Is(err, blobstore.ErrCorrupt) {
					t.Fatalf("Get of a damaged loose huge blob: %v, want ErrCorrupt", err)
				}
				pending(s, text[1])
				check(open(opt))
			}
		})
	}
}

// TestHugeBlobTruncatedPack: a huge blob whose pack lacks the bytes its
// index names is an error, not other bytes.
func TestHugeBlobTruncatedPack(t *testing.T) {
	defer blobstore.SetHugeBlob(4 << 10)()
	ctx := context.Background()
	s, dir := openTemp(t)
	data := noiseOf(rand.New(rand.NewPCG(8, 8)), 1536<<10)
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

// noiseOf is n random bytes, which do not compress.
func noiseOf(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}
