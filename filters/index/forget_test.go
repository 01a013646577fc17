package index

import (
	"context"
	"testing"
)

func TestForget(t *testing.T) {
	ix, _ := openTemp(t)
	rows := sample()
	mustAdd(t, ix, rows...)
	n, err := ix.Forget(context.Background(), map[string]bool{rows[0].Blob: true, rows[2].Blob: true, "sha256:gone": true})
	if err != nil || n != 2 {
		t.Fatalf("Forget: %d, %v; want 2 rows", n, err)
	}
	if got := count(t, ix); got != len(rows)-2 {
		t.Errorf("%d rows left, want %d", got, len(rows)-2)
	}
	// Neither the table nor the full-text index names them any more.
	if hits := search(t, ix, Query{Text: "unexpected EOF"}); len(hits) != 0 {
		t.Errorf("a forgotten row is still found: %+v", hits)
	}
	if hits := search(t, ix, Query{Text: "config"}); len(hits) != 2 {
		t.Errorf("config: %d hits, want 2 (e2, e4)", len(hits))
	}
	if n, err := ix.Forget(context.Background(), nil); n != 0 || err != nil {
		t.Errorf("nothing to forget: %d, %v", n, err)
	}
}
