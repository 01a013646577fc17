package main

import (
	"context"
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/internal/output"
	"github.com/bstools/bs/internal/searchqueue"
	"github.com/bstools/bs/internal/xdg"
)

// The search index as the filters and bs search, bs index, bs mcp and bs
// prune-retention reach it: the queue of rows, and its problems worded.

// openIndexWriter queues the rows of what a filter removes for the index
// its flags name (see searchqueue.Writer).
func openIndexWriter(c *cli.Context, cm *common) *searchqueue.Writer {
	w := searchqueue.NewWriter(indexPath(c), queueWarnings(cm.ui))
	w.InStore(cm.storeDir, xdg.Data(), len(cm.storeOpt.Recipients) > 0)
	return w
}

// openIndex opens the index at path after adding the queued rows to it
// (indexOpenOptions).
func openIndex(ctx context.Context, path string, u ui) (*index.Index, error) {
	return searchqueue.Open(ctx, path, indexOpenOptions(u))
}

// indexOpenOptions add the queued rows to the index showing the ingestion
// on u's terminal and its problems as warnings.
func indexOpenOptions(u ui) searchqueue.OpenOptions {
	return searchqueue.OpenOptions{Warn: queueWarnings(u), Progress: u.w, Label: prgIngest}
}

// searchIndex searches the index at ixPath for the agent's tools and bs
// ui (searchqueue.Search), its absence worded.
func searchIndex(ixPath string) func(ctx context.Context, q index.Query) ([]index.Hit, error) {
	return func(ctx context.Context, q index.Query) ([]index.Hit, error) {
		hits, err := searchqueue.Search(ctx, ixPath, q)
		if errors.Is(err, searchqueue.ErrNoIndex) {
			return nil, errors.New(msgAgentNoIndex)
		}
		return hits, err
	}
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

// rowStore is the store a row names (searchqueue.RowStore).
func rowStore(dir string) string { return searchqueue.RowStore(dir, xdg.Data()) }

// indexSession names the transcript a filter's run over input name
// writes, for the search index (searchqueue.SessionOf); the filter reads
// the reader returned instead of r.
func (cm *common) indexSession(name string, r io.Reader) (searchqueue.Session, io.Reader) {
	return searchqueue.SessionOf(name, cm.InPlace, output.Path(cm.Stdout), r)
}
