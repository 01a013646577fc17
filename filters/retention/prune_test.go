package retention_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/retention"
)

// TestPrune: a run marks the live transcripts, then deletes the old
// unreferenced blobs, the checkpoints beyond the newest of each key and
// the holder files nothing names, and reports them in that order; a dry
// run reports the same and deletes nothing; a transcript that cannot be
// marked stops the run before anything is deleted.
func TestPrune(t *testing.T) {
	ctx := context.Background()
	// The store's clock is the wall clock's, as the holder files' times are.
	store := newClockStore(time.Now().Add(-96 * time.Hour))
	kept, _ := store.Put(ctx, []byte(`"kept"`))
	orphan, _ := store.Put(ctx, []byte(`"orphan"`))
	store.advance(96 * time.Hour)
	dir := t.TempDir()
	live := filepath.Join(dir, "live.jsonl")
	os.WriteFile(live, []byte(extracted(kept)), 0o600)
	cps := checkpoint.Dir{Root: filepath.Join(dir, "checkpoints")}
	os.MkdirAll(cps.KeyDir("k"), 0o700)
	for _, name := range []string{"cp_001.yaml", "cp_002.yaml"} {
		os.WriteFile(filepath.Join(cps.KeyDir("k"), name), []byte("x"), 0o600)
	}
	holders := filepath.Join(dir, "holders")
	os.Mkdir(holders, 0o700)
	dead := filepath.Join(holders, "fedcba9876543210.jsonl")
	os.WriteFile(dead, []byte("x\n"), 0o600)
	old := time.Now().Add(-48 * time.Hour)
	os.Chtimes(dead, old, old)

	opt := retention.Options{
		SweepOptions: retention.SweepOptions{Cutoff: store.now.Add(-24 * time.Hour), DryRun: true},
		Keep:         1, Checkpoints: cps, Holders: holders,
	}
	marked := 0
	opt.Marked = func(i int, path string, sc retention.Scan) {
		if i != 0 || path != live || sc.Refs != 1 {
			t.Errorf("marked %d %s %+v", i, path, sc)
		}
		marked++
	}
	var names []string
	for _, dryRun := range []bool{true, false} {
		opt.DryRun = dryRun
		res, err := retention.Prune(ctx, store, []string{live}, opt)
		if err != nil {
			t.Fatal(err)
		}
		names = names[:0]
		for _, it := range res.Items {
			names = append(names, filepath.Base(it.Name))
		}
		want := []string{orphan.String(), "cp_001.yaml", "fedcba9876543210.jsonl"}
		if blobs := res.Blobs(); len(blobs) != 1 || blobs[0].Name != orphan.String() || len(names) != 3 || names[0] != want[0] || names[1] != want[1] || names[2] != want[2] {
			t.Fatalf("dry run %v: blobs %v, items %v; want %v", dryRun, res.Blobs(), names, want)
		}
		r := res.Report
		if r.DryRun != dryRun || r.Sessions != 1 || r.Blobs.Deleted != 1 || r.Blobs.Referenced != 1 || r.Checkpoints.Deleted != 1 || r.Holders.Deleted != 1 {
			t.Errorf("dry run %v: report %+v", dryRun, r)
		}
		has, _ := store.Has(ctx, orphan)
		_, statErr := os.Stat(dead)
		if has != dryRun || (statErr == nil) != dryRun {
			t.Errorf("dry run %v: the orphan is still there: %v, the dead holder: %v", dryRun, has, statErr == nil)
		}
	}
	if marked != 2 {
		t.Errorf("Marked was told %d times over two runs, want 2", marked)
	}

	// A reference that cannot be read: nothing goes.
	gone := blobstore.Sum([]byte("never stored"))
	stray, _ := store.Put(ctx, []byte(`"stray"`))
	store.advance(48 * time.Hour)
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(rolled(gone)), 0o600)
	opt.Marked = nil
	_, err := retention.Prune(ctx, store, []string{live, bad}, opt)
	var unmarked *retention.MarkError
	if !errors.As(err, &unmarked) || unmarked.Path != bad || !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("got %v, want a MarkError naming %s", err, bad)
	}
	if has, _ := store.Has(ctx, stray); !has {
		t.Error("a run whose mark failed deleted a blob")
	}
}
