package extract

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// TestPreviewIsRun: Preview writes exactly what Run writes, with the same
// options, and stores nothing.
func TestPreviewIsRun(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/*/*.jsonl")
	files = append(files, "../../testdata/sample/session.jsonl")
	store, err := blobstore.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		opt := Defaults()
		opt.KeepRecent = 1
		opt.Store = store
		var ran, previewed bytes.Buffer
		st, err := Run(context.Background(), f, bytes.NewReader(in), &ran, opt)
		if err != nil {
			t.Fatal(err)
		}
		empty, err := blobstore.OpenLocal(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		opt.Store = empty
		moved := 0
		opt.OnMoved = func(Moved, []byte) { moved++ }
		pst, err := Preview(context.Background(), f, bytes.NewReader(in), &previewed, opt)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ran.Bytes(), previewed.Bytes()) || st.Values != pst.Values || moved != st.Values {
			t.Errorf("%s: Preview wrote %d bytes (%d values, %d told), Run %d (%d values)", filepath.Base(f),
				previewed.Len(), pst.Values, moved, ran.Len(), st.Values)
		}
		n := 0
		empty.List(context.Background(), func(blobstore.Digest) error { n++; return nil })
		if n != 0 {
			t.Errorf("%s: Preview stored %d blobs", filepath.Base(f), n)
		}
	}
}
