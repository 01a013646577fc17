package blobstore

import (
	"bytes"
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// TestReadahead: reads through windows give the bytes asked for, at the
// end of a pack and across windows too; a pack's first read is left to
// the caller; concurrent readers of a window share one fetch.
func TestReadahead(t *testing.T) {
	ctx := context.Background()
	pack := make([]byte, 5*readaheadWindow+12345)
	for i := range pack {
		pack[i] = byte(rand.IntN(256))
	}
	var mu sync.Mutex
	fetched := map[int64]int{}
	fetch := func(ctx context.Context, off int64, n int) ([]byte, error) {
		mu.Lock()
		fetched[off]++
		mu.Unlock()
		if off >= int64(len(pack)) {
			return nil, errors.New("beyond the end") // as S3 answers 416
		}
		end := min(off+int64(n), int64(len(pack)))
		return bytes.Clone(pack[off:end]), nil
	}
	var ra readahead
	id := newPackID()
	if _, ok, err := ra.read(ctx, id, 100, 50, nil, fetch); ok || err != nil {
		t.Fatalf("a pack's first read: ok %v, %v; want it left to the caller", ok, err)
	}
	// Sequential reads of the whole pack, 16 at a time: each batch of 16
	// is done before the next starts, as a restore's readers move on
	// together. (With a free-running pool, one reader the scheduler left
	// behind can come to its window after the others have read past six
	// more and it was dropped: it is fetched again, as it should be.)
	const step, batch = 1000, 16
	var bad atomic.Int32
	for from := int64(0); from < int64(len(pack)); from += step * batch {
		var wg sync.WaitGroup
		for off := from; off < min(from+step*batch, int64(len(pack))); off += step {
			n := int(min(step, int64(len(pack))-off))
			wg.Go(func() {
				out, ok, err := ra.read(ctx, id, off, n, nil, fetch)
				if err != nil {
					t.Error(err)
				}
				if ok && !bytes.Equal(out, pack[off:off+int64(n)]) {
					bad.Add(1)
				}
			})
		}
		wg.Wait()
	}
	if bad.Load() > 0 {
		t.Fatalf("%d reads returned other bytes", bad.Load())
	}
	// Six windows, fetched once each (and evicted as reading moved on),
	// and at most readaheadAhead more, beyond the end, in vain.
	for k := range int64(6) {
		if n := fetched[k*readaheadWindow]; n != 1 {
			t.Errorf("window %d fetched %d times, want once", k, n)
		}
	}
	if len(fetched) > 6+readaheadAhead {
		t.Errorf("%d windows fetched, want at most %d", len(fetched), 6+readaheadAhead)
	}
	if len(ra.kept) > readaheadKept {
		t.Fatalf("%d windows kept, want at most %d", len(ra.kept), readaheadKept)
	}
	// Across two windows: left to the caller.
	if _, ok, _ := ra.read(ctx, id, readaheadWindow-10, 20, nil, fetch); ok {
		t.Fatal("a read across windows was served from them")
	}
}
