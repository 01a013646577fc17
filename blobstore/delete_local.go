package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
)

// BatchDeleter is implemented by stores that can delete many blobs with
// one sync per directory instead of one per blob, for retention sweeps
// over large stores. A blob deleted with DeleteUnsynced is gone at once for
// every reader (Has, Get, Stat, List); its removal becomes durable at the
// next SyncDeletes. A crash before that may bring a deleted blob back,
// which costs only its space until the next sweep.
type BatchDeleter interface {
	Store
	// DeleteUnsynced removes a blob as Delete does, without waiting for
	// the removal to be durable; deleting a missing blob is ErrNotFound.
	DeleteUnsynced(ctx context.Context, d Digest) error
	// SyncDeletes makes every removal done by DeleteUnsynced before it
	// was called durable.
	SyncDeletes(ctx context.Context) error
}

var _ BatchDeleter = (*Local)(nil)

// DeleteUnsynced implements [BatchDeleter.DeleteUnsynced]: the loose file
// is removed and its shard directory noted for SyncDeletes; a pack holding
// the blob is rewritten without it at once, durably (see Delete).
func (l *Local) DeleteUnsynced(ctx context.Context, d Digest) error {
	return l.packs.delete(ctx, d, l.removeLoose)
}

// removeLoose removes blob d's loose file, durable after SyncDeletes.
func (l *Local) removeLoose(ctx context.Context, d Digest) error {
	shard, err := l.remove(ctx, d)
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.deleted == nil {
		l.deleted = map[string]struct{}{}
	}
	l.deleted[shard] = struct{}{}
	l.mu.Unlock()
	return nil
}

// SyncDeletes implements [BatchDeleter.SyncDeletes].
func (l *Local) SyncDeletes(ctx context.Context) error {
	l.mu.Lock()
	shards := make([]string, 0, len(l.deleted))
	for s := range l.deleted {
		shards = append(shards, s)
	}
	l.deleted = nil
	l.mu.Unlock()
	slices.Sort(shards)
	var errs []error
	for _, s := range shards {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := syncDir(s); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("sync deletes in %s: %w", s, err))
		}
	}
	return errors.Join(errs...)
}
