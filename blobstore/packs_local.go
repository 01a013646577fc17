package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	packSuffix  = ".pack"
	indexSuffix = ".idx"
	// maxOpenPacks bounds the pack files a Local keeps open for reading.
	maxOpenPacks = 32
)

// localPacks keeps packs in <store>/packs/<id>.pack and index files in
// <store>/index/<id>.idx. Temp files (".tmp-…") are built in packs/ and
// renamed into place.
type localPacks struct {
	dir, idir string

	madeDirs atomic.Bool
	swept    atomic.Bool // stale temp files removed, once per process

	mu  sync.Mutex
	fds map[packID]*os.File // open for reading
}

func newLocalPacks(store string) *localPacks {
	return &localPacks{dir: filepath.Join(store, "packs"), idir: filepath.Join(store, "index"), fds: map[packID]*os.File{}}
}

func (lp *localPacks) where() string { return filepath.Dir(lp.dir) }

func (lp *localPacks) packPath(id packID) string {
	return filepath.Join(lp.dir, id.String()+packSuffix)
}
func (lp *localPacks) indexPath(id packID) string {
	return filepath.Join(lp.idir, id.String()+indexSuffix)
}

// ids reads the ids of dir's files named <id><suffix>; a missing dir
// holds none.
func ids(dir, suffix string) ([]packID, error) {
	entries, err := readDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []packID
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), suffix)
		if !ok || !e.Type().IsRegular() {
			continue
		}
		if id, ok := parsePackID(name); ok {
			out = append(out, id)
		}
	}
	return out, nil
}

func (lp *localPacks) listIndexes(ctx context.Context) ([]packID, error) {
	return ids(lp.idir, indexSuffix)
}

func (lp *localPacks) loadIndex(ctx context.Context, id packID) (*idxFile, error) {
	b, release, err := mapFile(lp.indexPath(id))
	if err != nil {
		return nil, err
	}
	f, err := parseIndex(id, b, release)
	if err != nil {
		release()
		return nil, fmt.Errorf("index %s: %w", id, err)
	}
	return f, nil
}

// ensureDirs creates packs/ and index/, durably, once per process, and
// removes temp files a crashed writer left there an hour or more ago.
func (lp *localPacks) ensureDirs() error {
	if !lp.madeDirs.Load() {
		for _, d := range []string{lp.dir, lp.idir} {
			if err := mkdirPrivate(d); err != nil {
				return err
			}
		}
		lp.madeDirs.Store(true)
	}
	if !lp.swept.Swap(true) {
		lp.cleanTemps()
	}
	return nil
}

func (lp *localPacks) cleanTemps() { removeStaleTemps(lp.dir, time.Now().Add(-staleTempAge)) }

func (lp *localPacks) createTemp() (*os.File, error) {
	if err := lp.ensureDirs(); err != nil {
		return nil, err
	}
	return createPrivateTemp(lp.dir)
}

// createPrivateTemp creates a temp file in dir ("" for the system's),
// mode 0600: the umask can only remove bits, so the mode is set exactly.
func createPrivateTemp(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(fileMode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// publish syncs temp file f, closes it and renames it to name.
func publish(f *os.File, name string) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

func (lp *localPacks) publishPack(ctx context.Context, id packID, f *os.File) error {
	return publish(f, lp.packPath(id))
}

func (lp *localPacks) syncPacks(ctx context.Context) error { return syncDir(lp.dir) }

func (lp *localPacks) publishIndex(ctx context.Context, id packID, f *os.File) error {
	if err := publish(f, lp.indexPath(id)); err != nil {
		return err
	}
	return syncDir(lp.idir)
}

// publishBatch syncs the packs and the index, all at once, then renames
// them into place, the packs first, and syncs packs/ and index/, both at
// once: two rounds of syncs. A writer that relies on a blob it found
// through the index syncs both directories before it releases a line
// naming the blob (see packs.relied), and a crash before then can only
// leave an index naming a pack not durable under its name, whose blobs
// read as missing, never as wrong, and which no released line names.
// Renaming the packs first lets one such sync stand for every index the
// writer has listed (packs.durable).
func (lp *localPacks) publishBatch(ctx context.Context, packs []tempFile, index tempFile) error {
	all := append(slices.Clone(packs), index)
	err := parallel(len(all), func(i int) error { return all[i].f.Sync() })
	for _, t := range all {
		if cerr := t.f.Close(); err == nil {
			err = cerr
		}
	}
	for _, t := range packs {
		if err == nil {
			if err = os.Rename(t.f.Name(), lp.packPath(t.id)); err == nil {
				continue
			}
		}
		os.Remove(t.f.Name())
	}
	if err == nil {
		err = os.Rename(index.f.Name(), lp.indexPath(index.id))
	}
	if err != nil {
		os.Remove(index.f.Name())
		return err
	}
	dirs := []string{lp.dir, lp.idir}
	return parallel(len(dirs), func(i int) error { return syncDir(dirs[i]) })
}

// parallel runs fn(0) … fn(n-1) at once and returns the first error:
// syncs of different files overlap on the device.
func parallel(n int, fn func(int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (lp *localPacks) readPack(ctx context.Context, id packID, off int64, n int, buf []byte) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	buf = grow(buf, n)
	for {
		f, err := lp.open(id)
		if err != nil {
			return nil, err
		}
		_, err = f.ReadAt(buf, off)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, os.ErrClosed):
			continue // closed by open making room for another pack
		case err == io.EOF:
			err = io.ErrUnexpectedEOF // the index names bytes the pack lacks
		}
		return nil, err
	}
}

// open returns pack id open for reading, keeping up to maxOpenPacks open:
// a restore reads thousands of blobs from a few packs.
func (lp *localPacks) open(id packID) (*os.File, error) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	if f := lp.fds[id]; f != nil {
		return f, nil
	}
	f, err := os.Open(lp.packPath(id))
	if err != nil {
		return nil, err
	}
	if len(lp.fds) >= maxOpenPacks {
		for k, g := range lp.fds {
			// A read in progress finishes first (os.File counts its
			// users); a later one gets os.ErrClosed and opens it again.
			delete(lp.fds, k)
			g.Close()
			break
		}
	}
	lp.fds[id] = f
	return f, nil
}

func (lp *localPacks) statPack(ctx context.Context, id packID) (packFile, error) {
	fi, err := os.Stat(lp.packPath(id))
	if err != nil {
		return packFile{}, err
	}
	return packFile{id: id, size: fi.Size(), mtime: fi.ModTime()}, nil
}

func (lp *localPacks) listPacks(ctx context.Context, fn func(packFile) error) error {
	all, err := ids(lp.dir, packSuffix)
	if err != nil {
		return err
	}
	for _, id := range all {
		pf, err := lp.statPack(ctx, id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if err := fn(pf); err != nil {
			return err
		}
	}
	return nil
}

func (lp *localPacks) deletePack(ctx context.Context, id packID) error {
	lp.mu.Lock()
	if f := lp.fds[id]; f != nil {
		delete(lp.fds, id)
		f.Close()
	}
	lp.mu.Unlock()
	return os.Remove(lp.packPath(id))
}

func (lp *localPacks) deleteIndex(ctx context.Context, id packID) error {
	return os.Remove(lp.indexPath(id))
}

// syncNames fsyncs packs/ and index/: every name created, renamed or
// removed there so far, by this process or another, is then durable.
func (lp *localPacks) syncNames(ctx context.Context) error {
	var errs []error
	for _, d := range []string{lp.dir, lp.idir} {
		if err := syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Repack merges the store's small packs into packs of up to 16 MiB, and
// moves its loose blobs into packs, with one new index in place of all
// the old ones. Packs no index names (left by a writer that crashed
// between its pack and its index) are indexed from their trailers once an
// hour old. A copy that does not read back intact stays where it is. It
// takes no lock: writers and readers go on meanwhile (see repack.go).
func (l *Local) Repack(ctx context.Context, opt RepackOptions) (RepackResult, error) {
	return l.packs.repack(ctx, l, opt)
}

// Prune deletes the blobs opt.Keep does not reference whose newest copy
// is older than opt.Cutoff (packed copies: and than twice the grace
// period): loose ones one by one, packed ones by deleting the packs that
// hold nothing else and rewriting those whose dead share is above
// opt.RewriteAbove.
func (l *Local) Prune(ctx context.Context, opt PruneOptions) (PruneResult, error) {
	return l.packs.prune(ctx, l, opt)
}

func (l *Local) loadLoose(ctx context.Context, d Digest) ([]byte, Info, error) {
	info, err := l.statLoose(ctx, d)
	if err != nil {
		return nil, info, err
	}
	var buf []byte
	stored, err := l.load(d, &buf)
	return stored, info, err
}

func (l *Local) syncLoose(ctx context.Context) error { return l.SyncDeletes(ctx) }

// cleanLooseTemps removes the temp files crashed writers of loose blobs
// left in the shards an hour or more ago.
func (l *Local) cleanLooseTemps() {
	shards, err := readDir(l.root)
	if err != nil {
		return
	}
	cutoff := time.Now().Add(-staleTempAge)
	for _, sh := range shards {
		if sh.IsDir() && isShardName(sh.Name()) {
			removeStaleTemps(filepath.Join(l.root, sh.Name()), cutoff)
		}
	}
}
