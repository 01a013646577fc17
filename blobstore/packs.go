package blobstore

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

// packBackend is where a store keeps its packs and index files: a
// directory (Local) or a bucket (Cloud). Packs and indexes are immutable
// and named by random ids; a backend never shows a reader a name whose
// content is not complete.
type packBackend interface {
	// listIndexes returns the ids of the index files.
	listIndexes(ctx context.Context) ([]packID, error)
	// loadIndex maps index id into memory; fs.ErrNotExist if it is gone.
	loadIndex(ctx context.Context, id packID) (*idxFile, error)
	// createTemp makes a private temp file to build a pack or index in.
	createTemp() (*os.File, error)
	// cleanTemps removes temp files an hour or more old: a crashed
	// writer's (a live writer renames its own within moments).
	cleanTemps()
	// publishPack makes f, a complete pack file, pack id. It closes f.
	// Its name need not be durable until syncPacks.
	publishPack(ctx context.Context, id packID, f *os.File) error
	// syncPacks makes the packs published so far durable under their
	// names.
	syncPacks(ctx context.Context) error
	// publishIndex makes f, a complete index file, index id, durably.
	// It closes f.
	publishIndex(ctx context.Context, id packID, f *os.File) error
	// readPack reads n bytes of pack id at off into buf (grown as
	// needed); fs.ErrNotExist if the pack is gone.
	readPack(ctx context.Context, id packID, off int64, n int, buf []byte) ([]byte, error)
	// statPack tells a pack's size and time; fs.ErrNotExist if it is gone.
	statPack(ctx context.Context, id packID) (packFile, error)
	// listPacks calls fn for every pack.
	listPacks(ctx context.Context, fn func(packFile) error) error
	deletePack(ctx context.Context, id packID) error
	deleteIndex(ctx context.Context, id packID) error
	// publishBatch makes a commit's packs, then its index, durable and
	// visible under their ids: every file's content durable before any
	// name is visible, the names durable before it returns. It closes the
	// files, and removes those it does not publish.
	publishBatch(ctx context.Context, packs []tempFile, index tempFile) error
	// syncNames makes durable every name created, renamed or removed so
	// far, by this process or another.
	syncNames(ctx context.Context) error
	// where names the backend in messages.
	where() string
}

// tempFile is a complete pack or index in a temp file, and its id.
type tempFile struct {
	id packID
	f  *os.File
}

// packFile describes a pack as the backend lists it.
type packFile struct {
	id    packID
	size  int64
	mtime time.Time
}

// looseBlob is a blob a small commit writes loose rather than in a pack.
type looseBlob struct {
	d      Digest
	stored []byte
}

// packs is the pack layer that Local and Cloud share: it writes the blobs
// of a batch into packs and an index (PutPending, Commit), finds and reads
// packed copies, and rewrites packs (repack.go). It knows nothing of loose
// blobs, which its owner keeps beside it.
type packs struct {
	be  packBackend
	dec *zstd.Decoder
	// crypt is the owner's (set with setCrypter): it opens sealed copies.
	crypt *crypter
	// grace is how young a packed copy must be for a Put of its data to
	// rely on it rather than write a fresh copy (Cloud.RefreshAfter):
	// retention keeps every packed copy younger than twice this.
	grace time.Duration
	// looseMax is how many blobs a commit may hold and still be written
	// loose by writeLoose, the owner's, instead of as a pack (0: never).
	looseMax   int
	writeLoose func(ctx context.Context, blobs []looseBlob) error

	refreshMu sync.Mutex
	snap      atomic.Pointer[snapshot]

	mu      sync.Mutex
	pending map[Digest]struct{}
	cur     *building   // the pack being filled
	full    []*building // filled packs waiting for the next commit
	// gens numbers the snapshots (snapshot.gen). durable is the newest
	// whose index files and packs are known to be durable under their
	// names: the directories were synced after it was listed. relied is
	// the newest through which a PutPending found a copy it relied on
	// (another process's, maybe not yet durable under its name): while it
	// is newer than durable, a commit syncs the names before the lines
	// naming the blob go out. So a run that relies on copies from many
	// packs syncs the directories once, not at every commit. That holds
	// because every writer renames a pack into place before any index
	// that names it (localPacks.publishBatch, repack).
	gens, durable, relied atomic.Uint64

	commitMu sync.Mutex

	gone sync.Map // packID → struct{}: packs found missing
}

// building is a pack being written: to a temp file once it holds more
// than a small commit writes loose, in memory until then.
type building struct {
	f *os.File
	buildingWrites
	id      packID
	size    int64
	entries []entry
	mem     [][]byte // stored forms not yet in f, entries[:len(mem)]
	memSize int
}

// looseMem bounds what a building pack holds in memory before it goes to
// its temp file.
const looseMem = 1 << 20

func newPacks(be packBackend, dec *zstd.Decoder, grace time.Duration) *packs {
	return &packs{be: be, dec: dec, grace: grace, pending: map[Digest]struct{}{}}
}

// snapshot returns the indexes as last loaded, loading them on first use.
func (p *packs) snapshot(ctx context.Context) (*snapshot, error) {
	if s := p.snap.Load(); s != nil {
		return s, nil
	}
	if err := p.refresh(ctx); err != nil {
		return nil, err
	}
	return p.snap.Load(), nil
}

// refresh lists the index files anew and loads those it does not hold.
// A listed file that is gone by the time it is loaded was merged into
// another (written before it was deleted), so the listing is repeated.
func (p *packs) refresh(ctx context.Context) error {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	old := p.snap.Load()
	if old == nil {
		old = emptySnapshot
	}
	for try := 0; ; try++ {
		ids, err := p.be.listIndexes(ctx)
		if err != nil {
			return fmt.Errorf("list indexes of %s: %w", p.be.where(), err)
		}
		s := &snapshot{byID: make(map[packID]*idxFile, len(ids))}
		vanished, changed := false, len(ids) != len(old.files)
		for _, id := range ids {
			f := old.byID[id]
			if f == nil {
				changed = true
				f, err = p.be.loadIndex(ctx, id)
				switch {
				case errors.Is(err, fs.ErrNotExist):
					vanished = true
					continue
				case errors.Is(err, errBadIndex):
					// Its blobs cannot be found through it; store verify
					// names it. The others stay readable.
					continue
				case err != nil:
					return fmt.Errorf("load index %s of %s: %w", id, p.be.where(), err)
				}
			}
			s.files = append(s.files, f)
			s.byID[id] = f
		}
		if !vanished || try >= 10 {
			if changed || p.snap.Load() == nil {
				// The same files keep their snapshot: its generation,
				// and the key table it has built (keytable.go).
				s.gen = p.gens.Add(1)
				p.snap.Store(s)
			}
			return nil
		}
	}
}

// addIndex makes index file f, just written by this store, part of the
// snapshot without listing the others again.
func (p *packs) addIndex(f *idxFile, drop ...packID) {
	p.refreshMu.Lock()
	defer p.refreshMu.Unlock()
	old := p.snap.Load()
	if old == nil {
		old = emptySnapshot
	}
	s := &snapshot{byID: make(map[packID]*idxFile, len(old.files)+1), gen: p.gens.Add(1)}
	for _, g := range old.files {
		if !slices.Contains(drop, g.id) {
			s.files = append(s.files, g)
			s.byID[g.id] = g
		}
	}
	s.files = append(s.files, f)
	s.byID[f.id] = f
	p.snap.Store(s)
	if old.gen <= p.durable.Load() {
		p.markDurable(s.gen) // f is this store's own, published durably
	}
}

// markDurable records that the index files of snapshot gen, and the packs
// they name, are durable under their names (packs.durable).
func (p *packs) markDurable(gen uint64) { raise(&p.durable, gen) }

// raise sets a to v if v is larger.
func raise(a *atomic.Uint64, v uint64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// syncNames makes every name created so far durable (the backend's
// syncNames), and with them those of every index and pack the snapshot of
// now lists.
func (p *packs) syncNames(ctx context.Context) error {
	gen := p.snapGen()
	if err := p.be.syncNames(ctx); err != nil {
		return err
	}
	p.markDurable(gen)
	return nil
}

// snapGen is the generation of the snapshot of now, 0 before the first.
func (p *packs) snapGen() uint64 {
	if s := p.snap.Load(); s != nil {
		return s.gen
	}
	return 0
}

// copies returns the copies of d in packs not known to be gone, newest
// first.
func (p *packs) copies(ctx context.Context, d Digest) ([]entry, error) {
	es, _, err := p.copiesOf(ctx, d)
	return es, err
}

// copiesOf is copies, and the generation of the snapshot that found them.
func (p *packs) copiesOf(ctx context.Context, d Digest) ([]entry, uint64, error) {
	s, err := p.snapshot(ctx)
	if err != nil {
		return nil, 0, err
	}
	es := s.lookup(d)
	return slices.DeleteFunc(es, func(e entry) bool { return p.isGone(e.pack) }), s.gen, nil
}

func (p *packs) isGone(id packID) bool {
	_, ok := p.gone.Load(id)
	return ok
}

// readError is what a read makes of an error reading copy e's pack.
func (p *packs) readError(e entry, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		p.gone.Store(e.pack, struct{}{})
		return notFound(e.d, err)
	}
	return fmt.Errorf("get blob %s: pack %s of %s: %w", e.d, e.pack, p.be.where(), err)
}

// read returns the stored form of copy e, into *buf.
func (p *packs) read(ctx context.Context, e entry, buf *[]byte) ([]byte, error) {
	b, err := p.be.readPack(ctx, e.pack, int64(e.off), int(e.length), *buf)
	if err != nil {
		return nil, p.readError(e, err)
	}
	*buf = b
	return b, nil
}

// get reads d from the first of its packed copies that holds it intact,
// newest first. With no copy, or none whose pack is still there, it is
// ErrNotFound; with only damaged ones, the first copy's error.
func (p *packs) get(ctx context.Context, d Digest) ([]byte, error) {
	es, err := p.copies(ctx, d)
	if err != nil {
		return nil, err
	}
	buf := getBuf()
	defer putBuf(buf)
	var first error
	for _, e := range es {
		var data []byte
		read := false // the stored form was read, and failed to decode
		if e.isHuge() {
			data, read, err = p.getHuge(ctx, e)
		} else if stored, rerr := p.read(ctx, e, buf); rerr != nil {
			err = rerr
		} else {
			data, err = decodeStored(p.dec, p.crypt, d, stored)
			read = true
		}
		if err == nil {
			return data, nil
		}
		if read && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if first == nil && !errors.Is(err, ErrNotFound) {
			first = err
		}
	}
	if first != nil {
		return nil, first
	}
	return nil, notFound(d, nil)
}

// newest is d's newest packed copy whose pack is there, and whether
// there is one.
func (p *packs) newest(ctx context.Context, d Digest) (entry, bool, error) {
	es, err := p.copies(ctx, d)
	if err != nil {
		return entry{}, false, err
	}
	for _, e := range es {
		ok, err := p.packThere(ctx, e.pack)
		if err != nil {
			return entry{}, false, err
		}
		if ok {
			return e, true, nil
		}
	}
	return entry{}, false, nil
}

// packThere reports whether pack id exists, asking the backend once per
// pack and process (a pack, once gone, never comes back).
func (p *packs) packThere(ctx context.Context, id packID) (bool, error) {
	if p.isGone(id) {
		return false, nil
	}
	_, err := p.be.statPack(ctx, id)
	if errors.Is(err, fs.ErrNotExist) {
		p.gone.Store(id, struct{}{})
		return false, nil
	}
	return err == nil, err
}

// reuse decides whether a Put of data (blob d) may rely on a packed copy
// instead of writing one: it may when the newest copy is younger than the
// grace period and reads back as data (see Local.vouch for a copy this
// store cannot decrypt). A copy older than that is not relied on: the
// Put writes a fresh one, so that retention, which keeps packed copies
// younger than twice the grace period, never deletes a blob a writer has
// just relied on.
func (p *packs) reuse(ctx context.Context, d Digest, data []byte) (bool, error) {
	es, gen, err := p.copiesOf(ctx, d)
	if err != nil || len(es) == 0 {
		return false, err
	}
	buf, plain := getBuf(), getBuf()
	defer putBuf(buf)
	defer putBuf(plain)
	cutoff := time.Now().Add(-p.grace).UnixNano()
	for _, e := range es {
		if e.time < cutoff {
			return false, nil // this one and every later one are too old
		}
		err = p.holdsCopy(ctx, e, data, buf, plain)
		switch {
		case err == nil:
		case errors.Is(err, ErrNoIdentity):
			if p.crypt.canOpen() {
				return false, fmt.Errorf("already stored, encrypted to recipients none of the identities given can open: %w", err)
			}
		case errors.Is(err, ErrCorrupt), errors.Is(err, ErrNotFound):
			continue
		default:
			return false, err
		}
		raise(&p.relied, gen)
		return true, nil
	}
	return false, nil
}

// holdsCopy checks that copy e of blob data reads back as data, as reuse
// needs it to: an unencrypted copy whose CRC the index knows by that CRC
// (it is then the bytes its writer made of data; the CRC tells a copy
// damaged since, without decoding it), any other by decoding it. buf and
// plain are scratch space.
func (p *packs) holdsCopy(ctx context.Context, e entry, data []byte, buf, plain *[]byte) error {
	if e.isHuge() {
		return p.holdsHuge(ctx, e, data)
	}
	stored, err := p.read(ctx, e, buf)
	switch {
	case err != nil:
		return err
	case e.hasCRC && !e.sealed:
		if crc32.Checksum(stored, castagnoli) != e.crc {
			return corrupt(e.d, "stored form fails its CRC", nil)
		}
		return nil
	}
	*plain, err = holds(p.dec, p.crypt, e.d, stored, data, (*plain)[:0])
	return err
}

// isPending reports whether d waits for the next commit.
func (p *packs) isPending(d Digest) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pending[d]
	return ok
}

// add appends blob d's stored form (size bytes of data) to the pack being
// built, visible at the next commit. A blob already pending is not added
// again. stored is copied: the caller may reuse it.
func (p *packs) add(d Digest, stored []byte, size int) error {
	e := entry{d: d, length: uint32(len(stored)), size: uint32(size), sealed: isEncrypted(stored), time: time.Now().UnixNano()}.withCRC(stored)
	write, err := func() (func() error, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if _, ok := p.pending[d]; ok {
			return nil, nil
		}
		b, inMemory := p.place(int64(len(stored)))
		if inMemory {
			p.holdInMemory(b, e, bytes.Clone(stored))
			return nil, nil
		}
		if err := p.spill(b); err != nil {
			return nil, err
		}
		e.off = uint32(b.size)
		write := b.queue(stored)
		p.hold(b, e)
		return write, nil
	}()
	if err == nil && write != nil {
		err = write() // with the lock released (building.queue)
	}
	if err != nil {
		return fmt.Errorf("put blob %s: %w", d, err)
	}
	return nil
}

// place is where a stored form of n bytes goes in the batch, under p.mu:
// the pack being built (a new one when there is none, or when the form
// would take the one being filled past packTarget), and whether the form
// waits in memory there: while the pack has no file yet and the forms it
// holds are few and small, the batch may still be written as loose blobs
// (Commit).
func (p *packs) place(n int64) (b *building, inMemory bool) {
	b = p.cur
	if b == nil {
		b = &building{id: newPackID()}
		p.cur = b
	}
	if b.f == nil && len(b.entries) < p.looseMax && int64(b.memSize)+n <= looseMem {
		return b, true
	}
	if b.f != nil && len(b.entries) > 0 && b.size+n > packTarget {
		p.full = append(p.full, b)
		b = &building{id: newPackID()}
		p.cur = b
	}
	return b, false
}

// hold records e in b, under p.mu, once its stored form is in b's file
// (e.off says where).
func (p *packs) hold(b *building, e entry) {
	b.entries = append(b.entries, e)
	p.pending[e.d] = struct{}{}
}

// holdInMemory records e in b, under p.mu, its stored form waiting in
// memory (place said it may): b.mem and b.entries stay in step, as spill
// pairs them.
func (p *packs) holdInMemory(b *building, e entry, form []byte) {
	b.mem = append(b.mem, form)
	b.memSize += len(form)
	p.hold(b, e)
}

// spill gives b its temp file, if it has none yet, and moves the blobs it
// held in memory there.
func (p *packs) spill(b *building) error {
	if b.f != nil {
		return nil
	}
	f, err := p.be.createTemp()
	if err != nil {
		return err
	}
	b.f = f
	// At most looseMem bytes: they wait in the buffer for the next
	// writes (queue), which keep the lock no longer.
	b.buf = append(b.buf, packMagic...)
	b.size = int64(len(packMagic))
	for i, stored := range b.mem {
		b.entries[i].off = uint32(b.size)
		b.buf = append(b.buf, stored...)
		b.size += int64(len(stored))
	}
	b.mem, b.memSize = nil, 0
	return nil
}

// discard removes a building pack's temp file.
func (b *building) discard() {
	if b.f != nil {
		b.f.Close()
		os.Remove(b.f.Name())
	}
}

// finish writes b's trailer and flushes it, leaving f complete.
func (b *building) finish() error {
	b.write(packTrailer(b.entries)) // its error is flush's too, once every write is done
	if err := b.flush(); err != nil {
		return err
	}
	for i := range b.entries {
		b.entries[i].pack = b.id
	}
	return nil
}

// commit makes every blob pending when it is called durable and visible:
// each pack is finished and published, then one index of them all, and
// only then does commit return. A batch of at most looseMax blobs goes to
// writeLoose instead.
func (p *packs) commit(ctx context.Context) (err error) {
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	p.mu.Lock()
	batch := p.full
	if p.cur != nil {
		batch = append(batch, p.cur)
	}
	p.cur, p.full = nil, nil
	n := 0
	for _, b := range batch {
		n += len(b.entries)
		for _, e := range b.entries {
			delete(p.pending, e.d)
		}
	}
	p.mu.Unlock()
	relied := p.relied.Load() > p.durable.Load() // a PutPending before this commit relied on a copy not known durable
	defer func() {
		if err != nil {
			for _, b := range batch {
				b.discard()
			}
			err = fmt.Errorf("commit %d blobs: %w", n, err)
		}
	}()
	if n == 0 {
		if relied {
			return p.syncNames(ctx)
		}
		return nil
	}
	if len(batch) == 1 && batch[0].f == nil && p.writeLoose != nil {
		blobs := make([]looseBlob, len(batch[0].mem))
		for i, stored := range batch[0].mem {
			blobs[i] = looseBlob{batch[0].entries[i].d, stored}
		}
		if err := p.writeLoose(ctx, blobs); err != nil {
			return err
		}
		if relied {
			return p.syncNames(ctx)
		}
		return nil
	}
	var all []entry
	temps := make([]tempFile, len(batch))
	for i, b := range batch {
		if err := p.spill(b); err != nil {
			return err
		}
		if err := b.finish(); err != nil {
			return err
		}
		all = append(all, b.entries...)
		temps[i] = tempFile{b.id, b.f}
	}
	idx, err := p.be.createTemp()
	if err != nil {
		return err
	}
	content := encodeIndex(all)
	if _, err := idx.Write(content); err != nil {
		idx.Close()
		os.Remove(idx.Name())
		return err
	}
	id := newPackID()
	batch = nil // publishBatch removes what it does not publish
	gen := p.snapGen()
	if err := p.be.publishBatch(ctx, temps, tempFile{id, idx}); err != nil {
		return err
	}
	p.markDurable(gen) // publishBatch ends with syncNames
	// Read from memory: another writer's compaction may already have
	// merged the file into one of its own and deleted it.
	f, err := parseIndex(id, content, nil)
	if err != nil {
		return err
	}
	p.addIndex(f)
	// The blobs are durable and visible: a failed compaction leaves the
	// indexes as they were, all valid, for the next commit to try again.
	p.compact(ctx)
	return nil
}

// writeIndex writes and publishes an index file of content, and loads it.
func (p *packs) writeIndex(ctx context.Context, content []byte) (*idxFile, error) {
	tmp, err := p.be.createTemp()
	if err != nil {
		return nil, err
	}
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	return p.publishIndex(ctx, tmp)
}

// publishIndex publishes a complete index temp file under a new id and
// loads it; nil (and no error) when it is gone already, merged by another
// writer's compaction (see adopt).
func (p *packs) publishIndex(ctx context.Context, tmp *os.File) (*idxFile, error) {
	id := newPackID()
	if err := p.be.publishIndex(ctx, id, tmp); err != nil {
		os.Remove(tmp.Name())
		return nil, err
	}
	f, err := p.be.loadIndex(ctx, id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f, err
}

// adopt makes index f, just written by this store, part of the snapshot
// in place of the indexes drop; an f gone already (nil) means listing
// them all again.
func (p *packs) adopt(ctx context.Context, f *idxFile, drop ...packID) error {
	if f == nil {
		return p.refresh(ctx)
	}
	p.addIndex(f, drop...)
	return nil
}

// Index files accumulate: every commit of more than looseMax blobs writes
// one, from every process. So that a reader, which maps them all, keeps
// opening few, a commit that finds more than maxIndexes merges the small
// ones (fewer than compactBelow records each) into one: written first,
// then the others deleted, so that a reader loses nothing whatever it
// loaded; two writers that compact at once leave duplicate records, which
// the next compaction merges. Large indexes are left to bs store repack.
const (
	maxIndexes   = 16
	compactBelow = 1 << 16
)

// compact merges the smallest index files, when there are too many.
func (p *packs) compact(ctx context.Context) error {
	if err := p.refresh(ctx); err != nil {
		return err
	}
	s := p.snap.Load()
	if len(s.files) <= maxIndexes {
		return nil
	}
	small := slices.Clone(s.files)
	slices.SortFunc(small, func(a, b *idxFile) int { return cmp.Compare(a.n, b.n) })
	k := len(small) - maxIndexes/2 + 1
	for k > 0 && small[k-1].n >= compactBelow {
		k--
	}
	if k < 2 {
		return nil
	}
	small = small[:k]
	f, err := p.mergeIndexes(ctx, small, nil)
	if err != nil {
		return err
	}
	ids := make([]packID, len(small))
	for i, g := range small {
		ids[i] = g.id
	}
	if err := p.adopt(ctx, f, ids...); err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if err := p.be.deleteIndex(ctx, id); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// mergeIndexes writes and loads one index file holding the records of
// files that keep accepts (all when keep is nil), each copy once. It
// streams: two merged walks, one to count (the header comes first), one
// to write, so an index of millions of records needs no memory of its
// size.
func (p *packs) mergeIndexes(ctx context.Context, files []*idxFile, keep func(entry) bool) (*idxFile, error) {
	walk := func(fn func(entry) error) error {
		var prev entry
		first := true
		return merged(files, func(e entry) error {
			if !first && e.d == prev.d && e.pack == prev.pack && e.off == prev.off {
				return nil // the same copy, in two indexes
			}
			first, prev = false, e
			if keep != nil && !keep(e) {
				return nil
			}
			return fn(e)
		})
	}
	var counts [256]uint32
	var packs []packID
	seen := map[packID]bool{}
	n := 0
	err := walk(func(e entry) error {
		counts[e.d[0]]++
		n++
		if !seen[e.pack] {
			seen[e.pack] = true
			packs = append(packs, e.pack)
		}
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	tmp, err := p.be.createTemp()
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*idxFile, error) {
		tmp.Close()
		os.Remove(tmp.Name())
		return nil, err
	}
	w := bufio.NewWriterSize(tmp, 256<<10)
	write := func(b []byte) error { _, err := w.Write(b); return err }
	iw, err := newIndexWriter(write, packs, n, &counts)
	if err != nil {
		return fail(err)
	}
	if err := walk(iw.add); err != nil {
		return fail(err)
	}
	if err := iw.finish(); err != nil {
		return fail(err)
	}
	if err := w.Flush(); err != nil {
		return fail(err)
	}
	return p.publishIndex(ctx, tmp)
}
