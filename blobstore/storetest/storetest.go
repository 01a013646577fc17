// Package storetest is a conformance suite for implementations of
// [blobstore.Store].
//
// An implementation's tests call [Run] with a [Harness] describing how to
// create stores and, optionally, how to damage them or reach them from
// another process. Each behaviour is a subtest, so one can be run alone with
// go test -run 'TestX/Delete'.
package storetest

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
)

// Harness tells [Run] how to exercise one Store implementation. Only New is
// required; the subtests that need a nil hook are skipped.
type Harness struct {
	// New returns a fresh, empty store. The store must be cleaned up by
	// the harness (for example with t.Cleanup) when the test ends.
	New func(t *testing.T) blobstore.Store

	// Corrupt damages blob d, which is stored in s, in place, so that its
	// stored form no longer yields its original bytes.
	Corrupt func(t *testing.T, s blobstore.Store, d blobstore.Digest)

	// LeaveCrashedPut leaves in s whatever a Put of data that crashed after
	// writing the blob's content, but before publishing it, would leave
	// behind (for Local, a partially written temp file).
	LeaveCrashedPut func(t *testing.T, s blobstore.Store, data []byte)

	// PutFromOtherProcess starts another OS process that opens the same
	// backing storage as s and waits to be released. Once it is ready,
	// PutFromOtherProcess returns a function run that releases it, waits
	// for it to Put every one of blobs in order and exit, and returns an
	// error if any Put or the process failed. The suite calls run on a
	// goroutine of its own (so run must not call t.Fatal) while it Puts the
	// same blobs in the same order itself, so that both processes write
	// the same blobs at the same time.
	PutFromOtherProcess func(t *testing.T, s blobstore.Store, blobs [][]byte) (run func() error)

	// Age moves blob d's ModTime back by the given duration, as if it had
	// been written that long ago.
	Age func(t *testing.T, s blobstore.Store, d blobstore.Digest, by time.Duration)

	// The pack tests (Packs/…) run on a store that is a blobstore.Batcher
	// and a blobstore.Packer, with these hooks; a subtest whose hook is
	// nil is skipped.

	// Reopen returns another store over the same backing storage as s,
	// as another process (or host) would open it: nothing of s's state
	// shared, its index cache of its own.
	Reopen func(t *testing.T, s blobstore.Store) blobstore.Store
	// AgePacked moves the time of every packed copy in s back by the
	// given duration.
	AgePacked func(t *testing.T, s blobstore.Store, by time.Duration)
	// FirstIndexLayout writes every index file of s again in the first
	// index layout, whose records have no CRC of the stored form.
	FirstIndexLayout func(t *testing.T, s blobstore.Store)
	// DamagePacked flips one byte inside the stored form of every packed
	// copy of d.
	DamagePacked func(t *testing.T, s blobstore.Store, d blobstore.Digest)
	// DropIndexes deletes every index file of s behind its back, leaving
	// packs that no index names, as a writer killed between its pack and
	// its index would; DropPacks deletes every pack, leaving indexes that
	// name packs that are gone.
	DropIndexes, DropPacks func(t *testing.T, s blobstore.Store)
	// AgePackFiles moves back the time of every pack file of s, as the
	// backend reports it (a repack indexes a pack no index names only
	// once it is an hour old).
	AgePackFiles func(t *testing.T, s blobstore.Store, by time.Duration)
}

// Run runs the conformance suite against the implementation described by h.
func Run(t *testing.T, h Harness) {
	if h.New == nil {
		t.Fatal("storetest: Harness.New is nil")
	}
	tests := []struct {
		name string
		fn   func(*testing.T, Harness)
	}{
		{"RoundTrip", testRoundTrip},
		{"NoAliasing", testNoAliasing},
		{"Has", testHas},
		{"Stat", testStat},
		{"RePutRefreshesModTime", testRePutRefreshes},
		{"List", testList},
		{"ListStopsOnError", testListStopsOnError},
		{"ListWhileDeleting", testListWhileDeleting},
		{"Delete", testDelete},
		{"DeleteMissing", testDeleteMissing},
		{"Dedup", testDedup},
		{"GetUnknown", testGetUnknown},
		{"Corrupt", testCorrupt},
		{"PutRepairsDamage", testPutRepairsDamage},
		{"Concurrent", testConcurrent},
		{"OtherProcess", testOtherProcess},
		{"CrashedPut", testCrashedPut},
		{"Canceled", testCanceled},
		{"CanceledDuringList", testCanceledDuringList},
		{"Batch", testBatch},
		{"Packs", testPacks},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, h) })
	}
}

func testRoundTrip(t *testing.T, h Harness) {
	cases := []struct {
		name string
		data []byte
	}{
		{"Empty", []byte{}},
		{"OneByte", []byte{0}},
		{"Random1MiB", randomBytes(1, 1<<20)},
		{"Text", []byte(strings.Repeat(`{"role":"tool","content":"total 0\ndrwx------ 2 user user 4096 .\n"}`+"\n", 200))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := h.New(t)
			d := mustPut(t, s, c.data)
			if want := blobstore.Sum(c.data); d != want {
				t.Fatalf("Put returned digest %s, want %s", d, want)
			}
			got := mustGet(t, s, d)
			if !bytes.Equal(got, c.data) {
				t.Fatalf("Get returned %d bytes that differ from the %d put", len(got), len(c.data))
			}
		})
	}
}

// testNoAliasing checks that neither Put nor Get shares memory with the
// caller, which would let a caller silently change a stored blob.
func testNoAliasing(t *testing.T, h Harness) {
	s := h.New(t)
	orig := []byte("secret token: abc123")
	buf := slices.Clone(orig)
	d := mustPut(t, s, buf)
	clear(buf)

	got := mustGet(t, s, d)
	if !bytes.Equal(got, orig) {
		t.Fatalf("after the caller reused Put's buffer, Get = %q, want %q", got, orig)
	}
	clear(got)
	if again := mustGet(t, s, d); !bytes.Equal(again, orig) {
		t.Fatalf("after the caller modified Get's result, Get = %q, want %q", again, orig)
	}
}

func testHas(t *testing.T, h Harness) {
	s := h.New(t)
	data := []byte("has me")
	d := blobstore.Sum(data)
	if mustHas(t, s, d) {
		t.Fatal("Has = true before Put")
	}
	mustPut(t, s, data)
	if !mustHas(t, s, d) {
		t.Fatal("Has = false after Put")
	}
	if other := blobstore.Sum([]byte("not me")); mustHas(t, s, other) {
		t.Fatal("Has = true for a blob never put")
	}
}

// statSlack allows for a store whose clock (a server's) is not quite ours,
// and for file systems that keep times coarsely.
const statSlack = 2 * time.Second

func testStat(t *testing.T, h Harness) {
	s := h.New(t)
	data := bytes.Repeat([]byte("stat me "), 100)
	d := blobstore.Sum(data)
	if _, err := s.Stat(context.Background(), d); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("Stat before Put = %v, want ErrNotFound", err)
	}
	before := time.Now()
	mustPut(t, s, data)
	after := time.Now()
	info, err := s.Stat(context.Background(), d)
	if err != nil {
		t.Fatalf("Stat after Put: %v", err)
	}
	if info.Size <= 0 {
		t.Errorf("Stat size = %d, want > 0", info.Size)
	}
	if info.ModTime.Before(before.Add(-statSlack)) || info.ModTime.After(after.Add(statSlack)) {
		t.Errorf("Stat ModTime = %v, want between %v and %v", info.ModTime, before, after)
	}
	if err := s.Delete(context.Background(), d); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Stat(context.Background(), d); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("Stat after Delete = %v, want ErrNotFound", err)
	}
}

// testRePutRefreshes checks the promise retention relies on: putting data
// that is already stored makes the blob look freshly written.
func testRePutRefreshes(t *testing.T, h Harness) {
	if h.Age == nil {
		t.Skip("harness has no Age hook")
	}
	s := h.New(t)
	data := []byte("old but wanted again")
	d := mustPut(t, s, data)
	h.Age(t, s, d, 48*time.Hour)
	info, err := s.Stat(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(info.ModTime) < 47*time.Hour {
		t.Fatalf("after Age, ModTime = %v, want two days ago", info.ModTime)
	}
	before := time.Now()
	mustPut(t, s, data)
	if info, err = s.Stat(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if info.ModTime.Before(before.Add(-statSlack)) {
		t.Fatalf("after a second Put, ModTime = %v, want at least %v", info.ModTime, before)
	}
}

// testPutRepairsDamage checks that a Put of data whose blob is stored but
// damaged stores it again: a caller writes a placeholder once Put returns,
// and must be able to get the data back.
func testPutRepairsDamage(t *testing.T, h Harness) {
	if h.Corrupt == nil {
		t.Skip("harness has no Corrupt hook")
	}
	s := h.New(t)
	data := bytes.Repeat([]byte("damaged, then put again "), 50)
	d := mustPut(t, s, data)
	h.Corrupt(t, s, d)
	if _, err := s.Get(context.Background(), d); !errors.Is(err, blobstore.ErrCorrupt) {
		t.Fatalf("Get after Corrupt = %v, want ErrCorrupt", err)
	}
	mustPut(t, s, data)
	got, err := s.Get(context.Background(), d)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("Get after a second Put = %d bytes, %v; want the data back", len(got), err)
	}
}

func testList(t *testing.T, h Harness) {
	s := h.New(t)
	if got := listAll(t, s); len(got) != 0 {
		t.Fatalf("List of an empty store reported %d blobs", len(got))
	}
	// Enough blobs that several share the first digest byte in any
	// sharded layout of 16 or fewer shards, and that most don't in 256.
	var want []blobstore.Digest
	for i := range 40 {
		want = append(want, mustPut(t, s, fmt.Appendf(nil, "blob %d", i)))
	}
	checkList(t, s, want)
}

func testListStopsOnError(t *testing.T, h Harness) {
	s := h.New(t)
	for i := range 3 {
		mustPut(t, s, fmt.Appendf(nil, "blob %d", i))
	}
	stop := errors.New("stop here")
	calls := 0
	err := s.List(context.Background(), func(blobstore.Digest) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) {
		t.Fatalf("List returned %v, want the error returned by fn", err)
	}
	if calls != 1 {
		t.Fatalf("fn was called %d times after returning an error, want 1", calls)
	}
}

// testListWhileDeleting checks the documented promise that fn may delete the
// blob it is handed, which is how a garbage collector would use List.
func testListWhileDeleting(t *testing.T, h Harness) {
	s := h.New(t)
	var want []blobstore.Digest
	for i := range 20 {
		want = append(want, mustPut(t, s, fmt.Appendf(nil, "blob %d", i)))
	}
	var seen []blobstore.Digest
	err := s.List(context.Background(), func(d blobstore.Digest) error {
		seen = append(seen, d)
		return s.Delete(context.Background(), d)
	})
	if err != nil {
		t.Fatalf("List with fn deleting each blob: %v", err)
	}
	sortDigests(seen)
	sortDigests(want)
	if !slices.Equal(seen, want) {
		t.Fatalf("List with fn deleting each blob saw %d blobs, want the %d stored", len(seen), len(want))
	}
	checkList(t, s, nil)
}

func testDelete(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	data := []byte("delete me")
	keep := mustPut(t, s, []byte("keep me"))
	d := mustPut(t, s, data)
	if err := s.Delete(ctx, d); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if mustHas(t, s, d) {
		t.Fatal("Has = true after Delete")
	}
	got, err := s.Get(ctx, d)
	checkNotFound(t, "Get after Delete", d, err)
	if got != nil {
		t.Errorf("Get after Delete returned %d bytes along with its error", len(got))
	}
	checkNotFound(t, "second Delete", d, s.Delete(ctx, d))
	checkList(t, s, []blobstore.Digest{keep})

	// Deleting must not poison the digest.
	mustPut(t, s, data)
	if got := mustGet(t, s, d); !bytes.Equal(got, data) {
		t.Fatalf("Get after Put, Delete, Put = %q, want %q", got, data)
	}
}

func testDeleteMissing(t *testing.T, h Harness) {
	s := h.New(t)
	d := blobstore.Sum([]byte("never put"))
	checkNotFound(t, "Delete of a blob never put", d, s.Delete(context.Background(), d))
}

func testDedup(t *testing.T, h Harness) {
	s := h.New(t)
	data := []byte("twice")
	d1 := mustPut(t, s, data)
	d2 := mustPut(t, s, slices.Clone(data))
	if d1 != d2 {
		t.Fatalf("two Puts of the same bytes returned %s and %s", d1, d2)
	}
	checkList(t, s, []blobstore.Digest{d1})
	if got := mustGet(t, s, d1); !bytes.Equal(got, data) {
		t.Fatalf("Get = %q, want %q", got, data)
	}
}

func testGetUnknown(t *testing.T, h Harness) {
	s := h.New(t)
	mustPut(t, s, []byte("something else"))
	d := blobstore.Sum([]byte("never put"))
	got, err := s.Get(context.Background(), d)
	checkNotFound(t, "Get of a blob never put", d, err)
	if got != nil {
		t.Errorf("Get of a blob never put returned %d bytes along with its error", len(got))
	}
}

func testCorrupt(t *testing.T, h Harness) {
	if h.Corrupt == nil {
		t.Skip("Harness.Corrupt is nil")
	}
	s := h.New(t)
	data := bytes.Repeat([]byte("precious tool output\n"), 100)
	intact := []byte("bystander")
	di := mustPut(t, s, intact)
	d := mustPut(t, s, data)
	h.Corrupt(t, s, d)

	got, err := s.Get(context.Background(), d)
	if !errors.Is(err, blobstore.ErrCorrupt) {
		t.Fatalf("Get of a damaged blob returned error %v, want ErrCorrupt", err)
	}
	if got != nil {
		t.Fatalf("Get of a damaged blob returned %d bytes along with its error", len(got))
	}
	if msg := err.Error(); !strings.Contains(msg, d.String()) || !strings.Contains(msg, "corrupt") {
		t.Errorf("error %q should name the digest and say it is corrupt", msg)
	}
	if got := mustGet(t, s, di); !bytes.Equal(got, intact) {
		t.Fatalf("damaging one blob changed another: Get = %q, want %q", got, intact)
	}
}

// testConcurrent has many goroutines Put, Get and Has the same and different
// blobs at once; run it with -race.
func testConcurrent(t *testing.T, h Harness) {
	s := h.New(t)
	ctx := context.Background()
	const workers = 16
	shared := make([][]byte, 8)
	for i := range shared {
		shared[i] = randomBytes(uint64(100+i), 1000+i*3000)
	}

	var wg sync.WaitGroup
	unique := make([]blobstore.Digest, workers)
	for w := range workers {
		wg.Go(func() {
			own := fmt.Appendf(nil, "worker %d's own blob", w)
			d, err := s.Put(ctx, own)
			if err != nil {
				t.Errorf("worker %d: Put: %v", w, err)
				return
			}
			unique[w] = d
			// Start at different blobs so some workers collide and
			// some don't.
			for i := range shared {
				data := shared[(i+w)%len(shared)]
				d, err := s.Put(ctx, data)
				if err != nil {
					t.Errorf("worker %d: Put: %v", w, err)
					return
				}
				if ok, err := s.Has(ctx, d); err != nil || !ok {
					t.Errorf("worker %d: Has right after Put = %v, %v", w, ok, err)
				}
				got, err := s.Get(ctx, d)
				if err != nil {
					t.Errorf("worker %d: Get right after Put: %v", w, err)
				} else if !bytes.Equal(got, data) {
					t.Errorf("worker %d: Get returned different bytes", w)
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	want := slices.Clone(unique)
	for _, data := range shared {
		want = append(want, blobstore.Sum(data))
	}
	checkList(t, s, want)
}

func testOtherProcess(t *testing.T, h Harness) {
	if h.PutFromOtherProcess == nil {
		t.Skip("Harness.PutFromOtherProcess is nil")
	}
	s := h.New(t)
	ctx := context.Background()
	blobs := make([][]byte, 64)
	for i := range blobs {
		blobs[i] = randomBytes(uint64(1000+i), 1+i*2000)
	}
	run := h.PutFromOtherProcess(t, s, blobs)

	errc := make(chan error, 1)
	go func() { errc <- run() }()
	for _, data := range blobs {
		if _, err := s.Put(ctx, data); err != nil {
			t.Errorf("Put in this process: %v", err)
		}
	}
	if err := <-errc; err != nil {
		t.Errorf("Put in the other process: %v", err)
	}
	if t.Failed() {
		return
	}

	var want []blobstore.Digest
	for _, data := range blobs {
		d := blobstore.Sum(data)
		want = append(want, d)
		if got := mustGet(t, s, d); !bytes.Equal(got, data) {
			t.Fatalf("Get %s returned different bytes", d)
		}
	}
	checkList(t, s, want)
}

func testCrashedPut(t *testing.T, h Harness) {
	if h.LeaveCrashedPut == nil {
		t.Skip("Harness.LeaveCrashedPut is nil")
	}
	s := h.New(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("half written\n"), 1000)
	d := blobstore.Sum(data)
	h.LeaveCrashedPut(t, s, data)

	if mustHas(t, s, d) {
		t.Error("Has = true for a blob whose Put crashed")
	}
	_, err := s.Get(ctx, d)
	checkNotFound(t, "Get of a blob whose Put crashed", d, err)
	checkList(t, s, nil)

	if got := mustPut(t, s, data); got != d {
		t.Fatalf("Put after a crashed Put returned %s, want %s", got, d)
	}
	if got := mustGet(t, s, d); !bytes.Equal(got, data) {
		t.Fatal("Get after a crashed Put and a good one returned different bytes")
	}
	checkList(t, s, []blobstore.Digest{d})
}

// testCanceled checks that every method gives up on an already canceled
// context, which costs an implementation nothing to honour.
func testCanceled(t *testing.T, h Harness) {
	s := h.New(t)
	stored := mustPut(t, s, []byte("stored"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()

	data := []byte("put with a canceled context")
	if _, err := s.Put(ctx, data); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a canceled context returned %v, want context.Canceled", err)
	}
	if mustHas(t, s, blobstore.Sum(data)) {
		t.Error("Put with a canceled context stored the blob")
	}
	if _, err := s.Get(ctx, stored); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context returned %v, want context.Canceled", err)
	}
	if _, err := s.Has(ctx, stored); !errors.Is(err, context.Canceled) {
		t.Errorf("Has with a canceled context returned %v, want context.Canceled", err)
	}
	called := false
	err := s.List(ctx, func(blobstore.Digest) error { called = true; return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context returned %v, want context.Canceled", err)
	}
	if called {
		t.Error("List with a canceled context called fn")
	}
	if err := s.Delete(ctx, stored); !errors.Is(err, context.Canceled) {
		t.Errorf("Delete with a canceled context returned %v, want context.Canceled", err)
	}
	if !mustHas(t, s, stored) {
		t.Error("Delete with a canceled context deleted the blob")
	}
}

func testCanceledDuringList(t *testing.T, h Harness) {
	s := h.New(t)
	for i := range 10 {
		mustPut(t, s, fmt.Appendf(nil, "blob %d", i))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	err := s.List(ctx, func(blobstore.Digest) error {
		calls++
		cancel()
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("List canceled by fn returned %v, want context.Canceled", err)
	}
	if calls != 1 {
		t.Fatalf("List called fn %d times after the context was canceled, want 1", calls)
	}
}

func mustPut(t *testing.T, s blobstore.Store, data []byte) blobstore.Digest {
	t.Helper()
	d, err := s.Put(context.Background(), data)
	if err != nil {
		t.Fatalf("Put of %d bytes: %v", len(data), err)
	}
	return d
}

func mustGet(t *testing.T, s blobstore.Store, d blobstore.Digest) []byte {
	t.Helper()
	data, err := s.Get(context.Background(), d)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	return data
}

func mustHas(t *testing.T, s blobstore.Store, d blobstore.Digest) bool {
	t.Helper()
	ok, err := s.Has(context.Background(), d)
	if err != nil {
		t.Fatalf("Has: %v", err)
	}
	return ok
}

// listAll returns every digest List reports, in the order reported.
func listAll(t *testing.T, s blobstore.Store) []blobstore.Digest {
	t.Helper()
	var ds []blobstore.Digest
	err := s.List(context.Background(), func(d blobstore.Digest) error {
		ds = append(ds, d)
		return nil
	})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	return ds
}

// checkList fails t unless List reports each digest in want exactly once
// and nothing else.
func checkList(t *testing.T, s blobstore.Store, want []blobstore.Digest) {
	t.Helper()
	got := listAll(t, s)
	want = slices.Clone(want)
	sortDigests(got)
	sortDigests(want)
	if !slices.Equal(got, want) {
		t.Fatalf("List reported %d blobs:\n%s\nwant %d:\n%s", len(got), fmtDigests(got), len(want), fmtDigests(want))
	}
}

func checkNotFound(t *testing.T, op string, d blobstore.Digest, err error) {
	t.Helper()
	if !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("%s returned error %v, want ErrNotFound", op, err)
	}
	if msg := err.Error(); !strings.Contains(msg, d.String()) || !strings.Contains(msg, "not found") {
		t.Errorf("%s: error %q should name the digest and say it was not found", op, msg)
	}
}

func sortDigests(ds []blobstore.Digest) {
	slices.SortFunc(ds, func(a, b blobstore.Digest) int { return bytes.Compare(a[:], b[:]) })
}

func fmtDigests(ds []blobstore.Digest) string {
	var b strings.Builder
	for _, d := range ds {
		fmt.Fprintf(&b, "\t%s\n", d)
	}
	return b.String()
}

// randomBytes returns n pseudo-random bytes determined by seed, so failures
// are reproducible.
func randomBytes(seed uint64, n int) []byte {
	var key [32]byte
	binary.LittleEndian.PutUint64(key[:], seed)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// testBatch checks the Batcher contract, for stores that implement it:
// pending blobs are invisible until Commit, visible and readable after it,
// deduplicated against each other and against stored blobs, and a batch
// never committed leaves nothing visible.
func testBatch(t *testing.T, h Harness) {
	s := h.New(t)
	b, ok := s.(blobstore.Batcher)
	if !ok {
		t.Skip("store does not implement blobstore.Batcher")
	}
	ctx := context.Background()
	stored := []byte("already stored")
	if _, err := s.Put(ctx, stored); err != nil {
		t.Fatal(err)
	}
	data := [][]byte{[]byte("pending one"), []byte("pending two"), []byte("pending one"), stored}
	for _, d := range data {
		if err := b.PutPending(ctx, blobstore.Sum(d), d); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range data[:2] {
		if ok, err := s.Has(ctx, blobstore.Sum(d)); err != nil || ok {
			t.Fatalf("pending blob visible before Commit (Has = %v, %v)", ok, err)
		}
		if _, err := s.Get(ctx, blobstore.Sum(d)); !errors.Is(err, blobstore.ErrNotFound) {
			t.Fatalf("Get of a pending blob: %v, want ErrNotFound", err)
		}
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		got, err := s.Get(ctx, blobstore.Sum(d))
		if err != nil || !bytes.Equal(got, d) {
			t.Fatalf("after Commit Get = %q, %v; want %q", got, err, d)
		}
	}
	n := 0
	if err := s.List(ctx, func(blobstore.Digest) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("List sees %d blobs, want 3", n)
	}
	if err := b.Commit(ctx); err != nil {
		t.Fatalf("empty Commit: %v", err)
	}

	// A batch that is never committed, as after a crash, leaves nothing a
	// reader can see, and a later Put of the same data works.
	s2 := h.New(t)
	b2 := s2.(blobstore.Batcher)
	lost := []byte("never committed")
	if err := b2.PutPending(ctx, blobstore.Sum(lost), lost); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s2.Has(ctx, blobstore.Sum(lost)); ok {
		t.Fatal("uncommitted blob is visible")
	}
	if _, err := s2.Put(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if got, err := s2.Get(ctx, blobstore.Sum(lost)); err != nil || !bytes.Equal(got, lost) {
		t.Fatalf("Put after an uncommitted PutPending: %q, %v", got, err)
	}
}
