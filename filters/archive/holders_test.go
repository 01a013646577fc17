package archive_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/transcript"
)

// TestHolders: the markers of an archived transcript are its live
// holders, listed in the Live Subagents block, and a holder nested in
// another is found through it, byte for byte.
func TestHolders(t *testing.T) {
	o := only()
	o.TokenThreshold, o.DepthCap = 1, 2
	o.Store = new(blobstore.Mem)
	once, _, first := run(t, triggerSession(), o)
	twice, _, second := run(t, once, o)
	if len(first) == 0 || len(second) == 0 || second[0].Depth != 2 {
		t.Fatalf("archived %d turns, then %d", len(first), len(second))
	}
	var holders []archive.Holder
	var outer []archive.Marker
	err := archive.Markers("t", bytes.NewReader(twice), transcript.Unknown, nil,
		func(line int, err error) { t.Errorf("line %d: damaged marker: %v", line, err) },
		func(line int, m archive.Marker) error {
			holders = append(holders, archive.HolderOf("t", line, m))
			outer = append(outer, m)
			return nil
		})
	if err != nil || len(holders) != len(second) || holders[0].ID != second[0].ID || holders[0].Line == 0 || len(holders[0].Blobs) == 0 {
		t.Fatalf("holders %+v, %v; archived %+v", holders, err, second)
	}
	var list bytes.Buffer
	if err := archive.WriteHolders(&list, holders, false); err != nil || !strings.HasPrefix(list.String(), "# Live Subagents\n") ||
		!strings.Contains(list.String(), "- id: "+holders[0].ID+" | task: ") {
		t.Errorf("list %q, %v", list.String(), err)
	}
	list.Reset()
	if archive.WriteHolders(&list, nil, false); list.Len() != 0 {
		t.Errorf("no holders listed as %q", list.String())
	}
	// The first round's holder is inside the second's.
	ctx := context.Background()
	var want, got bytes.Buffer
	if err := first[0].WriteHolder(ctx, o.Store, &want, 0); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range outer {
		if ok, err := archive.FindHolder(ctx, o.Store, m, first[0].ID, &got); err != nil || ok {
			found = ok
			break
		}
	}
	if !found || !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("nested holder found %v: %q, want %q", found, got.String(), want.String())
	}
	if ok, err := archive.FindHolder(ctx, o.Store, outer[0], "nope", &got); ok || err != nil {
		t.Errorf("a holder that is not there: %v, %v", ok, err)
	}
	stop := errors.New("stop")
	if err := archive.Markers("t", bytes.NewReader(twice), transcript.Unknown, nil, nil, func(int, archive.Marker) error { return stop }); err != stop {
		t.Errorf("fn's error: got %v", err)
	}
}

// TestHolderFile: a holder id names DIR/<id>.jsonl; what would name a file
// elsewhere is ErrBadHolderID.
func TestHolderFile(t *testing.T) {
	if p, err := archive.HolderFile("h", "0123456789abcdef"); err != nil || p != filepath.Join("h", "0123456789abcdef.jsonl") {
		t.Errorf("HolderFile = %q, %v", p, err)
	}
	for _, id := range []string{"", "../x", `a\b`, "a/b", ".", ".."} {
		if _, err := archive.HolderFile("h", id); !errors.Is(err, archive.ErrBadHolderID) {
			t.Errorf("HolderFile(%q): %v, want ErrBadHolderID", id, err)
		}
	}
}
