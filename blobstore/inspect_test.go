package blobstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// TestVerifyProgress: Verify reports its progress in order, however many
// workers check packs and loose blobs at once: the count never goes
// backwards, and the last report is the total.
func TestVerifyProgress(t *testing.T) {
	ctx := context.Background()
	s, _ := openTemp(t)
	for c := range 6 {
		for i := range 100 {
			data := fmt.Appendf(nil, "pack %d blob %d", c, i)
			if err := s.PutPending(ctx, blobstore.Sum(data), data); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		put(t, s, fmt.Appendf(nil, "loose blob %d", i))
	}
	var mu sync.Mutex
	var seen []int64
	res, err := blobstore.Verify(ctx, s, blobstore.VerifyOptions{Workers: 8, Progress: func(done, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if total != 750 {
			t.Errorf("progress total %d, want 750", total)
		}
		seen = append(seen, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 750 || res.Corrupt != 0 {
		t.Fatalf("Verify = %+v, want 750 checked", res)
	}
	if len(seen) < 5 || seen[len(seen)-1] != 750 {
		t.Fatalf("progress reports %v: want several, the last 750", seen)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] <= seen[i-1] {
			t.Fatalf("progress went from %d to %d", seen[i-1], seen[i])
		}
	}
}

// TestVerifyLostPacks: a pack the indexes name that is gone is a damaged
// file naming it, and one cut short makes each copy past the cut corrupt
// while those before it check out; neither stops Verify.
func TestVerifyLostPacks(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	commitIncompressible(t, s, 2, 50)
	packs, _ := filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
	if len(packs) != 2 {
		t.Fatalf("%d packs, want 2", len(packs))
	}
	if err := os.Remove(packs[0]); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(packs[1])
	if err := os.Truncate(packs[1], fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	var problems []blobstore.Problem
	res, err := blobstore.Verify(ctx, s, blobstore.VerifyOptions{Workers: 2, OnProblem: func(p blobstore.Problem) { problems = append(problems, p) }})
	if err != nil {
		t.Fatalf("Verify stopped: %v", err)
	}
	lost := strings.TrimSuffix(filepath.Base(packs[0]), ".pack")
	missing := 0
	for _, p := range problems {
		if p.Pack == lost && strings.Contains(p.Err.Error(), "is missing: the indexes name 50 blob copies in it") {
			missing++
		}
	}
	// The cut pack's trailer is gone too: a damaged file, and its copies
	// as its index gives them, about half of them past the cut.
	if missing != 1 || res.Damaged != 2 || res.Checked != 50 || res.Corrupt < 20 || res.Corrupt > 30 {
		t.Errorf("Verify = %+v, %d problems naming the lost pack; want 2 damaged files, 50 checked, about 25 corrupt", res, missing)
		for _, p := range problems {
			t.Log(p.Err)
		}
	}
}

// TestRepackCutPack: repack carries the whole copies of a pack cut short
// into a new pack, reports the others as damaged, and keeps that pack.
func TestRepackCutPack(t *testing.T) {
	ctx := context.Background()
	s, dir := openTemp(t)
	blobs := commitIncompressible(t, s, 2, 50)
	packs, _ := filepath.Glob(filepath.Join(dir, "packs", "*.pack"))
	fi, _ := os.Stat(packs[1])
	if err := os.Truncate(packs[1], fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	res, err := s.Repack(ctx, blobstore.RepackOptions{Small: 1 << 30})
	if err != nil {
		t.Fatalf("Repack stopped: %v", err)
	}
	if len(res.Damaged) < 20 || len(res.Damaged) > 30 {
		t.Errorf("%d damaged copies, want about 25", len(res.Damaged))
	}
	if _, err := os.Stat(packs[1]); err != nil {
		t.Errorf("the cut pack went: %v", err)
	}
	readable := 0
	for _, b := range blobs {
		if got, err := s.Get(ctx, blobstore.Sum(b)); err == nil && string(got) == string(b) {
			readable++
		}
	}
	if readable != 100-len(res.Damaged) {
		t.Errorf("%d blobs read back after the repack, want %d", readable, 100-len(res.Damaged))
	}
}

// commitIncompressible commits packs packs of per blobs each, of 3 KiB
// that do not compress, so that the copies rather than the trailer fill
// each pack; it returns the blobs.
func commitIncompressible(t *testing.T, s *blobstore.Local, packs, per int) [][]byte {
	t.Helper()
	ctx := context.Background()
	var blobs [][]byte
	for c := range packs {
		for i := range per {
			data := fmt.Appendf(nil, "pack %d blob %d ", c, i)
			for range 100 {
				sum := blobstore.Sum(data)
				data = append(data, sum[:]...)
			}
			blobs = append(blobs, data)
			if err := s.PutPending(ctx, blobstore.Sum(data), data); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return blobs
}
