package blobstore_test

import (
	"context"
	"fmt"
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
