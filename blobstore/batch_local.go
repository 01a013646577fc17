package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

var _ Batcher = (*Local)(nil)

// pendingBlob is a blob written to a temp file, waiting for Commit.
type pendingBlob struct {
	d         Digest
	tmp, name string
	shard     string
}

// PutPending implements [Batcher.PutPending]: the blob is compressed and
// written to a temp file in its shard directory, mode 0400, without a sync.
// Commit syncs and renames it.
func (l *Local) PutPending(ctx context.Context, d Digest, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(data) > maxBlobSize {
		return fmt.Errorf("put blob %s: %d bytes exceeds the limit of %d", d, len(data), maxBlobSize)
	}
	l.mu.Lock()
	_, dup := l.pendingSet[d]
	l.mu.Unlock()
	if dup {
		return nil
	}
	shard, name := l.paths(d)
	compressed, err := l.storedForm(ctx, d, data, shard, name)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", d, err)
	}
	if compressed == nil {
		return nil // stored already
	}
	if err := l.ensureShardUnsynced(d[0], shard); err != nil {
		return fmt.Errorf("put blob %s: %w", d, err)
	}
	tmp, err := writeTemp(shard, compressed)
	if err != nil {
		return fmt.Errorf("put blob %s: %w", d, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.pendingSet[d]; dup {
		os.Remove(tmp) // another goroutine got there first
		return nil
	}
	if l.pendingSet == nil {
		l.pendingSet = map[Digest]struct{}{}
	}
	l.pendingSet[d] = struct{}{}
	l.pending = append(l.pending, pendingBlob{d: d, tmp: tmp, name: name, shard: shard})
	return nil
}

// Commit implements [Batcher.Commit]: one sync makes every pending temp
// file durable, the renames make them visible, a second sync makes the
// renames durable, and only then are the blobs marked 0600 (see Put for
// what that mode promises).
func (l *Local) Commit(ctx context.Context) error {
	l.mu.Lock()
	batch := l.pending
	l.pending = nil
	for _, p := range batch {
		delete(l.pendingSet, p.d)
	}
	l.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	fail := func(err error, from int) error {
		for _, p := range batch[from:] {
			os.Remove(p.tmp)
		}
		return fmt.Errorf("commit %d blobs: %w", len(batch), err)
	}
	if err := l.syncFiles(batch, func(p pendingBlob) string { return p.tmp }); err != nil {
		return fail(err, 0)
	}
	for i, p := range batch {
		if err := os.Rename(p.tmp, p.name); err != nil {
			return fail(err, i)
		}
	}
	if err := l.syncDirs(batch); err != nil {
		return fail(err, len(batch))
	}
	for _, p := range batch {
		if err := os.Chmod(p.name, fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fail(err, len(batch))
		}
	}
	return nil
}

// ensureShardUnsynced creates shard directory shard if needed, without
// the fsyncs of ensureShard: a new store would otherwise pay 512 of them
// before its first commit. Commit's first sync makes the directory durable
// before any blob is renamed into it.
func (l *Local) ensureShardUnsynced(i byte, shard string) error {
	if l.shardReady[i].Load() || l.shardMade[i].Load() {
		return nil
	}
	err := os.Mkdir(shard, dirMode)
	switch {
	case errors.Is(err, fs.ErrExist):
		fi, err := os.Stat(shard)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", shard)
		}
	case err != nil:
		return err
	default:
		// The umask may have removed bits from dirMode; set it exactly.
		if err := os.Chmod(shard, dirMode); err != nil {
			return err
		}
	}
	l.shardMade[i].Store(true)
	return nil
}
