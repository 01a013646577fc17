package blobstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gocloud.dev/blob"
)

const (
	cloudPacks   = "packs/"
	cloudIndexes = "index/"
)

// cloudPackStore keeps packs as objects packs/<id>.pack and index files
// as index/<id>.idx in a Cloud store's bucket. Index files are listed once
// per process and kept in a local cache directory (they never change), so
// a reader maps them as Local does; a blob is one ranged GET of its pack.
type cloudPackStore struct {
	c *Cloud
	// cache holds index files by name, and the temp files packs and
	// indexes are built in; "" keeps indexes in memory (mem://).
	cache string
	ahead readahead
}

// DefaultIndexCache is where a store reached by URL keeps its index files
// unless told otherwise: <user cache dir>/bs/index/<hash of name>.
func DefaultIndexCache(name string) string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(name))
	return filepath.Join(dir, "bs", "index", hex.EncodeToString(sum[:8]))
}

func (cp *cloudPackStore) where() string { return cp.c.desc }

func packKey(id packID) string  { return cloudPacks + id.String() + packSuffix }
func indexKey(id packID) string { return cloudIndexes + id.String() + indexSuffix }

// list calls fn for each object under prefix named <id><suffix>.
func (cp *cloudPackStore) list(ctx context.Context, prefix, suffix string, fn func(packID, *blob.ListObject) error) error {
	return cp.c.listKeys(ctx, prefix, func(o *blob.ListObject) error {
		name, ok := strings.CutSuffix(strings.TrimPrefix(o.Key, prefix), suffix)
		id, valid := parsePackID(name)
		if !ok || !valid || o.IsDir {
			return nil
		}
		return fn(id, o)
	})
}

func (cp *cloudPackStore) listIndexes(ctx context.Context) ([]packID, error) {
	var out []packID
	err := cp.list(ctx, cloudIndexes, indexSuffix, func(id packID, _ *blob.ListObject) error {
		out = append(out, id)
		return nil
	})
	if err != nil {
		return nil, err
	}
	cp.forget(out)
	return out, nil
}

// forget removes cached index files the bucket no longer lists, unless
// they are new (another process may have just published one).
func (cp *cloudPackStore) forget(listed []packID) {
	if cp.cache == "" {
		return
	}
	cached, err := ids(cp.cache, indexSuffix)
	if err != nil {
		return
	}
	keep := make(map[packID]bool, len(listed))
	for _, id := range listed {
		keep[id] = true
	}
	cutoff := time.Now().Add(-time.Minute)
	for _, id := range cached {
		p := cp.cachePath(id)
		if fi, err := os.Stat(p); err == nil && !keep[id] && fi.ModTime().Before(cutoff) {
			os.Remove(p)
		}
	}
}

func (cp *cloudPackStore) cachePath(id packID) string {
	return filepath.Join(cp.cache, id.String()+indexSuffix)
}

// loadIndex maps the cached copy of index id, fetching it first if the
// cache lacks it. A fetched index is checked whole (its sum) before it is
// cached; a cached copy that does not parse is fetched again.
func (cp *cloudPackStore) loadIndex(ctx context.Context, id packID) (*idxFile, error) {
	if cp.cache != "" {
		if b, release, err := mapFile(cp.cachePath(id)); err == nil {
			if f, err := parseIndex(id, b, release); err == nil {
				return f, nil
			}
			release()
		}
	}
	var data []byte
	err := cp.c.retry.do(ctx, func(ctx context.Context) error {
		var err error
		data, err = cp.c.b.ReadAll(ctx, indexKey(id))
		return err
	})
	if isNotFound(err) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", id, cp.c.cause(err))
	}
	f, err := parseIndex(id, data, nil)
	if err == nil {
		err = f.verifySum()
	}
	if err != nil {
		return nil, fmt.Errorf("index %s: %w: %w", id, errBadIndex, err)
	}
	if cp.cache == "" {
		return f, nil
	}
	if err := cp.keep(id, data); err != nil {
		return f, nil // serve it from memory; the cache is an optimisation
	}
	b, release, err := mapFile(cp.cachePath(id))
	if err != nil {
		return f, nil
	}
	if g, err := parseIndex(id, b, release); err == nil {
		return g, nil
	}
	release()
	return f, nil
}

// keep writes an index file into the cache.
func (cp *cloudPackStore) keep(id packID, data []byte) error {
	tmp, err := cp.createTemp()
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), cp.cachePath(id))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

func (cp *cloudPackStore) createTemp() (*os.File, error) {
	dir := cp.cache
	if dir != "" {
		if err := mkdirAllPrivate(dir); err != nil {
			dir = ""
		} else {
			cp.cleanTemps()
		}
	}
	f, err := createPrivateTemp(dir)
	if err == nil && dir == "" {
		// In the system's temp directory nothing would clean up after a
		// run that stops before publishing (killed, or failed): the file
		// is uploaded from its descriptor, so its name can go at once.
		os.Remove(f.Name())
	}
	return f, err
}

func (cp *cloudPackStore) cleanTemps() {
	if cp.cache != "" {
		removeStaleTemps(cp.cache, time.Now().Add(-staleTempAge))
	}
}

// upload sends the whole of temp file f as object key.
func (cp *cloudPackStore) upload(ctx context.Context, key string, f *os.File) error {
	opts := &blob.WriterOptions{ContentType: "application/octet-stream", DisableContentTypeDetection: true}
	return cp.c.retry.do(ctx, func(ctx context.Context) error {
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		return cp.c.b.Upload(ctx, key, f, opts)
	})
}

func (cp *cloudPackStore) publishPack(ctx context.Context, id packID, f *os.File) error {
	defer os.Remove(f.Name())
	defer f.Close()
	if err := cp.upload(ctx, packKey(id), f); err != nil {
		return fmt.Errorf("put pack %s: %w", id, cp.c.cause(err))
	}
	return nil
}

// publishBatch uploads the packs, all at once, then the index, and keeps
// the index in the cache.
func (cp *cloudPackStore) publishBatch(ctx context.Context, packs []tempFile, index tempFile) error {
	err := parallel(len(packs), func(i int) error { return cp.publishPack(ctx, packs[i].id, packs[i].f) })
	if err != nil {
		index.f.Close()
		os.Remove(index.f.Name())
		return err
	}
	return cp.publishIndex(ctx, index.id, index.f)
}

func (cp *cloudPackStore) syncPacks(ctx context.Context) error { return nil }
func (cp *cloudPackStore) syncNames(ctx context.Context) error { return nil }

// publishIndex uploads index f and keeps it in the cache.
func (cp *cloudPackStore) publishIndex(ctx context.Context, id packID, f *os.File) error {
	err := cp.upload(ctx, indexKey(id), f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("put index %s: %w", id, cp.c.cause(err))
	}
	if cp.cache == "" || filepath.Dir(f.Name()) != cp.cache || os.Rename(f.Name(), cp.cachePath(id)) != nil {
		os.Remove(f.Name())
	}
	return nil
}

// readPack reads through cp.ahead (see readahead), else with a ranged
// GET of exactly the bytes asked for.
func (cp *cloudPackStore) readPack(ctx context.Context, id packID, off int64, n int, buf []byte) ([]byte, error) {
	window := func(ctx context.Context, off int64, n int) ([]byte, error) {
		return cp.rangeRead(ctx, id, off, n, nil, false)
	}
	if out, ok, err := cp.ahead.read(ctx, id, off, n, buf, window); ok || err != nil {
		return out, err
	}
	return cp.rangeRead(ctx, id, off, n, buf, true)
}

// rangeRead reads n bytes of pack id at off into buf, with one ranged
// GET; all n of them when exact is set, else as many as the pack has.
func (cp *cloudPackStore) rangeRead(ctx context.Context, id packID, off int64, n int, buf []byte, exact bool) ([]byte, error) {
	buf = grow(buf, n)
	got := 0
	err := cp.c.retry.do(ctx, func(ctx context.Context) error {
		r, err := cp.c.b.NewRangeReader(ctx, packKey(id), off, int64(n), nil)
		if err != nil {
			return err
		}
		defer r.Close()
		got, err = io.ReadFull(r, buf)
		if !exact && err == io.ErrUnexpectedEOF {
			err = nil
		}
		return err
	})
	if isNotFound(err) {
		return nil, fs.ErrNotExist
	}
	if err != nil {
		return nil, cp.c.cause(err)
	}
	return buf[:got], nil
}

func (cp *cloudPackStore) statPack(ctx context.Context, id packID) (packFile, error) {
	var attrs *blob.Attributes
	err := cp.c.retry.do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = cp.c.b.Attributes(ctx, packKey(id))
		return err
	})
	if isNotFound(err) {
		return packFile{}, fs.ErrNotExist
	}
	if err != nil {
		return packFile{}, cp.c.cause(err)
	}
	return packFile{id: id, size: attrs.Size, mtime: attrs.ModTime}, nil
}

func (cp *cloudPackStore) listPacks(ctx context.Context, fn func(packFile) error) error {
	return cp.list(ctx, cloudPacks, packSuffix, func(id packID, o *blob.ListObject) error {
		return fn(packFile{id: id, size: o.Size, mtime: o.ModTime})
	})
}

func (cp *cloudPackStore) remove(ctx context.Context, key string) error {
	err := cp.c.retry.do(ctx, func(ctx context.Context) error { return cp.c.b.Delete(ctx, key) })
	if isNotFound(err) {
		return fs.ErrNotExist
	}
	if err != nil {
		return cp.c.cause(err)
	}
	return nil
}

func (cp *cloudPackStore) deletePack(ctx context.Context, id packID) error {
	return cp.remove(ctx, packKey(id))
}

func (cp *cloudPackStore) deleteIndex(ctx context.Context, id packID) error {
	if cp.cache != "" {
		os.Remove(cp.cachePath(id))
	}
	return cp.remove(ctx, indexKey(id))
}

// Repack is Local.Repack for a bucket: packs are objects, and each pack
// rewritten is read with one ranged GET per 8 MiB.
func (c *Cloud) Repack(ctx context.Context, opt RepackOptions) (RepackResult, error) {
	return c.packs.repack(ctx, c, opt)
}

// Prune is Local.Prune for a bucket.
func (c *Cloud) Prune(ctx context.Context, opt PruneOptions) (PruneResult, error) {
	return c.packs.prune(ctx, c, opt)
}

func (c *Cloud) loadLoose(ctx context.Context, d Digest) ([]byte, Info, error) {
	stored, mtime, err := c.readObject(ctx, d)
	return stored, Info{Size: int64(len(stored)), ModTime: mtime}, err
}

func (c *Cloud) removeLoose(ctx context.Context, d Digest) error { return c.deleteLoose(ctx, d) }
func (c *Cloud) syncLoose(ctx context.Context) error             { return nil }

var _ Batcher = (*Cloud)(nil)

// PutPending implements [Batcher.PutPending]: unless a packed copy younger
// than RefreshAfter reads back as data, the blob is compressed (and
// sealed) and added to the pack this store is building, a temp file in
// the index cache directory. A blob stored only as a loose object (the
// first layout) gets a packed copy too: looking for it would cost a
// request per blob.
func (c *Cloud) PutPending(ctx context.Context, d Digest, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(data) > maxBlobSize {
		return fmt.Errorf("put blob %s: %d bytes exceeds the limit of %d", d, len(data), maxBlobSize)
	}
	if c.packs.isPending(d) {
		return nil
	}
	if ok, err := c.packs.reuse(ctx, d, data); err != nil || ok {
		if err != nil {
			return fmt.Errorf("put blob %s: %w", d, err)
		}
		return nil
	}
	if len(data) > hugeBlob {
		if err := c.packs.putHuge(d, data); err != nil {
			return fmt.Errorf("put blob %s: %w", d, err)
		}
		return nil
	}
	buf := getBuf()
	defer putBuf(buf)
	stored, err := c.crypt.seal(c.enc.compress(data, (*buf)[:0]))
	if err != nil {
		return fmt.Errorf("put blob %s: %w", d, err)
	}
	*buf = stored // add copies it; the buffer goes back to the pool
	return c.packs.add(d, stored, len(data))
}

// Commit implements [Batcher.Commit]: each pack is uploaded as one
// object, then their index; Commit returns once both are stored.
func (c *Cloud) Commit(ctx context.Context) error {
	return c.packs.commit(ctx)
}

// cleanLooseTemps leaves the bucket's temp files to its driver (gocloud's
// fileblob names its own, and an object store has none).
func (c *Cloud) cleanLooseTemps() {}
