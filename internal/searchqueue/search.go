package searchqueue

import (
	"context"
	"errors"
	"os"

	"github.com/bstools/bs/filters/index"
)

// ErrNoIndex is a search of an index that is not there, with no rows
// queued for it either.
var ErrNoIndex = errors.New("no search index")

// Exists reports whether there is an index at path, or rows queued for
// one (a filter queues rows; the first search makes the index). A queue
// directory with no rows in it, as a filter that removed nothing leaves,
// is no index.
func Exists(path string) bool {
	if _, err := os.Stat(path); err == nil {
		return true
	}
	return len(pendingFiles(path)) > 0
}

// Search answers q from the index at path after adding the queued rows to
// it, quietly: the problems of the queue are not reported (the agent's
// tools and the web app have no terminal to say them on). An index that
// is not there, nor rows queued for one, is ErrNoIndex, never a new empty
// one.
func Search(ctx context.Context, path string, q index.Query) ([]index.Hit, error) {
	if !Exists(path) {
		return nil, ErrNoIndex
	}
	ix, err := Open(ctx, path, OpenOptions{Warn: func(error) {}})
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	return ix.Search(ctx, q)
}

// Forget removes from the index at path the rows that name the blobs in
// gone, which prune-retention has just deleted, after adding the queued
// rows but theirs, and returns how many it removed. With no index there
// (Exists) it does nothing.
func Forget(ctx context.Context, path string, gone map[string]bool, opt OpenOptions) (int, error) {
	if !Exists(path) {
		return 0, nil
	}
	opt.Gone = gone
	ix, err := Open(ctx, path, opt)
	if err != nil {
		return 0, err
	}
	defer ix.Close()
	return ix.Forget(ctx, gone)
}
