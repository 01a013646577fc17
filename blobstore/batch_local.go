package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

var _ Batcher = (*Local)(nil)

// pendingBlob is a loose blob written to a temp file, waiting for its
// rename (writeLoose).
type pendingBlob struct {
	d         Digest
	tmp, name string
	shard     string
}

// PutPending implements [Batcher.PutPending]: unless a copy in place
// serves (see newForm), the blob is compressed and added to the pack this
// store is building, a temp file in packs/ (held in memory while the
// batch is small enough to go loose); a huge one is compressed as a stream
// into a pack of its own (putHuge).
func (l *Local) PutPending(ctx context.Context, d Digest, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(data) > maxBlobSize {
		return fmt.Errorf("put blob %s: %d bytes exceeds the limit of %d", d, len(data), maxBlobSize)
	}
	if l.packs.isPending(d) {
		return nil
	}
	if len(data) > hugeBlob {
		served, err := l.served(ctx, d, data)
		if err == nil && !served {
			err = l.packs.putHuge(d, data)
		}
		if err != nil {
			return fmt.Errorf("put blob %s: %w", d, err)
		}
		return nil
	}
	buf := getBuf()
	defer putBuf(buf)
	stored, err := l.newForm(ctx, d, data, (*buf)[:0])
	if err != nil {
		return fmt.Errorf("put blob %s: %w", d, err)
	}
	if stored == nil {
		return nil // stored already
	}
	*buf = stored // add copies it; the buffer goes back to the pool
	return l.packs.add(d, stored, len(data))
}

// Commit implements [Batcher.Commit]: the packs are synced and renamed
// into packs/, packs/ is synced, and then their index is written, synced
// and renamed into index/, which is synced; a batch of at most looseMax
// blobs is written loose instead (writeLoose).
func (l *Local) Commit(ctx context.Context) error {
	return l.packs.commit(ctx)
}

// writeLoose writes a small batch as loose files: each to a temp file in
// its shard, then one sync makes them all durable, the renames make them
// visible, a second sync makes the renames durable, and only then are
// they marked 0600 (see Put for what that mode promises).
func (l *Local) writeLoose(ctx context.Context, blobs []looseBlob) error {
	l.looseSeen.Store(looseSome)
	batch := make([]pendingBlob, 0, len(blobs))
	fail := func(err error, from int) error {
		for _, p := range batch[from:] {
			os.Remove(p.tmp)
		}
		return err
	}
	for _, b := range blobs {
		shard, name := l.paths(b.d)
		if err := l.ensureShardUnsynced(b.d[0], shard); err != nil {
			return fail(fmt.Errorf("put blob %s: %w", b.d, err), 0)
		}
		tmp, err := writeTemp(shard, b.stored)
		if err != nil {
			return fail(fmt.Errorf("put blob %s: %w", b.d, err), 0)
		}
		batch = append(batch, pendingBlob{d: b.d, tmp: tmp, name: name, shard: shard})
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
		return err
	}
	for _, p := range batch {
		if err := os.Chmod(p.name, fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// ensureShardUnsynced creates shard directory shard if needed, without
// the fsyncs of ensureShard: a new store would otherwise pay 512 of them
// before its first commit. writeLoose's first sync makes the directory durable
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
