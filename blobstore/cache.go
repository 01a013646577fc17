package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// DefaultCacheSize bounds a [Cache] whose size is not given: 1 GiB.
const DefaultCacheSize = 1 << 30

// Cache is a [Store] that keeps a local read-through copy of the blobs a
// remote store returns from Get, so that restoring the same values again
// does not download them again.
//
// The copies live in a [Local] store in the cache directory (zstd, never
// encrypted, private to the user like any local store) and are verified on
// every read like any blob; a damaged copy is dropped and fetched again.
// When the copies take more than the size limit, the least recently used
// are removed (by modification time, which a cache hit moves forward) until
// they take at most 90% of it. Every other method goes to the remote
// store: Has, Stat and List answer for it, and Delete removes the copy too.
type Cache struct {
	Store // the remote store
	local *Local
	dir   string
	limit int64

	mu   sync.Mutex
	size int64 // bytes in the cache, as last counted plus added since
}

// NewCache wraps remote with a read-through cache in dir holding at most
// limit bytes (DefaultCacheSize when limit <= 0).
func NewCache(remote Store, dir string, limit int64) (*Cache, error) {
	if limit <= 0 {
		limit = DefaultCacheSize
	}
	l, err := OpenLocal(dir)
	if err != nil {
		return nil, fmt.Errorf("open cache: %w", err)
	}
	c := &Cache{Store: remote, local: l, dir: l.root, limit: limit}
	c.size, _ = c.scan()
	return c, nil
}

// Remote reports whether the cached store is remote.
func (c *Cache) Remote() bool { return IsRemote(c.Store) }

// Close closes the remote store, if it has a Close method.
func (c *Cache) Close() error {
	if cl, ok := c.Store.(interface{ Close() error }); ok {
		return cl.Close()
	}
	return nil
}

// Get implements [Store.Get], from the cache when it holds the blob.
func (c *Cache) Get(ctx context.Context, d Digest) ([]byte, error) {
	data, err := c.local.Get(ctx, d)
	if err == nil {
		_, name := c.local.paths(d)
		os.Chtimes(name, time.Time{}, time.Now()) // recently used; best effort
		return data, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if errors.Is(err, ErrCorrupt) {
		c.local.Delete(ctx, d) // fetch it again below
	}
	data, err = c.Store.Get(ctx, d)
	if err != nil {
		return nil, err
	}
	c.add(ctx, d, data)
	return data, nil
}

// add keeps a copy of a blob just read, best effort: a cache that cannot
// be written only costs downloads.
func (c *Cache) add(ctx context.Context, d Digest, data []byte) {
	if int64(len(data)) > c.limit {
		return
	}
	if _, err := c.local.Put(ctx, data); err != nil {
		return
	}
	info, err := c.local.Stat(ctx, d)
	if err != nil {
		return
	}
	c.mu.Lock()
	c.size += info.Size
	over := c.size > c.limit
	c.mu.Unlock()
	if over {
		c.evict()
	}
}

// Delete implements [Store.Delete] on the remote store, and drops the
// cached copy.
func (c *Cache) Delete(ctx context.Context, d Digest) error {
	err := c.Store.Delete(ctx, d)
	if derr := c.local.Delete(context.WithoutCancel(ctx), d); derr != nil && !errors.Is(derr, ErrNotFound) && err == nil {
		err = derr
	}
	return err
}

type cached struct {
	path  string
	size  int64
	mtime time.Time
}

// files lists the cached blob files.
func (c *Cache) files() ([]cached, int64, error) {
	var out []cached
	var total int64
	err := filepath.WalkDir(c.dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() {
			return nil
		}
		fi, err := e.Info()
		if err != nil {
			return nil
		}
		out = append(out, cached{path, fi.Size(), fi.ModTime()})
		total += fi.Size()
		return nil
	})
	return out, total, err
}

func (c *Cache) scan() (int64, error) {
	_, total, err := c.files()
	return total, err
}

// evict removes the least recently used copies until the cache holds at
// most 90% of its limit. Other processes sharing the directory may evict
// at the same time; removing a file twice is harmless.
func (c *Cache) evict() {
	files, total, err := c.files()
	if err != nil {
		return
	}
	slices.SortFunc(files, func(a, b cached) int { return a.mtime.Compare(b.mtime) })
	target := c.limit / 10 * 9
	for _, f := range files {
		if total <= target {
			break
		}
		if err := os.Remove(f.path); err == nil || errors.Is(err, fs.ErrNotExist) {
			total -= f.size
		}
	}
	c.mu.Lock()
	c.size = total
	c.mu.Unlock()
}

// PutPending implements [Batcher.PutPending] on the remote store when it
// batches (a Cloud store does); otherwise the blob is put at once.
func (c *Cache) PutPending(ctx context.Context, d Digest, data []byte) error {
	if b, ok := c.Store.(Batcher); ok {
		return b.PutPending(ctx, d, data)
	}
	_, err := c.Store.Put(ctx, data)
	return err
}

// Commit implements [Batcher.Commit] on the remote store.
func (c *Cache) Commit(ctx context.Context) error {
	if b, ok := c.Store.(Batcher); ok {
		return b.Commit(ctx)
	}
	return nil
}

// SealedAfterPut implements [Sealer] on the remote store.
func (c *Cache) SealedAfterPut(ctx context.Context, d Digest) (bool, error) {
	if s, ok := c.Store.(Sealer); ok {
		return s.SealedAfterPut(ctx, d)
	}
	return false, nil
}

// errNoPacks is the error of Repack and Prune on a Cache whose remote
// store keeps no packs.
var errNoPacks = errors.New("the store keeps no packs")

// Repack implements [Packer.Repack] on the remote store.
func (c *Cache) Repack(ctx context.Context, opt RepackOptions) (RepackResult, error) {
	if p, ok := c.Store.(Packer); ok {
		return p.Repack(ctx, opt)
	}
	return RepackResult{}, errNoPacks
}

// Prune implements [Packer.Prune] on the remote store, and drops the
// cached copies of the blobs it removed.
func (c *Cache) Prune(ctx context.Context, opt PruneOptions) (PruneResult, error) {
	p, ok := c.Store.(Packer)
	if !ok {
		return PruneResult{}, errNoPacks
	}
	res, err := p.Prune(ctx, opt)
	if !opt.DryRun {
		for _, r := range res.Removed {
			c.local.Delete(context.WithoutCancel(ctx), r.Digest) // best effort
		}
	}
	return res, err
}
