package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
)

// testPacks runs the pack subtests: batches written as packs and an
// index, read by other instances, written by several at once, repacked,
// pruned, damaged, and left half written by a crash.
func testPacks(t *testing.T, h Harness) {
	probe := h.New(t)
	if _, ok := probe.(blobstore.Batcher); !ok {
		t.Skip("store does not implement blobstore.Batcher")
	}
	if _, ok := probe.(blobstore.Packer); !ok {
		t.Skip("store does not implement blobstore.Packer")
	}
	for _, tt := range []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"Batch", testPackBatch},
		{"BigBatch", testPackBigBatch},
		{"OtherInstance", testPackOtherInstance},
		{"ConcurrentWriters", testPackConcurrentWriters},
		{"Delete", testPackDelete},
		{"Corrupt", testPackCorrupt},
		{"FirstIndexLayout", testFirstIndexLayout},
		{"Repack", testRepack},
		{"RepackWhileWriting", testRepackWhileWriting},
		{"Prune", testPrune},
		{"PruneKeepsRecentCopies", testPruneKeepsRecent},
		{"CrashBetweenPackAndIndex", testCrashBeforeIndex},
		{"IndexNamesMissingPack", testMissingPack},
	} {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

// packBlobs are n blobs of varied sizes and content, unique to seed:
// more than a store writes loose in one commit.
func packBlobs(seed uint64, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		if i%3 == 0 {
			out[i] = randomBytes(seed*1000+uint64(i), 100+i*97)
		} else {
			out[i] = []byte(strings.Repeat(fmt.Sprintf(`{"seed":%d,"i":%d,"text":"tool output line"}`+"\n", seed, i), 1+i%40))
		}
	}
	return out
}

// commit stores blobs with PutPending and one Commit.
func commit(t *testing.T, s blobstore.Store, blobs [][]byte) []blobstore.Digest {
	t.Helper()
	ctx := context.Background()
	b := s.(blobstore.Batcher)
	ds := make([]blobstore.Digest, len(blobs))
	for i, data := range blobs {
		ds[i] = blobstore.Sum(data)
		if err := b.PutPending(ctx, ds[i], data); err != nil {
			t.Fatalf("PutPending: %v", err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatalf("Commit: %v", err)
	}
	return ds
}

// checkAll fails t unless s returns every one of blobs intact.
func checkAll(t *testing.T, s blobstore.Store, blobs [][]byte) {
	t.Helper()
	for _, data := range blobs {
		d := blobstore.Sum(data)
		got, err := s.Get(context.Background(), d)
		if err != nil {
			t.Fatalf("Get %s: %v", d, err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("Get %s returned other bytes", d)
		}
	}
}

// checkHolds fails t unless s returns every one of blobs intact and
// lists them, each once, and nothing else.
func checkHolds(t *testing.T, s blobstore.Store, blobs [][]byte) {
	t.Helper()
	checkAll(t, s, blobs)
	checkList(t, s, digestsOf(blobs))
}

func digestsOf(blobs [][]byte) []blobstore.Digest {
	var ds []blobstore.Digest
	for _, b := range blobs {
		d := blobstore.Sum(b)
		if !slices.Contains(ds, d) {
			ds = append(ds, d)
		}
	}
	return ds
}

func summary(t *testing.T, s blobstore.Store) blobstore.Summary {
	t.Helper()
	sum, err := blobstore.Summarize(context.Background(), s, 4)
	if err != nil {
		t.Fatalf("Summarize: %v", err)
	}
	return sum
}

// testPackBatch: a batch is invisible until Commit, then one pack and one
// index hold it, each blob once, sizes known from the index.
func testPackBatch(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	blobs := packBlobs(1, 40)
	blobs = append(blobs, blobs[3], blobs[7]) // duplicates in the batch
	b := s.(blobstore.Batcher)
	for _, data := range blobs {
		if err := b.PutPending(ctx, blobstore.Sum(data), data); err != nil {
			t.Fatal(err)
		}
	}
	for _, data := range blobs[:5] {
		d := blobstore.Sum(data)
		if ok, err := s.Has(ctx, d); err != nil || ok {
			t.Fatalf("pending blob visible before Commit: Has = %v, %v", ok, err)
		}
		if _, err := s.Get(ctx, d); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("Get of a pending blob: %v, want ErrNotFound", err)
		}
	}
	checkList(t, s, nil)
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	checkHolds(t, s, blobs)
	sum := summary(t, s)
	if sum.Packed != 40 || sum.Loose != 0 || sum.Packs != 1 || sum.Indexes != 1 || sum.SizedBlobs != 40 {
		t.Fatalf("after one commit of 40 blobs: %+v; want 40 packed, in 1 pack, 1 index, all sized", sum)
	}
	var data int64
	for _, b := range blobs[:40] {
		data += int64(len(b))
	}
	if sum.DataBytes != data {
		t.Fatalf("Summarize says %d data bytes, want %d", sum.DataBytes, data)
	}
	for _, d := range digestsOf(blobs)[:3] {
		if _, err := s.Stat(ctx, d); err != nil {
			t.Fatalf("Stat of a packed blob: %v", err)
		}
	}
	verifyClean(t, s, 40)
}

// verifyClean checks that Verify reads n blobs of s and finds nothing
// wrong: every copy decodes to its digest, and the CRC its index record
// gives is its stored form's.
func verifyClean(t *testing.T, s blobstore.Store, n int64) {
	t.Helper()
	var problems []blobstore.Problem
	res, err := blobstore.Verify(context.Background(), s, blobstore.VerifyOptions{Workers: 2, OnProblem: func(p blobstore.Problem) { problems = append(problems, p) }})
	if err != nil || res.Checked != n || len(problems) != 0 {
		t.Fatalf("Verify = %+v, %v, problems %v; want %d checked, none wrong", res, err, problems, n)
	}
}

// testPackBigBatch: a batch larger than a pack is split into packs.
func testPackBigBatch(t *testing.T, h Harness) {
	s := h.New(t)
	var blobs [][]byte
	for i := range 3 {
		blobs = append(blobs, randomBytes(uint64(77+i), 7<<20)) // incompressible
	}
	blobs = append(blobs, packBlobs(2, 10)...)
	commit(t, s, blobs)
	checkAll(t, s, blobs)
	if sum := summary(t, s); sum.Packs < 2 || sum.Indexes != 1 || sum.Packed != int64(len(blobs)) {
		t.Fatalf("after a commit of %d blobs, 21 MiB: %+v; want at least 2 packs and 1 index", len(blobs), sum)
	}
}

// testPackOtherInstance: another instance (process, host) reads what was
// committed, before and after it first looked.
func testPackOtherInstance(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("harness has no Reopen hook")
	}
	s := h.New(t)
	a := packBlobs(3, 20)
	commit(t, s, a)
	other := h.Reopen(t, s)
	checkAll(t, other, a)
	b := packBlobs(4, 20)
	commit(t, s, b)
	checkAll(t, other, b) // committed after other loaded the indexes
	if ok, err := other.Has(context.Background(), blobstore.Sum(b[5])); err != nil || !ok {
		t.Fatalf("Has in another instance = %v, %v", ok, err)
	}
	checkList(t, other, digestsOf(append(a, b...)))
}

// testPackConcurrentWriters: instances write overlapping batches at once,
// without a lock; every blob is there once, for any reader.
func testPackConcurrentWriters(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("harness has no Reopen hook")
	}
	s := h.New(t)
	const writers, rounds = 4, 4
	shared := packBlobs(5, 30)
	var all [][]byte
	all = append(all, shared...)
	own := make([][][]byte, writers)
	for w := range writers {
		own[w] = packBlobs(uint64(10+w), 25)
		all = append(all, own[w]...)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		ws := h.Reopen(t, s)
		wg.Go(func() {
			ctx := context.Background()
			b := ws.(blobstore.Batcher)
			for r := range rounds {
				batch := append(slices.Clone(own[w][r*5:r*5+5]), shared[(w+r)*3%len(shared):][:8]...)
				for _, data := range batch {
					if err := b.PutPending(ctx, blobstore.Sum(data), data); err != nil {
						errs <- err
						return
					}
				}
				if err := b.Commit(ctx); err != nil {
					errs <- err
					return
				}
			}
			for _, data := range own[w][rounds*5:] {
				if err := b.PutPending(ctx, blobstore.Sum(data), data); err != nil {
					errs <- err
					return
				}
			}
			if err := b.Commit(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, data := range shared {
		if _, err := s.Put(context.Background(), data); err != nil {
			t.Fatal(err)
		}
	}
	reader := h.Reopen(t, s)
	checkHolds(t, reader, all)
}

// testPackDelete: deleting a packed blob leaves the others of its pack.
func testPackDelete(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	blobs := packBlobs(6, 20)
	ds := commit(t, s, blobs)
	if err := s.Delete(ctx, ds[4]); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Has(ctx, ds[4]); err != nil || ok {
		t.Fatalf("Has after Delete = %v, %v", ok, err)
	}
	_, err := s.Get(ctx, ds[4])
	checkNotFound(t, "Get after Delete", ds[4], err)
	checkNotFound(t, "second Delete", ds[4], s.Delete(ctx, ds[4]))
	rest := append(slices.Clone(blobs[:4]), blobs[5:]...)
	checkHolds(t, s, rest)
	if h.Reopen != nil {
		other := h.Reopen(t, s)
		checkHolds(t, other, rest)
	}
	// Deleting must not poison the digest.
	commit(t, s, blobs[4:5])
	checkAll(t, s, blobs)
}

// testPackCorrupt: a damaged byte in a pack fails the read of that one
// blob, naming it, and Verify names it and its pack; storing the data
// again repairs it.
func testPackCorrupt(t *testing.T, h Harness) {
	if h.DamagePacked == nil {
		t.Skip("harness has no DamagePacked hook")
	}
	s := h.New(t)
	ctx := context.Background()
	blobs := packBlobs(7, 20)
	ds := commit(t, s, blobs)
	h.DamagePacked(t, s, ds[6])
	got, err := s.Get(ctx, ds[6])
	if !errors.Is(err, blobstore.ErrCorrupt) || got != nil {
		t.Fatalf("Get of a damaged packed blob = %d bytes, %v; want ErrCorrupt", len(got), err)
	}
	if !strings.Contains(err.Error(), ds[6].String()) {
		t.Fatalf("error %q does not name the blob", err)
	}
	rest := append(slices.Clone(blobs[:6]), blobs[7:]...)
	checkAll(t, s, rest)
	var problems []blobstore.Problem
	res, err := blobstore.Verify(ctx, s, blobstore.VerifyOptions{Workers: 3, OnProblem: func(p blobstore.Problem) { problems = append(problems, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Checked != 20 || res.Corrupt != 1 || len(problems) != 1 || problems[0].Digest != ds[6] || problems[0].Pack == "" {
		t.Fatalf("Verify = %+v, problems %v; want 20 checked, the damaged blob and its pack named", res, problems)
	}
	commit(t, s, blobs[6:7])
	checkAll(t, s, blobs)
}

// testFirstIndexLayout: a store whose index files are in the first
// layout, written before records carried a CRC, reads as ever, here and
// in another process; a damaged copy such an index names is still found
// out when a writer would rely on it (by decoding it), and stored again.
func testFirstIndexLayout(t *testing.T, h Harness) {
	if h.FirstIndexLayout == nil || h.DamagePacked == nil || h.Reopen == nil {
		t.Skip("harness has no FirstIndexLayout, DamagePacked or Reopen hook")
	}
	s := h.New(t)
	blobs := packBlobs(11, 20)
	ds := commit(t, s, blobs)
	h.FirstIndexLayout(t, s)
	o := h.Reopen(t, s)
	checkAll(t, o, blobs)
	h.DamagePacked(t, o, ds[4])
	// A writer that has not read the pack before (a process may keep what
	// it read of one, which the damage, a pack written again, bypasses).
	w := h.Reopen(t, s)
	commit(t, w, blobs[4:5])
	checkAll(t, w, blobs)
	checkAll(t, h.Reopen(t, s), blobs)
}

// testRepack: many small packs and loose blobs become one pack and one
// index; every blob stays readable, by this instance and another.
func testRepack(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	var all [][]byte
	for i := range 6 {
		b := packBlobs(uint64(20+i), 12)
		commit(t, s, b)
		all = append(all, b...)
	}
	for i := range 5 {
		data := fmt.Appendf(nil, "loose blob %d", i)
		if _, err := s.Put(ctx, data); err != nil {
			t.Fatal(err)
		}
		all = append(all, data)
	}
	before := summary(t, s)
	if before.Packs != 6 || before.Loose != 5 {
		t.Fatalf("before repack: %+v; want 6 packs and 5 loose blobs", before)
	}
	var other blobstore.Store
	if h.Reopen != nil {
		other = h.Reopen(t, s)
		checkAll(t, other, all) // loads the indexes repack replaces
	}
	res, err := s.(blobstore.Packer).Repack(ctx, blobstore.RepackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Merged != 6 || res.Loose != 5 || res.PacksAfter != 1 || len(res.Damaged) != 0 {
		t.Fatalf("Repack = %+v; want 6 packs merged, 5 loose packed, 1 pack after", res)
	}
	after := summary(t, s)
	if after.Packs != 1 || after.Indexes != 1 || after.Loose != 0 || after.Packed != int64(len(digestsOf(all))) || after.Copies != 0 {
		t.Fatalf("after repack: %+v; want everything in 1 pack and 1 index", after)
	}
	checkHolds(t, s, all)
	if other != nil {
		checkAll(t, other, all) // its indexes name deleted packs
	}
	again, err := s.(blobstore.Packer).Repack(ctx, blobstore.RepackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if again.Merged != 0 || again.Loose != 0 || again.PacksAfter != 1 {
		t.Fatalf("a second Repack = %+v; want nothing to do", again)
	}
	verifyClean(t, s, after.Packed)
}

// testRepackWhileWriting: a repack beside a writer loses nothing.
func testRepackWhileWriting(t *testing.T, h Harness) {
	if h.Reopen == nil {
		t.Skip("harness has no Reopen hook")
	}
	s := h.New(t)
	var all [][]byte
	for i := range 4 {
		b := packBlobs(uint64(40+i), 10)
		commit(t, s, b)
		all = append(all, b...)
	}
	writer := h.Reopen(t, s)
	var more [][]byte
	for i := range 6 {
		more = append(more, packBlobs(uint64(50+i), 8)...)
	}
	done := make(chan error)
	go func() {
		ctx := context.Background()
		b := writer.(blobstore.Batcher)
		for i, data := range more {
			if err := b.PutPending(ctx, blobstore.Sum(data), data); err != nil {
				done <- err
				return
			}
			if i%8 == 7 {
				if err := b.Commit(ctx); err != nil {
					done <- err
					return
				}
			}
		}
		done <- nil
	}()
	var repackErr error
	for range 3 {
		if _, err := s.(blobstore.Packer).Repack(context.Background(), blobstore.RepackOptions{}); err != nil {
			repackErr = err
			break
		}
	}
	if err := <-done; err != nil {
		t.Fatalf("writer: %v", err)
	}
	if repackErr != nil {
		t.Fatal(repackErr)
	}
	all = append(all, more...)
	reader := h.Reopen(t, s)
	checkHolds(t, reader, all)
}

// testPrune: unreferenced blobs older than the cutoff go: packs that hold
// nothing else are deleted, packs mostly dead are rewritten; the
// referenced and the recent stay.
func testPrune(t *testing.T, h Harness) {
	if h.AgePacked == nil {
		t.Skip("harness has no AgePacked hook")
	}
	s := h.New(t)
	ctx := context.Background()
	dead := packBlobs(60, 15) // a pack of unreferenced blobs
	commit(t, s, dead)
	mixed := packBlobs(61, 16) // a pack three-quarters unreferenced
	commit(t, s, mixed)
	mostlyLive := packBlobs(62, 16) // a pack one unreferenced blob in
	commit(t, s, mostlyLive)
	h.AgePacked(t, s, 5*time.Hour)
	recent := packBlobs(63, 10) // unreferenced, but new
	commit(t, s, recent)

	live := map[blobstore.Digest]bool{}
	var keep, gone [][]byte
	for i, b := range mixed {
		if i%4 == 0 {
			live[blobstore.Sum(b)] = true
			keep = append(keep, b)
		} else {
			gone = append(gone, b)
		}
	}
	for _, b := range mostlyLive[1:] {
		live[blobstore.Sum(b)] = true
		keep = append(keep, b)
	}
	gone = append(gone, dead...)
	opt := blobstore.PruneOptions{Keep: func(d blobstore.Digest) bool { return live[d] }, Cutoff: time.Now().Add(-time.Hour)}
	dry := opt
	dry.DryRun = true
	pk := s.(blobstore.Packer)
	dr, err := pk.Prune(ctx, dry)
	if err != nil {
		t.Fatal(err)
	}
	checkAll(t, s, append(append(append(slices.Clone(keep), gone...), recent...), mostlyLive[0]))
	res, err := pk.Prune(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != len(gone) || len(dr.Removed) != len(gone) {
		t.Fatalf("Prune removed %d blobs (dry run: %d), want %d: %+v", len(res.Removed), len(dr.Removed), len(gone), res)
	}
	if res.PacksDeleted != 1 || res.PacksRewritten != 1 || res.LeftDead != 1 || res.Recent != len(recent) || res.Freed <= 0 {
		t.Fatalf("Prune = %+v; want 1 pack deleted, 1 rewritten, 1 dead blob left, %d recent, bytes freed", res, len(recent))
	}
	for _, b := range gone {
		if _, err := s.Get(ctx, blobstore.Sum(b)); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("Get of a pruned blob: %v, want ErrNotFound", err)
		}
	}
	stay := append(append(slices.Clone(keep), recent...), mostlyLive[0])
	checkHolds(t, s, stay)
	if h.Reopen != nil {
		other := h.Reopen(t, s)
		checkAll(t, other, stay)
	}
}

// testPruneKeepsRecent: a packed copy younger than twice the grace period
// stays whatever the cutoff (a writer may rely on it without writing it
// again); and a re-Put of a blob whose only copy is older than the grace
// period writes a fresh copy, which the next prune keeps.
func testPruneKeepsRecent(t *testing.T, h Harness) {
	if h.AgePacked == nil {
		t.Skip("harness has no AgePacked hook")
	}
	s := h.New(t)
	ctx := context.Background()
	pk := s.(blobstore.Packer)
	none := func(blobstore.Digest) bool { return false }
	young := packBlobs(70, 10)
	commit(t, s, young)
	res, err := pk.Prune(ctx, blobstore.PruneOptions{Keep: none, Cutoff: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != 0 || res.Recent != len(young) {
		t.Fatalf("Prune of packed blobs written just now = %+v; want all kept as recent", res)
	}
	checkAll(t, s, young)

	h.AgePacked(t, s, 5*time.Hour)
	// A writer re-uses one of them now: its copy is too old to rely on.
	commit(t, s, young[3:4])
	res, err = pk.Prune(ctx, blobstore.PruneOptions{Keep: none, Cutoff: time.Now().Add(-time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Removed) != len(young)-1 || res.Recent != 1 {
		t.Fatalf("Prune after a re-Put = %+v; want %d removed and the re-used one kept", res, len(young)-1)
	}
	checkAll(t, s, young[3:4])
}

// testCrashBeforeIndex: a pack whose index was never written (a writer
// killed in between) is invisible; writing the blobs again works; a
// repack indexes it from its trailer once it is old.
func testCrashBeforeIndex(t *testing.T, h Harness) {
	if h.DropIndexes == nil {
		t.Skip("harness has no DropIndexes hook")
	}
	s := h.New(t)
	ctx := context.Background()
	blobs := packBlobs(80, 12)
	ds := commit(t, s, blobs)
	h.DropIndexes(t, s)
	fresh := s
	if h.Reopen != nil {
		fresh = h.Reopen(t, s)
	}
	if ok, err := fresh.Has(ctx, ds[2]); err != nil || ok {
		t.Fatalf("Has of a blob whose index is gone = %v, %v", ok, err)
	}
	checkList(t, fresh, nil)
	if h.AgePackFiles == nil {
		commit(t, fresh, blobs)
		checkAll(t, fresh, blobs)
		return
	}
	// Too new to be taken for a crashed writer's: left alone.
	if _, err := fresh.(blobstore.Packer).Repack(ctx, blobstore.RepackOptions{}); err != nil {
		t.Fatal(err)
	}
	checkList(t, fresh, nil)
	h.AgePackFiles(t, fresh, 2*time.Hour)
	res, err := fresh.(blobstore.Packer).Repack(ctx, blobstore.RepackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reindexed != 1 {
		t.Fatalf("Repack = %+v; want the pack indexed from its trailer", res)
	}
	checkHolds(t, fresh, blobs)
}

// testMissingPack: an index naming a pack that is gone (deleted behind
// the store's back) makes its blobs missing, never wrong; writing them
// again works, and a repack drops the dangling records.
func testMissingPack(t *testing.T, h Harness) {
	if h.DropPacks == nil {
		t.Skip("harness has no DropPacks hook")
	}
	s := h.New(t)
	ctx := context.Background()
	blobs := packBlobs(90, 12)
	ds := commit(t, s, blobs)
	h.DropPacks(t, s)
	if ok, err := s.Has(ctx, ds[1]); err != nil || ok {
		t.Fatalf("Has of a blob whose pack is gone = %v, %v", ok, err)
	}
	_, err := s.Get(ctx, ds[1])
	checkNotFound(t, "Get of a blob whose pack is gone", ds[1], err)
	checkList(t, s, nil)
	commit(t, s, blobs)
	checkAll(t, s, blobs)
	if _, err := s.(blobstore.Packer).Repack(ctx, blobstore.RepackOptions{}); err != nil {
		t.Fatal(err)
	}
	if sum := summary(t, s); sum.Indexes != 1 || sum.Packed != int64(len(blobs)) {
		t.Fatalf("after repack: %+v; want one index of the %d blobs", sum, len(blobs))
	}
	checkAll(t, s, blobs)
}
