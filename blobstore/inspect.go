package blobstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// DataSizer is implemented by stores that can tell a blob's uncompressed
// size without reading all of it.
type DataSizer interface {
	// StatData is Stat plus the size of blob d's data, or -1 when the
	// store cannot tell without reading the blob (an encrypted local
	// blob, an object written without the size in its metadata), in one
	// request where the store answers both from one.
	StatData(ctx context.Context, d Digest) (Info, int64, error)
}

// StatData implements [DataSizer]: a packed copy's index records its data
// size; a loose file's zstd frame header does, at its start.
func (l *Local) StatData(ctx context.Context, d Digest) (Info, int64, error) {
	if e, ok, err := l.packs.newest(ctx, d); err != nil || ok {
		return Info{Size: int64(e.length), ModTime: e.modTime()}, e.dataSize(), err
	}
	return l.statDataLoose(ctx, d)
}

func (l *Local) statDataLoose(ctx context.Context, d Digest) (Info, int64, error) {
	info, err := l.statLoose(ctx, d)
	if err != nil {
		return info, 0, err
	}
	n, err := l.dataSize(d)
	return info, n, err
}

func (l *Local) dataSize(d Digest) (int64, error) {
	_, name := l.paths(d)
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, notFound(d, err)
	}
	if err != nil {
		return 0, fmt.Errorf("stat blob %s: %w", d, err)
	}
	defer f.Close()
	buf := make([]byte, zstd.HeaderMaxSize)
	n, err := io.ReadFull(f, buf)
	if err == io.EOF {
		return 0, corrupt(d, "empty file", nil)
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return 0, fmt.Errorf("stat blob %s: %w", d, err)
	}
	var h zstd.Header
	if h.Decode(buf[:n]) != nil || !h.HasFCS {
		return -1, nil
	}
	return int64(h.FrameContentSize), nil
}

// StatData implements [DataSizer] for the remote store, if it does.
func (c *Cache) StatData(ctx context.Context, d Digest) (Info, int64, error) {
	if ds, ok := c.Store.(DataSizer); ok {
		return ds.StatData(ctx, d)
	}
	info, err := c.Store.Stat(ctx, d)
	return info, -1, err
}

// Summary describes what a store holds.
type Summary struct {
	Blobs       int64 `json:"blobs"`
	StoredBytes int64 `json:"stored_bytes"` // as stored: compressed, maybe encrypted
	// DataBytes is the uncompressed size of the blobs whose size the
	// store could tell (SizedBlobs of them) without reading them.
	DataBytes  int64 `json:"data_bytes"`
	SizedBlobs int64 `json:"sized_blobs"`
	// Unreadable counts the blobs (among Blobs) whose file or metadata
	// is damaged, so that their sizes could not be told.
	Unreadable int64 `json:"unreadable"`
	// StoredSized is the stored size of those same blobs, so that
	// DataBytes/StoredSized is a compression ratio over like for like.
	StoredSized int64 `json:"-"`

	// The layout: blobs in packs (Packed of them, in Packs pack files of
	// PackBytes, described by Indexes index files), Copies more than one
	// copy of a blob, and the loose ones.
	Packed    int64 `json:"packed_blobs"`
	Loose     int64 `json:"loose_blobs"`
	Packs     int64 `json:"packs"`
	PackBytes int64 `json:"pack_bytes"`
	Indexes   int64 `json:"indexes"`
	Copies    int64 `json:"extra_copies"`
}

// CompressionRatio is data bytes per stored byte, over the blobs whose
// data size is known; 0 when none is.
func (s Summary) CompressionRatio() float64 {
	if s.StoredSized == 0 {
		return 0
	}
	return float64(s.DataBytes) / float64(s.StoredSized)
}

// layered is a store whose blobs are in packs and loose: Summarize and
// Verify read its indexes and packs rather than asking for each blob.
type layered interface {
	layers() (*packs, looseTier)
}

func (l *Local) layers() (*packs, looseTier) { return l.packs, l }
func (c *Cloud) layers() (*packs, looseTier) { return c.packs, c }

func (c *Cache) layers() (*packs, looseTier) {
	if l, ok := c.Store.(layered); ok {
		return l.layers()
	}
	return nil, nil
}

// Summarize tells what s holds without reading blob data: for a store
// that keeps packs, from its indexes and the listing of its packs, and
// for loose blobs (and any other store) by listing them and Stat-ing each
// on workers goroutines (one request per blob for a remote store). A blob
// whose file or metadata is damaged (ErrCorrupt) is counted as
// Unreadable and the others are still summed; other errors stop it.
func Summarize(ctx context.Context, s Store, workers int) (Summary, error) {
	if l, ok := s.(layered); ok {
		if p, lt := l.layers(); p != nil {
			return p.summarize(ctx, lt, workers)
		}
	}
	var sum Summary
	stat := func(ctx context.Context, d Digest) (Info, int64, error) {
		if ds, ok := s.(DataSizer); ok {
			return ds.StatData(ctx, d)
		}
		info, err := s.Stat(ctx, d)
		return info, -1, err
	}
	err := summarizeEach(ctx, s.List, stat, workers, &sum)
	sum.Loose = sum.Blobs
	return sum, err
}

// summarizeEach adds to sum the blobs list reports, as stat tells them.
func summarizeEach(ctx context.Context, list func(context.Context, func(Digest) error) error, stat func(context.Context, Digest) (Info, int64, error), workers int, sum *Summary) error {
	var mu sync.Mutex
	return forEach(ctx, list, workers, func(ctx context.Context, d Digest) error {
		info, n, err := stat(ctx, d)
		if errors.Is(err, ErrNotFound) {
			return nil // deleted since it was listed
		}
		if err != nil && !errors.Is(err, ErrCorrupt) {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		sum.Blobs++
		sum.StoredBytes += info.Size
		if err != nil {
			sum.Unreadable++
		} else if n >= 0 {
			sum.SizedBlobs++
			sum.DataBytes += n
			sum.StoredSized += info.Size
		}
		return nil
	})
}

// summarize is Summarize over packs and a loose tier: each packed blob
// counted once, from its newest copy in a pack that is there.
func (p *packs) summarize(ctx context.Context, lt looseTier, workers int) (Summary, error) {
	var sum Summary
	if err := p.refresh(ctx); err != nil {
		return sum, err
	}
	s := p.snap.Load()
	sum.Indexes = int64(len(s.files))
	present := map[packID]bool{}
	err := p.be.listPacks(ctx, func(pf packFile) error {
		present[pf.id] = true
		sum.Packs++
		sum.PackBytes += pf.size
		return nil
	})
	if err != nil {
		return sum, fmt.Errorf("list packs of %s: %w", p.be.where(), err)
	}
	var last Digest
	counted := false
	err = merged(s.files, func(e entry) error {
		if !present[e.pack] {
			return nil
		}
		if counted && e.d == last {
			sum.Copies++
			return nil
		}
		last, counted = e.d, true
		sum.Blobs++
		sum.Packed++
		sum.StoredBytes += int64(e.length)
		if n := e.dataSize(); n >= 0 {
			sum.SizedBlobs++
			sum.DataBytes += n
			sum.StoredSized += int64(e.length)
		}
		return ctx.Err()
	})
	if err != nil {
		return sum, err
	}
	// The loose blobs no pack holds.
	loose := func(ctx context.Context, fn func(Digest) error) error {
		return lt.listLoose(ctx, func(d Digest) error {
			for _, e := range s.lookup(d) {
				if present[e.pack] {
					return nil
				}
			}
			return fn(d)
		})
	}
	before := sum.Blobs
	err = summarizeEach(ctx, loose, lt.statDataLoose, workers, &sum)
	sum.Loose = sum.Blobs - before
	return sum, err
}

// Problem is a blob copy, an index or a pack trailer that Verify could
// not read back intact.
type Problem struct {
	Digest Digest // zero for an index or a trailer
	Err    error
	// Pack is the id of the pack holding the damaged copy or trailer;
	// Index that of a damaged index file. Both "" for a loose blob.
	Pack, Index string
}

// VerifyResult counts what Verify found.
type VerifyResult struct {
	Checked       int64 `json:"checked"`
	Corrupt       int64 `json:"corrupt"`
	Undecryptable int64 `json:"undecryptable"` // encrypted to no identity given
	// Damaged counts index files and pack trailers that do not read
	// back intact.
	Damaged int64 `json:"damaged_files"`
}

// VerifyOptions configures Verify.
type VerifyOptions struct {
	Workers int
	// Progress, if set, is called now and then with the number of blob
	// copies checked so far and the total, from one goroutine at a time
	// and never with a smaller done than before.
	Progress func(done, total int64)
	// OnProblem, if set, is called (from one goroutine at a time) for each
	// blob that is corrupt or cannot be decrypted.
	OnProblem func(Problem)
}

// verifier counts checks and problems, and reports them.
type verifier struct {
	opt   VerifyOptions
	mu    sync.Mutex
	res   VerifyResult
	total int64
	shown int64
}

// checked counts one copy checked, and its problem if err is one: it
// returns err when it is not about the blob (the store unreachable).
func (v *verifier) checked(p Problem) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.res.Checked++
	if v.opt.Progress != nil && (v.res.Checked-v.shown >= 64 || v.res.Checked == v.total) && v.res.Checked > v.shown {
		v.shown = v.res.Checked
		v.opt.Progress(v.res.Checked, v.total)
	}
	switch err := p.Err; {
	case err == nil, errors.Is(err, ErrNotFound):
		return nil
	case errors.Is(err, ErrCorrupt):
		v.res.Corrupt++
	case errors.Is(err, ErrNoIdentity):
		v.res.Undecryptable++
	default:
		return err
	}
	if v.opt.OnProblem != nil {
		v.opt.OnProblem(p)
	}
	return nil
}

// damaged reports an index file or pack trailer that does not read back.
func (v *verifier) damaged(p Problem) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.res.Damaged++
	if v.opt.OnProblem != nil {
		v.opt.OnProblem(p)
	}
}

// Verify reads every blob of s back, which re-hashes it, and reports the
// ones that are corrupt or cannot be decrypted. In a store that keeps
// packs it reads every copy in every pack, pack by pack (as the pack's
// trailer lists them), every index file whole (its checksum), and the
// loose blobs. A blob deleted while Verify runs is not a problem. Other
// errors (the store unreachable) stop it.
func Verify(ctx context.Context, s Store, opt VerifyOptions) (VerifyResult, error) {
	v := &verifier{opt: opt}
	if l, ok := s.(layered); ok {
		if p, lt := l.layers(); p != nil {
			err := p.verify(ctx, lt, v)
			return v.res, err
		}
	}
	var all []Digest
	if err := s.List(ctx, func(d Digest) error { all = append(all, d); return nil }); err != nil {
		return v.res, err
	}
	v.total = int64(len(all))
	err := forEach(ctx, listOf(all), opt.Workers, func(ctx context.Context, d Digest) error {
		_, err := s.Get(ctx, d)
		return v.checked(Problem{Digest: d, Err: err})
	})
	return v.res, err
}

// listOf lists ds.
func listOf(ds []Digest) func(context.Context, func(Digest) error) error {
	return func(ctx context.Context, fn func(Digest) error) error {
		for _, d := range ds {
			if err := fn(d); err != nil {
				return err
			}
		}
		return nil
	}
}

// verify is Verify over packs and a loose tier.
func (p *packs) verify(ctx context.Context, lt looseTier, v *verifier) error {
	ids, err := p.be.listIndexes(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		f, err := p.be.loadIndex(ctx, id)
		if errors.Is(err, fs.ErrNotExist) {
			continue // merged into another meanwhile
		}
		if err == nil {
			err = f.verifySum()
		}
		if err != nil {
			v.damaged(Problem{Err: fmt.Errorf("index %s of %s: %w", id, p.be.where(), err), Index: id.String()})
		}
	}
	if err := p.refresh(ctx); err != nil {
		return err
	}
	var all []packFile
	if err := p.be.listPacks(ctx, func(pf packFile) error { all = append(all, pf); return nil }); err != nil {
		return err
	}
	lists := make([][]entry, len(all))
	for i, pf := range all {
		es, err := p.trailer(ctx, pf.id)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			v.damaged(Problem{Err: fmt.Errorf("pack %s of %s: %w", pf.id, p.be.where(), err), Pack: pf.id.String()})
			es = p.indexed(pf.id) // what the indexes say it holds
		}
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.off, b.off) })
		lists[i] = es
		v.total += int64(len(es))
	}
	if err := p.verifyListed(ctx, all, v); err != nil {
		return err
	}
	var loose []Digest
	if err := lt.listLoose(ctx, func(d Digest) error { loose = append(loose, d); return nil }); err != nil {
		return err
	}
	v.total += int64(len(loose))
	plain := sync.Pool{New: func() any { return new([]byte) }}
	err = eachIndex(ctx, len(all), v.opt.Workers, func(ctx context.Context, i int) error {
		r := &packReader{p: p, id: all[i].id}
		buf := plain.Get().(*[]byte)
		defer plain.Put(buf)
		for j, e := range lists[i] {
			stored, err := r.storedWhole(ctx, e, lists[i][j+1:])
			if errors.Is(err, ErrCorrupt) {
				if err := v.checked(Problem{Digest: e.d, Err: err, Pack: e.pack.String()}); err != nil {
					return err
				}
				continue
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted by a repack meanwhile
			}
			if err != nil {
				return fmt.Errorf("pack %s of %s: %w", e.pack, p.be.where(), err)
			}
			*buf, err = decode(p.dec, p.crypt, e.d, stored, (*buf)[:0])
			if err == nil && Sum(*buf) != e.d {
				err = corrupt(e.d, "digest mismatch", nil)
			}
			if err == nil {
				err = p.checkCRC(e, stored)
			}
			if err := v.checked(Problem{Digest: e.d, Err: err, Pack: e.pack.String()}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return forEach(ctx, listOf(loose), v.opt.Workers, func(ctx context.Context, d Digest) error {
		_, err := lt.getLoose(ctx, d)
		return v.checked(Problem{Digest: d, Err: err})
	})
}

// verifyListed reports each pack the indexes name that is not among the
// packs listed: the copies the indexes say it holds are lost. A pack a
// repack deleted meanwhile is no problem: the indexes, read again, name
// its copies in another.
func (p *packs) verifyListed(ctx context.Context, listed []packFile, v *verifier) error {
	there := make(map[packID]bool, len(listed))
	for _, pf := range listed {
		there[pf.id] = true
	}
	missing := func() map[packID]int {
		out := map[packID]int{}
		merged(p.snap.Load().files, func(e entry) error {
			if !there[e.pack] {
				out[e.pack]++
			}
			return nil
		})
		return out
	}
	if len(missing()) == 0 {
		return nil
	}
	if err := p.refresh(ctx); err != nil {
		return err
	}
	gone := missing()
	ids := slices.SortedFunc(maps.Keys(gone), func(a, b packID) int { return bytes.Compare(a[:], b[:]) })
	for _, id := range ids {
		if _, err := p.be.statPack(ctx, id); !errors.Is(err, fs.ErrNotExist) {
			continue // there after all: written since the listing
		}
		v.damaged(Problem{Err: fmt.Errorf("pack %s of %s is missing: the indexes name %d blob copies in it", id, p.be.where(), gone[id]), Pack: id.String()})
	}
	return nil
}

// checkCRC checks the CRC that index records of copy e (its pack and
// offset) give against its stored form, which reads back intact: a Put
// relies on a copy by that CRC (packs.holdsCopy), so a record whose CRC is
// wrong would have every Put of the blob write a fresh copy.
func (p *packs) checkCRC(e entry, stored []byte) error {
	for _, c := range p.snap.Load().lookup(e.d) {
		if c.pack == e.pack && c.off == e.off && c.hasCRC && crc32.Checksum(stored, castagnoli) != c.crc {
			return corrupt(e.d, "its index record's CRC does not match its stored form", nil)
		}
	}
	return nil
}

// indexed is what the indexes say pack id holds.
func (p *packs) indexed(id packID) []entry {
	var out []entry
	merged(p.snap.Load().files, func(e entry) error {
		if e.pack == id {
			out = append(out, e)
		}
		return nil
	})
	return out
}

// forEach calls fn on workers goroutines for every blob list reports;
// the first error stops it.
func forEach(ctx context.Context, list func(context.Context, func(Digest) error) error, workers int, fn func(context.Context, Digest) error) error {
	var ds []Digest
	if err := list(ctx, func(d Digest) error { ds = append(ds, d); return nil }); err != nil {
		return err
	}
	return eachIndex(ctx, len(ds), workers, func(ctx context.Context, i int) error { return fn(ctx, ds[i]) })
}

// eachIndex calls fn(i) for i in [0, n) on workers goroutines; the first
// error stops it.
func eachIndex(ctx context.Context, n, workers int, fn func(context.Context, int) error) error {
	if workers < 1 {
		workers = 1
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan int, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range ch {
				if err := fn(ctx, i); err != nil {
					cancel(err)
				}
			}
		})
	}
	var err error
	for i := 0; i < n && err == nil; i++ {
		select {
		case ch <- i:
		case <-ctx.Done():
			err = context.Cause(ctx)
		}
	}
	close(ch)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// Copy is where one copy of a blob is stored.
type Copy struct {
	Pack    string    `json:"pack,omitempty"` // the pack's id; "" for a loose blob
	Offset  int64     `json:"offset,omitempty"`
	Stored  int64     `json:"stored_bytes"`
	Size    int64     `json:"data_bytes"` // -1 when the store cannot tell without reading it
	ModTime time.Time `json:"time"`
}

// Locate tells where blob d is stored: its copies in packs that are
// there, newest first, then its loose copy. A blob not stored is
// ErrNotFound.
func Locate(ctx context.Context, s Store, d Digest) ([]Copy, error) {
	var out []Copy
	var lt looseTier
	if l, ok := s.(layered); ok {
		var p *packs
		if p, lt = l.layers(); p != nil {
			es, err := p.copies(ctx, d)
			if err != nil {
				return nil, err
			}
			for _, e := range es {
				if ok, err := p.packThere(ctx, e.pack); err != nil {
					return nil, err
				} else if ok {
					out = append(out, Copy{Pack: e.pack.String(), Offset: int64(e.off), Stored: int64(e.length), Size: e.dataSize(), ModTime: e.modTime()})
				}
			}
		}
	}
	var info Info
	n, err := int64(-1), error(nil)
	switch {
	case lt != nil:
		info, n, err = lt.statDataLoose(ctx, d)
	case len(out) == 0:
		if ds, ok := s.(DataSizer); ok {
			info, n, err = ds.StatData(ctx, d)
		} else {
			info, err = s.Stat(ctx, d)
		}
	default:
		return out, nil
	}
	if err == nil {
		out = append(out, Copy{Stored: info.Size, Size: n, ModTime: info.ModTime})
	} else if !errors.Is(err, ErrNotFound) || len(out) == 0 {
		return out, err
	}
	return out, nil
}
