package restore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/restore"
)

// TestMissingBlobsInLineOrder: blobs are fetched in parallel, but their
// failures come back in the order of the lines, each naming its line, and
// every line passes through unchanged.
func TestMissingBlobsInLineOrder(t *testing.T) {
	var in strings.Builder
	const n = 40
	for i := range n {
		d := blobstore.Sum([]byte(fmt.Sprint("value ", i)))
		fmt.Fprintf(&in, `{"type":"tool_result","__id":"e%d","output":"[[extracted-e%d]]","_extracted":{"/output":{"blob":"%s","bytes":7,"tokens":2}}}`+"\n", i, i, d)
	}
	for range 5 {
		var out bytes.Buffer
		_, _, err := restore.Run(context.Background(), "t", strings.NewReader(in.String()), &out, restore.Options{All: true, Store: new(blobstore.Mem), Workers: 16})
		if out.String() != in.String() {
			t.Fatal("the lines did not pass through unchanged")
		}
		j, ok := err.(interface{ Unwrap() []error })
		if !ok || len(j.Unwrap()) != n {
			t.Fatalf("err = %v; want %d joined errors", err, n)
		}
		for i, e := range j.Unwrap() {
			var be *restore.BlobError
			if !errors.As(e, &be) || be.Line != i+1 || !errors.Is(e, blobstore.ErrNotFound) {
				t.Fatalf("error %d = %v; want line %d's blob not found", i, e, i+1)
			}
		}
	}
}
