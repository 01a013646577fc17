package storereport

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
)

func TestWriteStats(t *testing.T) {
	var b bytes.Buffer
	sum := blobstore.Summary{Blobs: 3, StoredBytes: 50, DataBytes: 200, SizedBlobs: 2, StoredSized: 30, Unreadable: 1}
	if err := WriteStats(&b, "/s", sum, false); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); !strings.Contains(got, "compression  6.67\n") || !strings.Contains(got, "unreadable   1 blobs\n") || !strings.HasPrefix(got, "store        /s\n") {
		t.Errorf("text:\n%s", got)
	}
	b.Reset()
	WriteStats(&b, "/s", sum, true)
	if got := b.String(); !strings.Contains(got, `"store":"/s"`) || !strings.Contains(got, `"compression_ratio":6.67`) {
		t.Errorf("json: %s", got)
	}
	b.Reset()
	WriteStats(&b, "/s", blobstore.Summary{}, false)
	if !strings.Contains(b.String(), "compression  unknown\n") || strings.Contains(b.String(), "unreadable") {
		t.Errorf("an empty store:\n%s", b.String())
	}
}

// TestWriteProblem: a problem is corrupt, undecryptable, or damaged (an
// index or a trailer, no blob).
func TestWriteProblem(t *testing.T) {
	d := blobstore.Sum([]byte("x"))
	corrupt := fmt.Errorf("blob %s: %w", d, blobstore.ErrCorrupt)
	for _, c := range []struct {
		p          blobstore.Problem
		text, json string
	}{
		{blobstore.Problem{Digest: d, Err: corrupt, Pack: "p1"}, corrupt.Error() + " (in pack p1)\n", `"problem":"corrupt"`},
		{blobstore.Problem{Digest: d, Err: errors.New("no identity")}, "no identity\n", `"problem":"undecryptable"`},
		{blobstore.Problem{Err: errors.New("bad trailer"), Pack: "p2"}, "bad trailer\n", `{"error":"bad trailer","pack":"p2","problem":"damaged"}`},
	} {
		var text, js bytes.Buffer
		WriteProblem(&text, c.p, false)
		WriteProblem(&js, c.p, true)
		if text.String() != c.text || !strings.Contains(js.String(), c.json) {
			t.Errorf("%v: %q, %s", c.p.Err, text.String(), js.String())
		}
	}
}

func TestWriteCopiesAndResults(t *testing.T) {
	d := blobstore.Sum([]byte("x"))
	var b bytes.Buffer
	WriteCopies(&b, d, []blobstore.Copy{{Pack: "p1", Offset: 12, Stored: 5, Size: 1}, {Stored: 6, Size: -1}}, false)
	if want := fmt.Sprintf("%s 5 1 pack p1 @12\n%s 6 ? loose\n", d, d); b.String() != want {
		t.Errorf("copies %q, want %q", b.String(), want)
	}
	b.Reset()
	WriteVerify(&b, blobstore.VerifyResult{Checked: 4, Corrupt: 1, Damaged: 2}, false)
	if want := "checked 4 blobs: 1 corrupt, 0 undecryptable, 2 index files, pack trailers or packs damaged or missing\n"; b.String() != want {
		t.Errorf("verify %q", b.String())
	}
	b.Reset()
	WriteRepack(&b, blobstore.RepackResult{Merged: 2, PacksBefore: 3, PacksAfter: 1}, true, false)
	if !strings.HasPrefix(b.String(), "would repack: 2 small packs merged") || !strings.Contains(b.String(), "packs 3 -> 1") {
		t.Errorf("repack %q", b.String())
	}
	b.Reset()
	WriteRepack(&b, blobstore.RepackResult{Damaged: make([]blobstore.Problem, 2)}, false, true)
	if !strings.Contains(b.String(), `"dry_run":false`) || !strings.Contains(b.String(), `"damaged":2`) {
		t.Errorf("repack json %s", b.String())
	}
}
