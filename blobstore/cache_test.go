package blobstore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/blobstore/storetest"
)

func openCache(t *testing.T, limit int64) (*blobstore.Cache, string) {
	t.Helper()
	dir := t.TempDir()
	s, err := blobstore.Open(context.Background(), "mem://", blobstore.WithMem(blobstore.OpenOptions{CacheDir: dir, CacheSize: limit}))
	if err != nil {
		t.Fatal(err)
	}
	return s.(*blobstore.Cache), dir
}

func TestCacheConformance(t *testing.T) {
	ch := &cloudHarness{spec: memSpec}
	h := ch.harness(false, false)
	h.New = func(t *testing.T) blobstore.Store {
		c, _ := openCache(t, 0)
		return c
	}
	// Corrupt damages the remote object; a Get that went to the cache
	// first must still find it corrupt, so the cache must not have it.
	storetest.Run(t, h)
}

// TestCacheOverFileAndS3 runs the suite on a Cache over a file:// store
// and, when a server is configured, an S3 one, so that the pack tests
// that need a second instance (each with a cache of its own) run too.
func TestCacheOverFileAndS3(t *testing.T) {
	for _, be := range []struct {
		name string
		spec func(*testing.T) string
	}{{"File", fileSpec}, {"S3", s3Spec}} {
		t.Run(be.name, func(t *testing.T) {
			be.spec(t) // skip S3 early when it is not configured
			ch := &cloudHarness{spec: be.spec}
			h := ch.harness(be.name == "File", false)
			h.Age, h.LeaveCrashedPut = nil, nil // they reach the bucket's files, not the cache
			open := func(t *testing.T, spec string) blobstore.Store {
				s, err := blobstore.Open(context.Background(), spec, blobstore.OpenOptions{CacheDir: t.TempDir(), IndexCache: t.TempDir()})
				if err != nil {
					t.Fatal(err)
				}
				ch.specs[s] = spec
				if dir, ok := strings.CutPrefix(spec, "file://"); ok {
					ch.dirs[s] = dir
				}
				return s
			}
			h.New = func(t *testing.T) blobstore.Store { return open(t, be.spec(t)) }
			h.Reopen = func(t *testing.T, s blobstore.Store) blobstore.Store { return open(t, ch.specs[s]) }
			storetest.Run(t, h)
		})
	}
}

// TestCacheReadThrough checks that a blob read once is served from the
// cache, even after the remote object is gone, and that a damaged cached
// copy is dropped and read again.
func TestCacheReadThrough(t *testing.T) {
	ctx := context.Background()
	c, dir := openCache(t, 0)
	data := bytes.Repeat([]byte("restored again and again "), 100)
	d := put(t, c, data)
	if n := countFiles(t, dir); n != 0 {
		t.Fatalf("Put cached %d files; the cache is read-through", n)
	}
	get(t, c, d)
	path := blobPath(dir, d)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("Get left no cached copy: %v", err)
	}
	// Remove the remote object behind the store's back.
	if err := blobstore.BucketOf(c).Delete(ctx, blobstore.Key(d)); err != nil {
		t.Fatal(err)
	}
	if got := get(t, c, d); !bytes.Equal(got, data) {
		t.Fatal("cached Get returned other bytes")
	}
	// A damaged copy is not trusted: it is dropped, and the remote store
	// (where the blob is now missing) decides.
	if err := os.WriteFile(path, compress(t, []byte("forged")), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Get(ctx, d); !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("Get with a damaged copy and no remote object = %v, want ErrNotFound", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("damaged copy still cached: %v", err)
	}
}

// TestCacheBounded checks that the cache stays within its limit and keeps
// the most recently used blobs.
func TestCacheBounded(t *testing.T) {
	const limit = 64 << 10
	c, dir := openCache(t, limit)
	var ds []blobstore.Digest
	for i := range 40 {
		ds = append(ds, put(t, c, randomBytes(uint64(i), 8<<10)))
	}
	for i, d := range ds {
		get(t, c, d)
		if i > 0 {
			get(t, c, ds[0]) // keep the first one hot
		}
	}
	if n := dirSize(t, dir); n > limit {
		t.Fatalf("cache holds %d bytes, limit %d", n, limit)
	}
	if _, err := os.Stat(blobPath(dir, ds[0])); err != nil {
		t.Errorf("the most used blob was evicted: %v", err)
	}
	if _, err := os.Stat(blobPath(dir, ds[len(ds)-1])); err != nil {
		t.Errorf("the last blob read was evicted: %v", err)
	}
	if _, err := os.Stat(blobPath(dir, ds[1])); err == nil {
		t.Errorf("an old blob survived eviction")
	}
}

func TestCacheDelete(t *testing.T) {
	c, dir := openCache(t, 0)
	d := put(t, c, []byte("gone everywhere"))
	get(t, c, d)
	if err := c.Delete(context.Background(), d); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(blobPath(dir, d)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Delete left the cached copy: %v", err)
	}
}

func countFiles(t *testing.T, dir string) int {
	n := 0
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, _ error) error {
		if e != nil && e.Type().IsRegular() {
			n++
		}
		return nil
	})
	return n
}

func dirSize(t *testing.T, dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, _ error) error {
		if e != nil && e.Type().IsRegular() {
			fi, _ := e.Info()
			n += fi.Size()
		}
		return nil
	})
	return n
}

// randomBytes returns n incompressible bytes determined by seed.
func randomBytes(seed uint64, n int) []byte {
	var key [32]byte
	key[0] = byte(seed)
	key[1] = byte(seed >> 8)
	b := make([]byte, n)
	rand.NewChaCha8(key).Read(b)
	return b
}

// TestIsRemote: a store by URL is remote, and so is a cache over one; a
// local store is not.
func TestIsRemote(t *testing.T) {
	ctx := context.Background()
	local, err := blobstore.Open(ctx, t.TempDir(), blobstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cloud, err := blobstore.Open(ctx, "mem://", blobstore.WithMem(blobstore.OpenOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	cache, _ := openCache(t, 0)
	if blobstore.IsRemote(local) || !blobstore.IsRemote(cloud) || !blobstore.IsRemote(cache) {
		t.Errorf("IsRemote: local %v, cloud %v, cache over one %v", blobstore.IsRemote(local), blobstore.IsRemote(cloud), blobstore.IsRemote(cache))
	}
}
