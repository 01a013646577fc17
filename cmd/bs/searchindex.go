package main

import (
	"context"
	"errors"
	"io"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/output"
	"github.com/bstools/bs/internal/searchqueue"
)

// The search index as the filters and bs search, bs index, bs mcp and bs
// prune-retention reach it: the queue of rows, and its problems worded.

// openIndexWriter queues the rows of what a filter removes for the index
// its flags name (see searchqueue.Writer).
func openIndexWriter(c *cli.Context, cm *common) *searchqueue.Writer {
	w := searchqueue.NewWriter(indexPath(c), queueWarnings(cm.ui))
	w.Store = rowStore(cm.storeDir)
	if !blobstore.IsURL(cm.storeDir) && len(cm.storeOpt.Recipients) == 0 {
		if abs, err := filepath.Abs(cm.storeDir); err == nil {
			w.Chunks = abs
		}
	}
	return w
}

// openIndex opens the index at path after adding the queued rows to it
// (but those of the blobs in gone, which prune-retention has just
// deleted), showing the ingestion on u's terminal and its problems as
// warnings.
func openIndex(ctx context.Context, path string, u ui, gone map[string]bool) (*index.Index, error) {
	return searchqueue.Open(ctx, path, searchqueue.OpenOptions{Warn: queueWarnings(u), Progress: u.w, Label: prgIngest, Gone: gone})
}

// queueWarnings words the problems of the search queue as warnings on u.
func queueWarnings(u ui) func(error) {
	return func(err error) {
		var (
			write    *searchqueue.WriteError
			waiting  *searchqueue.WaitingError
			damaged  *searchqueue.DamagedError
			chunk    *searchqueue.ChunkError
			rolled   *searchqueue.RolledError
			ref      *searchqueue.RefError
			value    *searchqueue.ValueError
			archived *searchqueue.ArchivedError
		)
		switch {
		case errors.As(err, &write):
			u.warnf(msgIndexWrite, write.Index, write.Err)
			u.hintf(hintIndex)
		case errors.As(err, &waiting):
			u.warnf(msgPendingWaits, waiting.File, waiting.Store, waiting.Err)
		case errors.As(err, &damaged):
			u.warnf(msgPendingBad, damaged.File, damaged.Err)
		case errors.As(err, &chunk):
			u.warnf(msgIndexChunk, chunk.Blob, chunk.Store, chunk.Err)
		case errors.As(err, &rolled):
			u.warnf(msgIndexRolled, rolled.Path, rolled.Err)
		case errors.As(err, &ref):
			u.warnf(msgIndexDamagedRef, ref.Path, ref.Err)
		case errors.As(err, &value):
			u.warnf(msgIndexValue, value.Path, value.Entry, value.Pointer, value.Err)
		case errors.As(err, &archived):
			u.warnf(msgIndexArchived, archived.Path, archived.Turn, archived.Err)
		default:
			u.warnf("%v", err)
		}
	}
}

// rowStore is the store a row names, so that a search hit's restore
// command finds its blob: "" for the default store, else the one the
// filter was given, a directory made absolute (the command may run
// elsewhere). A spec is a URL as the store opener reads it
// (blobstore.IsURL), so that a directory whose name holds "://" is still
// made absolute.
func rowStore(dir string) string {
	if !blobstore.IsURL(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	if dir == defaultStoreDir() {
		return ""
	}
	return dir
}

// indexSession names, for the search index, the transcript that will hold
// the placeholders of a filter's run over input name: the file itself
// when it is rewritten in place, the file standard output goes to when
// that is one, and otherwise "-" (unknown: a hit then says TRANSCRIPT).
// The input file of a run to standard output never holds them. The
// session's identity is the input's: read from the file's first lines, or,
// from standard input, learnt as the filter reads r, which the filter
// must read instead of r.
func (cm *common) indexSession(name string, r io.Reader) (searchqueue.Session, io.Reader) {
	var s searchqueue.Session
	switch {
	case cm.inPlace:
		s.Path = searchqueue.SessionFor(name)
	case output.Path(cm.stdout) != "":
		s.Path = output.Path(cm.stdout)
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
