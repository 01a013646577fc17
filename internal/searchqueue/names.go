package searchqueue

import (
	"io"
	"path/filepath"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/transcript"
)

// SessionOf names, for the search index, the transcript that will hold
// the placeholders of a filter's run over input name: the file itself
// when it is rewritten in place, the file standard output goes to when
// that is one (outPath), and otherwise "-" (unknown: a hit then says
// TRANSCRIPT). The input file of a run to standard output never holds
// them. The session's identity is the input's: read from the file's
// first lines, or, from standard input, learnt as the filter reads r,
// which the filter must read instead of r (the reader returned).
func SessionOf(name string, inPlace bool, outPath string, r io.Reader) (Session, io.Reader) {
	var s Session
	switch {
	case inPlace:
		s.Path = SessionFor(name)
	case outPath != "":
		s.Path = outPath
	default:
		s.Path = "-"
	}
	if name != "-" {
		id := transcript.IdentityOfFile(name)
		s.ID = func() string { return id }
		return s, r
	}
	tap := transcript.NewIdentityTap(r)
	s.ID = tap.ID
	return s, tap
}

// InStore names the store the rows' blobs are in: dir, as the filter was
// given it (Store is RowStore of it, with defaultDir), and Chunks is the
// store to read their text from when it does not encrypt: its directory
// made absolute, or its URL. An object store is read back at ingestion
// too: carrying the text made every value moved into one cost a second
// write of its bytes to the queue, on the goroutine that takes the lines
// in order.
func (w *Writer) InStore(dir, defaultDir string, encrypts bool) {
	w.Store = RowStore(dir, defaultDir)
	switch {
	case encrypts:
	case blobstore.IsURL(dir):
		w.Chunks = dir
	default:
		if abs, err := filepath.Abs(dir); err == nil {
			w.Chunks = abs
		}
	}
}

// RowStore is the store a row names, so that a search hit's restore
// command finds its blob: "" for the default store (defaultDir), else the
// one the filter was given, a directory made absolute (the command may
// run elsewhere). A spec is a URL as the store opener reads it
// (blobstore.IsURL), so that a directory whose name holds "://" is still
// made absolute.
func RowStore(dir, defaultDir string) string {
	if !blobstore.IsURL(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	if dir == defaultDir {
		return ""
	}
	return dir
}
