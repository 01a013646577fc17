package blobstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"
)

// Packs are immutable: a blob leaves one only when the pack is rewritten
// without it. Every rewrite here keeps one rule, which makes any number of
// them safe beside each other and beside writers: a pack is deleted only
// after every copy to be kept from it is durable in a new pack named by a
// durable index. A reader that loaded an index naming a pack since deleted
// finds the pack gone and lists the indexes again (packs.getBlob).

// packReader reads the stored forms of a pack's copies in windows of up to
// readWindow bytes: one request per window on object storage, rather than
// one per blob.
type packReader struct {
	p      *packs
	id     packID
	buf    []byte
	lo, hi int64 // the window buf holds
}

const readWindow = 8 << 20

// stored returns copy e's stored form; es are the copies still to be
// read, in offset order, which the window is stretched over.
func (r *packReader) stored(ctx context.Context, e entry, next []entry) ([]byte, error) {
	off, end := int64(e.off), int64(e.off)+int64(e.length)
	if off < r.lo || end > r.hi {
		hi := end
		for _, n := range next {
			if nend := int64(n.off) + int64(n.length); nend-off <= readWindow && nend > hi {
				hi = nend
			}
		}
		b, err := r.p.be.readPack(ctx, r.id, off, int(hi-off), r.buf)
		if err != nil {
			return nil, err
		}
		r.buf, r.lo, r.hi = b, off, hi
	}
	return r.buf[off-r.lo : end-r.lo], nil
}

// storedWhole is stored, and a copy a pack cut short lacks bytes of
// corrupt: when the read ahead of it falls short, the copy alone is read
// again, for it may still be whole.
func (r *packReader) storedWhole(ctx context.Context, e entry, next []entry) ([]byte, error) {
	stored, err := r.stored(ctx, e, next)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		if stored, err = r.stored(ctx, e, nil); errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, corrupt(e.d, "its pack is cut short", err)
		}
	}
	return stored, err
}

// trailer reads pack id's own list of its copies.
func (p *packs) trailer(ctx context.Context, id packID) ([]entry, error) {
	pf, err := p.be.statPack(ctx, id)
	if err != nil {
		return nil, err
	}
	foot, err := p.be.readPack(ctx, id, pf.size-footerSize, footerSize, nil)
	if err != nil {
		return nil, err
	}
	n, err := trailerLen(foot, pf.size)
	if err != nil {
		return nil, err
	}
	tail, err := p.be.readPack(ctx, id, pf.size-n, int(n), nil)
	if err != nil {
		return nil, err
	}
	return parseTrailer(id, tail, pf.size)
}

// packSink writes the copies a rewrite keeps into new packs of up to
// packTarget bytes.
type packSink struct {
	p       *packs
	cur     *building
	entries []entry // of the published packs
	written int64   // bytes of the published packs
}

// add appends a stored form, keeping e's digest, size and time (its CRC,
// of a copy indexed from an older pack's trailer, known from now on).
func (s *packSink) add(ctx context.Context, e entry, stored []byte) error {
	if s.cur != nil && s.cur.size+int64(len(stored)) > packTarget {
		if err := s.flush(ctx); err != nil {
			return err
		}
	}
	if s.cur == nil {
		s.cur = &building{id: newPackID()}
		if err := s.p.spill(s.cur); err != nil {
			return err
		}
	}
	e.off, e.length, e.sealed = uint32(s.cur.size), uint32(len(stored)), isEncrypted(stored)
	e = e.withCRC(stored)
	if err := s.cur.write(stored); err != nil {
		return err
	}
	s.cur.entries = append(s.cur.entries, e)
	return nil
}

// flush publishes the pack being written.
func (s *packSink) flush(ctx context.Context) error {
	b := s.cur
	if b == nil {
		return nil
	}
	s.cur = nil
	if err := b.finish(); err != nil {
		b.discard()
		return err
	}
	size := b.size // the trailer's too, which finish wrote
	if err := s.p.be.publishPack(ctx, b.id, b.f); err != nil {
		return err
	}
	s.entries = append(s.entries, b.entries...)
	s.written += size
	return nil
}

// close publishes the last pack and makes them all durable.
func (s *packSink) close(ctx context.Context) error {
	if err := s.flush(ctx); err != nil {
		return err
	}
	if len(s.entries) == 0 {
		return nil
	}
	return s.p.be.syncPacks(ctx)
}

// abort removes the temp file of a pack not yet published.
func (s *packSink) abort() {
	if s.cur != nil {
		s.cur.discard()
		s.cur = nil
	}
}

// copyOut copies the copies es (all of one pack, in offset order) whose
// stored form checks out into sink. It returns those that do not: a
// damaged copy is never copied, and its pack is not to be deleted.
// A sealed copy this store cannot open is copied as it is.
func (p *packs) copyOut(ctx context.Context, sink *packSink, id packID, es []entry) ([]Problem, error) {
	r := &packReader{p: p, id: id}
	var bad []Problem
	plain := getBuf()
	defer putBuf(plain)
	for i, e := range es {
		stored, err := r.storedWhole(ctx, e, es[i+1:])
		if errors.Is(err, ErrCorrupt) {
			bad = append(bad, Problem{Digest: e.d, Err: err, Pack: id.String()})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pack %s: %w", id, err)
		}
		if _, err := p.check(e.d, stored, plain); err != nil {
			bad = append(bad, Problem{Digest: e.d, Err: err, Pack: id.String()})
			continue
		}
		if err := sink.add(ctx, e, stored); err != nil {
			return nil, err
		}
	}
	return bad, nil
}

// rescue looks, for blob d whose copy in pack bad does not read back, for
// an intact copy elsewhere that will stay: in a pack the plan keeps, in
// one it rewrites (then carried into sink), or loose. When there is one,
// the damaged copy holds nothing worth keeping its pack for.
func (p *packs) rescue(ctx context.Context, lt looseSweeper, pl *plan, sink *packSink, d Digest, bad packID) (bool, error) {
	plain := getBuf()
	defer putBuf(plain)
	for _, e := range pl.s.lookup(d) {
		if _, there := pl.present[e.pack]; !there || e.pack == bad {
			continue
		}
		var buf []byte
		stored, err := p.read(ctx, e, &buf)
		if err == nil {
			_, err = p.check(d, stored, plain)
		}
		if err != nil {
			continue
		}
		if u := pl.use[e.pack]; u != nil && (u.rewrite || u.delete) && !u.damaged {
			if err := sink.add(ctx, e, stored); err != nil {
				return false, err
			}
		}
		return true, nil
	}
	stored, _, err := lt.loadLoose(ctx, d)
	if err == nil {
		_, err = p.check(d, stored, plain)
	}
	return err == nil, nil
}

// salvage copies the copies es of pack id that read back intact into
// sink (copyOut), and for each that does not, looks for an intact copy
// elsewhere (rescue). The damaged copies none stands in for keep their
// pack: it is marked damaged, and they are returned.
func (p *packs) salvage(ctx context.Context, lt looseSweeper, pl *plan, sink *packSink, id packID, es []entry) ([]Problem, error) {
	bad, err := p.copyOut(ctx, sink, id, es)
	if err != nil {
		return nil, err
	}
	var left []Problem
	for _, pr := range bad {
		ok, err := p.rescue(ctx, lt, pl, sink, pr.Digest, id)
		if err != nil {
			return nil, err
		}
		if !ok {
			left = append(left, pr)
		}
	}
	if len(left) > 0 {
		pl.use[id].damaged = true
	}
	return left, nil
}

// check verifies a stored form against its digest and returns the size
// of its data; a sealed one this store cannot open passes, of unknown
// size (-1): it cannot be checked, and is copied as it is.
func (p *packs) check(d Digest, stored []byte, plain *[]byte) (int64, error) {
	var err error
	*plain, err = decode(p.dec, p.crypt, d, stored, (*plain)[:0])
	switch {
	case errors.Is(err, ErrNoIdentity):
		return -1, nil
	case err != nil:
		return 0, err
	case Sum(*plain) != d:
		return 0, corrupt(d, "digest mismatch", nil)
	}
	return int64(len(*plain)), nil
}

// drop rewrites every pack holding a copy of one of ds without it, and
// returns the blobs it found a copy of. The old indexes keep naming the
// old packs until a repack: a reader finds those gone.
func (p *packs) drop(ctx context.Context, ds []Digest) ([]Digest, error) {
	s, err := p.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	set := map[Digest]bool{}
	var found []Digest
	var ids []packID
	for _, d := range ds {
		for _, e := range s.lookup(d) {
			if ok, err := p.packThere(ctx, e.pack); err != nil {
				return nil, err
			} else if !ok {
				continue
			}
			if !set[d] {
				set[d] = true
				found = append(found, d)
			}
			if !slices.Contains(ids, e.pack) {
				ids = append(ids, e.pack)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	sink := &packSink{p: p}
	defer sink.abort()
	for _, id := range ids {
		es, err := p.trailer(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("delete from pack %s: %w", id, err)
		}
		es = slices.DeleteFunc(es, func(e entry) bool { return set[e.d] })
		slices.SortFunc(es, func(a, b entry) int { return cmp.Compare(a.off, b.off) })
		// A damaged copy left out is lost with its pack: it could not be
		// read anyway.
		if _, err := p.copyOut(ctx, sink, id, es); err != nil {
			return nil, err
		}
	}
	if err := sink.close(ctx); err != nil {
		return nil, err
	}
	if len(sink.entries) > 0 {
		f, err := p.writeIndex(ctx, encodeIndex(sink.entries))
		if err == nil {
			err = p.adopt(ctx, f)
		}
		if err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		if err := p.be.deletePack(ctx, id); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		p.gone.Store(id, struct{}{})
	}
	return found, p.be.syncNames(ctx)
}

// memIndex is entries as an in-memory index file, to merge with others.
func memIndex(entries []entry) (*idxFile, error) {
	return parseIndex(newPackID(), encodeIndex(entries), nil)
}

// RepackOptions configure Repack.
type RepackOptions struct {
	// Small is the size below which packs are merged; 0 means half of the
	// pack size packs are written at (16 MiB).
	Small  int64
	DryRun bool // say what would be done, change nothing
	// Progress, if set, is told the stored bytes copied so far of total.
	Progress func(done, total int64)
}

// RepackResult says what a repack did (or would do).
type RepackResult struct {
	PacksBefore int   `json:"packs_before"`
	PacksAfter  int   `json:"packs_after"`
	Merged      int   `json:"packs_merged"` // small packs rewritten into new ones
	Loose       int   `json:"loose_packed"` // loose blobs moved into packs
	Reindexed   int   `json:"packs_reindexed"`
	IndexBefore int   `json:"indexes_before"`
	BytesBefore int64 `json:"bytes_before"` // of packs and loose blobs
	BytesAfter  int64 `json:"bytes_after"`
	// Damaged lists the copies left where they were because they do not
	// read back intact.
	Damaged []Problem `json:"-"`
}

// PruneOptions configure Prune.
type PruneOptions struct {
	// Keep reports the blobs a live transcript references: they stay,
	// however old.
	Keep func(Digest) bool
	// Cutoff: an unreferenced blob goes when its newest copy was written
	// (or re-used) before it. A packed copy younger than twice the grace
	// period (see Cloud.RefreshAfter) stays whatever the cutoff: a writer
	// relies on packed copies that young without writing them again.
	Cutoff time.Time
	// RewriteAbove: a pack whose share of unreferenced old bytes is above
	// it is rewritten without them; a pack that holds nothing else is
	// deleted. 0 means DefaultRewriteAbove.
	RewriteAbove float64
	DryRun       bool
	// Progress, if set, is told how far each phase got ("list": blobs
	// listed, total -1; "sweep": packs and loose blobs done of total).
	Progress func(phase string, done, total int)
}

// DefaultRewriteAbove is the share of unreferenced bytes above which
// Prune rewrites a pack: a quarter, so that a store carries at most about
// a third more than what it keeps, and a pack is rewritten when that
// frees a real share of it.
const DefaultRewriteAbove = 0.25

// Removed is a blob Prune deleted, and what its copies took.
type Removed struct {
	Digest Digest
	Bytes  int64
}

// PruneResult says what Prune did (or would do).
type PruneResult struct {
	Listed         int
	Referenced     int
	Recent         int       // unreferenced, written at or after the cutoff (or within twice the grace period)
	Removed        []Removed // sorted by digest
	Bytes          int64     // their stored bytes
	PacksDeleted   int
	PacksRewritten int
	Freed          int64 // bytes of packs and loose files deleted, less those of the packs written
	// LeftDead counts unreferenced old blobs left in packs whose dead
	// share is below RewriteAbove, and the bytes they take.
	LeftDead      int
	LeftDeadBytes int64
	Damaged       []Problem
}

// looseSweeper is a loose tier that maintenance can also read, date and
// delete in bulk.
type looseSweeper interface {
	looseTier
	// loadLoose returns blob d's loose stored form and its Info.
	loadLoose(ctx context.Context, d Digest) ([]byte, Info, error)
	// removeLoose deletes blob d's loose copy, durable after syncLoose.
	removeLoose(ctx context.Context, d Digest) error
	syncLoose(ctx context.Context) error
	// cleanLooseTemps removes crashed writers' temp files an hour old.
	cleanLooseTemps()
}

// plan is what a maintenance pass found: the packs, how much of each is
// dead, and the loose blobs.
type plan struct {
	s       *snapshot
	present map[packID]packFile
	use     map[packID]*packUse
	loose   map[Digest]Info
	orphans []entry // copies in packs no index names, from their trailers
	// dangling counts records naming packs that are gone.
	dangling int
	// looseGone holds the dead loose blobs a prune deleted.
	looseGone map[Digest]bool
	// looseDamaged holds the loose blobs whose file or metadata is
	// damaged, so that their time could not be told.
	looseDamaged map[Digest]bool
}

type packUse struct {
	blobs, dead       int
	bytes, deadBytes  int64
	rewrite, delete   bool
	damaged           bool // a copy does not read back: keep the pack
	reindexed, listed bool
}

// survey lists the packs and loose blobs and walks the indexes once.
// judge, if set, is told each blob's present copies (newest first) and
// loose Info (nil if none), and returns whether the blob is dead; dead
// copies count in packUse.dead.
func (p *packs) survey(ctx context.Context, lt looseSweeper, judge func(d Digest, copies []entry, loose *Info) bool) (*plan, error) {
	// What crashed writers left an hour ago or more goes first.
	p.be.cleanTemps()
	lt.cleanLooseTemps()
	if err := p.refresh(ctx); err != nil {
		return nil, err
	}
	pl := &plan{s: p.snap.Load(), present: map[packID]packFile{}, use: map[packID]*packUse{}, loose: map[Digest]Info{}, looseDamaged: map[Digest]bool{}}
	if err := p.be.listPacks(ctx, func(pf packFile) error { pl.present[pf.id] = pf; return nil }); err != nil {
		return nil, fmt.Errorf("list packs of %s: %w", p.be.where(), err)
	}
	err := lt.listLoose(ctx, func(d Digest) error {
		info, err := lt.statLoose(ctx, d)
		switch {
		case errors.Is(err, ErrNotFound):
			return nil
		case errors.Is(err, ErrCorrupt):
			// Its time cannot be told: as good as new, so a prune keeps
			// it; a repack drops it once a packed copy serves.
			info, err = Info{ModTime: time.Now()}, nil
			pl.looseDamaged[d] = true
		}
		pl.loose[d] = info
		return err
	})
	if err != nil {
		return nil, err
	}
	var group []entry
	flush := func() {
		if len(group) == 0 {
			return
		}
		var loose *Info
		if info, ok := pl.loose[group[0].d]; ok {
			loose = &info
		}
		dead := judge != nil && judge(group[0].d, group, loose)
		for _, e := range group {
			u := pl.use[e.pack]
			u.blobs++
			u.bytes += int64(e.length)
			if dead {
				u.dead++
				u.deadBytes += int64(e.length)
			}
		}
		group = group[:0]
	}
	err = merged(pl.s.files, func(e entry) error {
		if len(group) > 0 && group[0].d != e.d {
			flush()
		}
		if _, ok := pl.present[e.pack]; !ok {
			pl.dangling++
			return nil
		}
		if pl.use[e.pack] == nil {
			pl.use[e.pack] = &packUse{listed: true}
		}
		if n := len(group); n > 0 && group[n-1].pack == e.pack && group[n-1].off == e.off {
			return nil // the same copy in two indexes
		}
		group = append(group, e)
		return ctx.Err()
	})
	if err != nil {
		return nil, err
	}
	flush()
	// A pack no index names is the work of a writer that crashed between
	// its pack and its index, or of a rewrite between its index and its
	// deletions: indexed again from its trailer once it is an hour old
	// (never lose a byte), so the next prune judges its blobs.
	cutoff := time.Now().Add(-staleTempAge)
	for id, pf := range pl.present {
		if pl.use[id] != nil || !pf.mtime.Before(cutoff) {
			continue
		}
		es, err := p.trailer(ctx, id)
		if err != nil {
			continue // its trailer is damaged: store verify names it
		}
		pl.orphans = append(pl.orphans, es...)
		pl.use[id] = &packUse{reindexed: true, blobs: len(es)}
	}
	return pl, nil
}

// gather collects, in one more walk, the copies to carry over from the
// packs marked rewrite: of each blob not dead whose only present copies
// are in such packs, its newest copy there. Copies are grouped by pack,
// in offset order.
func (pl *plan) gather(dead func(Digest) bool) map[packID][]entry {
	out := map[packID][]entry{}
	var group []entry
	flush := func() {
		if len(group) == 0 || dead(group[0].d) {
			group = group[:0]
			return
		}
		var pick *entry
		for i, e := range group {
			u := pl.use[e.pack]
			if !u.rewrite && !u.delete {
				pick = nil // a kept pack has it
				break
			}
			if u.rewrite && pick == nil {
				pick = &group[i]
			}
		}
		if pick != nil {
			out[pick.pack] = append(out[pick.pack], *pick)
		}
		group = group[:0]
	}
	merged(pl.s.files, func(e entry) error {
		if len(group) > 0 && group[0].d != e.d {
			flush()
		}
		if _, ok := pl.present[e.pack]; ok {
			group = append(group, e)
		}
		return nil
	})
	flush()
	for id := range out {
		slices.SortFunc(out[id], func(a, b entry) int { return cmp.Compare(a.off, b.off) })
	}
	return out
}

// commitPlan writes the one index that replaces all of pl's: every record
// of theirs whose pack stays, the new copies, and the orphans' copies;
// then deletes pl's index files and the packs that went.
func (p *packs) commitPlan(ctx context.Context, pl *plan, fresh []entry) error {
	var extra []entry
	extra = append(append(extra, fresh...), pl.orphans...)
	files := slices.Clone(pl.s.files)
	if len(extra) > 0 {
		f, err := memIndex(extra)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	newPacks := map[packID]bool{}
	for _, e := range fresh {
		newPacks[e.pack] = true
	}
	keep := func(e entry) bool {
		if newPacks[e.pack] {
			return true
		}
		if _, ok := pl.present[e.pack]; !ok {
			return false
		}
		u := pl.use[e.pack]
		return u == nil || u.damaged || !u.rewrite && !u.delete
	}
	f, err := p.mergeIndexes(ctx, files, keep)
	if err != nil {
		return err
	}
	old := make([]packID, len(pl.s.files))
	for i, g := range pl.s.files {
		old[i] = g.id
	}
	if err := p.adopt(ctx, f, old...); err != nil {
		return err
	}
	for _, id := range old {
		if err := p.be.deleteIndex(ctx, id); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	// The index that replaces them is durable; their removal must be
	// before any pack goes, or a crash could bring back an index naming
	// a deleted pack (harmless, but noise for store verify).
	if err := p.be.syncNames(ctx); err != nil {
		return err
	}
	for id, u := range pl.use {
		if (u.rewrite || u.delete) && !u.damaged {
			if err := p.be.deletePack(ctx, id); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			p.gone.Store(id, struct{}{})
		}
	}
	return p.be.syncNames(ctx)
}

// repack merges small packs and packs loose blobs (see Local.Repack).
func (p *packs) repack(ctx context.Context, lt looseSweeper, opt RepackOptions) (RepackResult, error) {
	var res RepackResult
	small := opt.Small
	if small <= 0 {
		small = packTarget / 2
	}
	pl, err := p.survey(ctx, lt, nil)
	if err != nil {
		return res, err
	}
	res.PacksBefore, res.IndexBefore = len(pl.present), len(pl.s.files)
	for id, pf := range pl.present {
		res.BytesBefore += pf.size
		if u := pl.use[id]; u != nil && !u.reindexed && pf.size < small {
			u.rewrite = true
			res.Merged++
		}
	}
	res.Reindexed = len(pl.use) - countListed(pl.use)
	// A loose blob goes into a pack, unless a packed copy that reads back
	// intact has it already: then it only goes.
	var toPack, dropped []Digest
	for d, info := range pl.loose {
		res.BytesBefore += info.Size
		if !pl.packed(d) {
			toPack = append(toPack, d)
		} else if _, err := p.get(ctx, d); err == nil {
			dropped = append(dropped, d)
		} else if ctx.Err() != nil {
			return res, ctx.Err()
		} else {
			toPack = append(toPack, d)
		}
	}
	slices.SortFunc(toPack, func(a, b Digest) int { return bytes.Compare(a[:], b[:]) })
	// One small pack alone, with nothing to add, is as good as it gets.
	if res.Merged == 1 && len(toPack) == 0 {
		for _, u := range pl.use {
			u.rewrite = false
		}
		res.Merged = 0
	}
	carry := pl.gather(func(Digest) bool { return false })
	res.Loose = len(toPack) + len(dropped)
	var total, done int64
	for _, es := range carry {
		for _, e := range es {
			total += int64(e.length)
		}
	}
	for _, d := range toPack {
		total += pl.loose[d].Size
	}
	nothing := res.Merged == 0 && res.Loose == 0 && len(pl.orphans) == 0 && pl.dangling == 0 && len(pl.s.files) <= 1
	if opt.DryRun || nothing {
		// What a repack would leave, about: the packs it keeps, and the
		// bytes it copies in packs of packTarget.
		res.PacksAfter = len(pl.present) - res.Merged + int((total+packTarget-1)/packTarget)
		res.BytesAfter = total
		for id, pf := range pl.present {
			if u := pl.use[id]; u == nil || !u.rewrite {
				res.BytesAfter += pf.size
			}
		}
		return res, nil
	}
	progress := func(n int64) {
		done += n
		if opt.Progress != nil {
			opt.Progress(done, total)
		}
	}
	sink := &packSink{p: p}
	defer sink.abort()
	for _, id := range sortedIDs(carry) {
		bad, err := p.salvage(ctx, lt, pl, sink, id, carry[id])
		if err != nil {
			return res, err
		}
		res.Damaged = append(res.Damaged, bad...)
		for _, e := range carry[id] {
			progress(int64(e.length))
		}
	}
	plain := getBuf()
	defer putBuf(plain)
	for _, d := range toPack {
		stored, info, err := lt.loadLoose(ctx, d)
		if errors.Is(err, ErrNotFound) {
			continue
		}
		var size int64
		if err == nil {
			size, err = p.check(d, stored, plain)
		}
		if errors.Is(err, ErrCorrupt) {
			res.Damaged = append(res.Damaged, Problem{Digest: d, Err: err})
			res.Loose--
			continue
		}
		if err != nil {
			return res, err
		}
		if err := sink.add(ctx, entry{d: d, time: info.ModTime.UnixNano(), size: sizeField(size)}, stored); err != nil {
			return res, err
		}
		dropped = append(dropped, d)
		pl.loose[d] = info
		progress(info.Size)
	}
	if err := sink.close(ctx); err != nil {
		return res, err
	}
	if err := p.commitPlan(ctx, pl, sink.entries); err != nil {
		return res, err
	}
	// A loose blob goes once a packed copy is durable, unless a writer
	// re-used it meanwhile (its time moved): then both stay.
	for _, d := range dropped {
		info, err := lt.statLoose(ctx, d)
		if !pl.looseDamaged[d] && (err != nil || !info.ModTime.Equal(pl.loose[d].ModTime)) {
			continue
		}
		if err := lt.removeLoose(ctx, d); err != nil && !errors.Is(err, ErrNotFound) {
			return res, err
		}
	}
	if err := lt.syncLoose(ctx); err != nil {
		return res, err
	}
	err = p.be.listPacks(ctx, func(pf packFile) error {
		res.PacksAfter++
		res.BytesAfter += pf.size
		return nil
	})
	if err != nil {
		return res, err
	}
	err = lt.listLoose(ctx, func(d Digest) error {
		if info, err := lt.statLoose(ctx, d); err == nil {
			res.BytesAfter += info.Size
		}
		return nil
	})
	return res, err
}

func countListed(use map[packID]*packUse) int {
	n := 0
	for _, u := range use {
		if u.listed {
			n++
		}
	}
	return n
}

func sortedIDs[V any](m map[packID]V) []packID {
	ids := make([]packID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b packID) int { return bytes.Compare(a[:], b[:]) })
	return ids
}

// prune deletes the blobs opt.Keep does not reference that are older than
// the cutoff: loose ones one by one (each looked at again just before it
// goes, and kept if a writer re-used it meanwhile); packed ones by
// deleting the packs that hold nothing else and rewriting those whose dead
// share is above opt.RewriteAbove.
func (p *packs) prune(ctx context.Context, lt looseSweeper, opt PruneOptions) (PruneResult, error) {
	var res PruneResult
	if opt.Keep == nil {
		return res, errors.New("prune: no Keep function")
	}
	share := opt.RewriteAbove
	if share <= 0 {
		share = DefaultRewriteAbove
	}
	packCut := opt.Cutoff
	if g := time.Now().Add(-2 * p.grace); g.Before(packCut) {
		packCut = g
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	dead := map[Digest]bool{}
	judge := func(d Digest, newest int64, loose *Info) bool {
		res.Listed++
		if res.Listed%4096 == 0 {
			progress("list", res.Listed, -1)
		}
		switch {
		case opt.Keep(d):
			res.Referenced++
		case newest >= packCut.UnixNano() || loose != nil && !loose.ModTime.Before(opt.Cutoff):
			res.Recent++
		default:
			dead[d] = true
			return true
		}
		return false
	}
	pl, err := p.survey(ctx, lt, func(d Digest, copies []entry, loose *Info) bool {
		return judge(d, copies[0].time, loose)
	})
	if err != nil {
		return res, err
	}
	// The loose blobs no pack holds.
	for d, info := range pl.loose {
		if !pl.packed(d) {
			info := info
			judge(d, 0, &info)
		}
	}
	for _, u := range pl.use {
		switch {
		case u.reindexed || u.blobs == 0:
		case u.dead == u.blobs:
			u.delete = true
		case float64(u.deadBytes) > share*float64(u.bytes):
			u.rewrite = true
		}
	}
	carry := pl.gather(func(d Digest) bool { return dead[d] })
	if !opt.DryRun {
		if err := p.sweep(ctx, lt, pl, carry, opt.Cutoff, dead, progress, &res); err != nil {
			return res, err
		}
	}
	// What went: a dead blob none of whose copies is left.
	for d := range dead {
		var bytes int64
		left := false
		for _, e := range pl.s.lookup(d) {
			u, ok := pl.use[e.pack]
			if _, there := pl.present[e.pack]; !there || !ok {
				continue
			}
			if !u.rewrite && !u.delete || u.damaged {
				left = true
				res.LeftDeadBytes += int64(e.length)
				continue
			}
			bytes += int64(e.length)
		}
		if info, ok := pl.loose[d]; ok {
			if opt.DryRun || pl.looseGone[d] {
				bytes += info.Size
			} else {
				left = true // re-used since the listing
			}
		}
		if left {
			res.LeftDead++
			continue
		}
		res.Removed = append(res.Removed, Removed{Digest: d, Bytes: bytes})
		res.Bytes += bytes
	}
	slices.SortFunc(res.Removed, func(a, b Removed) int { return bytes.Compare(a.Digest[:], b.Digest[:]) })
	for id, u := range pl.use {
		if u.damaged {
			continue
		}
		if u.delete {
			res.PacksDeleted++
		}
		if u.rewrite {
			res.PacksRewritten++
		}
		if u.delete || u.rewrite {
			res.Freed += pl.present[id].size
		}
		if u.rewrite && opt.DryRun {
			res.Freed -= u.bytes - u.deadBytes // what a rewrite would write back, about
		}
	}
	if opt.DryRun {
		for d := range dead {
			res.Freed += pl.loose[d].Size
		}
	}
	return res, nil
}

// packed reports whether a pack that is there holds a copy of d.
func (pl *plan) packed(d Digest) bool {
	for _, e := range pl.s.lookup(d) {
		if _, ok := pl.present[e.pack]; ok {
			return true
		}
	}
	return false
}

// sweep carries out a prune's plan: the live copies of the packs to
// rewrite go to new packs, one index replaces the old ones, the packs go,
// and the dead loose blobs still older than the cutoff.
func (p *packs) sweep(ctx context.Context, lt looseSweeper, pl *plan, carry map[packID][]entry, cutoff time.Time, dead map[Digest]bool, progress func(string, int, int), res *PruneResult) error {
	var looseDead []Digest
	for d := range dead {
		if _, ok := pl.loose[d]; ok {
			looseDead = append(looseDead, d)
		}
	}
	total, done := len(carry)+len(looseDead), 0
	sink := &packSink{p: p}
	defer sink.abort()
	for _, id := range sortedIDs(carry) {
		bad, err := p.salvage(ctx, lt, pl, sink, id, carry[id])
		if err != nil {
			return err
		}
		res.Damaged = append(res.Damaged, bad...)
		done++
		progress("sweep", done, total)
	}
	if err := sink.close(ctx); err != nil {
		return err
	}
	changed := len(sink.entries) > 0 || len(pl.orphans) > 0 || pl.dangling > 0
	for _, u := range pl.use {
		changed = changed || u.delete || u.rewrite
	}
	if changed {
		if err := p.commitPlan(ctx, pl, sink.entries); err != nil {
			return err
		}
	}
	res.Freed -= sink.written
	pl.looseGone = map[Digest]bool{}
	for _, d := range looseDead {
		done++
		progress("sweep", done, total)
		// Looked at again just before it goes: a writer may have
		// re-used it since the listing.
		info, err := lt.statLoose(ctx, d)
		if err != nil || !info.ModTime.Before(cutoff) {
			continue
		}
		err = lt.removeLoose(ctx, d)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if err == nil {
			pl.looseGone[d] = true
			res.Freed += info.Size
		}
	}
	return lt.syncLoose(ctx)
}
