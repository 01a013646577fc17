package blobstore

import (
	"context"
	"fmt"
	"testing"
)

// countingNames counts the syncs of the directories' names.
type countingNames struct {
	packBackend
	syncs int
}

func (c *countingNames) syncNames(ctx context.Context) error {
	c.syncs++
	return c.packBackend.syncNames(ctx)
}

// A writer that relies on copies another process packed syncs the
// directories' names before the commit that releases lines naming them:
// once for all the packs it has found, rather than at every commit (a run
// over a session whose values are stored already commits many times,
// each relying on copies in packs not relied on before).
func TestReliedNamesSyncOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	values := make([][]byte, 40)
	for i := range values {
		values[i] = fmt.Appendf(nil, "value %d of a tool output that was stored before", i)
	}
	first, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range values[:20] {
		if err := first.PutPending(ctx, Sum(v), v); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 { // a pack of five
			if err := first.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}

	second, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := &countingNames{packBackend: second.packs.be}
	second.packs.be = names
	commit := func(vs ...[]byte) {
		t.Helper()
		for _, v := range vs {
			if err := second.PutPending(ctx, Sum(v), v); err != nil {
				t.Fatal(err)
			}
		}
		if err := second.Commit(ctx); err != nil {
			t.Fatal(err)
		}
	}
	commit(values[0])
	if names.syncs != 1 {
		t.Fatalf("relying on another writer's pack synced the names %d times, want 1", names.syncs)
	}
	commit(values[1], values[2])
	commit(values[7])
	commit(values[13], values[19])
	if names.syncs != 1 {
		t.Fatalf("relying on the packs the writer found at first synced the names %d more times, want none", names.syncs-1)
	}

	// A batch of its own: publishing it syncs the names (publishBatch),
	// and a copy in it needs no sync of its own after that.
	commit(values[20:30]...)
	own := names.syncs
	commit(values[25])
	if names.syncs != own {
		t.Fatalf("relying on the writer's own pack synced the names %d times, want none", names.syncs-own)
	}

	// Another writer's new pack, found by listing the indexes again:
	// sync again.
	third, err := OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range values[30:] {
		if err := third.PutPending(ctx, Sum(v), v); err != nil {
			t.Fatal(err)
		}
	}
	if err := third.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := second.packs.refresh(ctx); err != nil {
		t.Fatal(err)
	}
	before := names.syncs
	commit(values[35])
	if names.syncs != before+1 {
		t.Fatalf("relying on a pack new to the writer synced the names %d times, want 1", names.syncs-before)
	}
}
