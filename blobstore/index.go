package blobstore

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
)

// idxFile is a loaded index file, mapped into memory (see mapFile). It is
// read in place: a lookup binary-searches its records. Its mapping is
// released once nothing refers to it (runtime.AddCleanup), so every
// method that reads the mapping keeps the idxFile alive until it is done.
type idxFile struct {
	id     packID
	data   []byte
	packs  []packID
	fanout []byte // 256 × u32
	recs   []byte // n × stride
	n      int
	stride int // a record's size: indexRecordSize, or recordSize in the first layout
}

// errBadIndex is an index file whose layout is wrong: not an index, cut
// short, or its counts do not add up.
var errBadIndex = errors.New("damaged index file")

// parseIndex checks the layout of an index file's bytes (not its sum:
// that reads every byte, see verifySum) and returns it ready for lookups.
// release, if not nil, is called once the idxFile is unreachable.
func parseIndex(id packID, data []byte, release func()) (*idxFile, error) {
	if len(data) < indexHeader+fanoutSize+sumSize {
		return nil, errBadIndex
	}
	var stride int
	switch string(data[:8]) {
	case indexMagic:
		stride = indexRecordSize
	case indexMagicV1:
		stride = recordSize
	default:
		return nil, errBadIndex
	}
	p := int(binary.LittleEndian.Uint32(data[8:]))
	n := int(binary.LittleEndian.Uint32(data[12:]))
	if int64(len(data)) != indexFileSize(p, n, stride) {
		return nil, errBadIndex
	}
	f := &idxFile{id: id, data: data, n: n, stride: stride, fanout: data[indexHeader : indexHeader+fanoutSize]}
	if binary.LittleEndian.Uint32(f.fanout[fanoutSize-4:]) != uint32(n) {
		return nil, errBadIndex
	}
	table := data[indexHeader+fanoutSize:]
	f.packs = make([]packID, p)
	for i := range f.packs {
		copy(f.packs[i][:], table[i*packIDSize:])
	}
	f.recs = table[p*packIDSize : p*packIDSize+n*stride]
	if release != nil {
		runtime.AddCleanup(f, func(release func()) { release() }, release)
	}
	return f, nil
}

// verifySum checks the index file's SHA-256 over all its bytes.
func (f *idxFile) verifySum() error {
	defer runtime.KeepAlive(f)
	body := f.data[:len(f.data)-sumSize]
	sum := sha256.Sum256(body)
	if !bytes.Equal(sum[:], f.data[len(body):]) {
		return errors.New("index checksum mismatch")
	}
	return nil
}

// record decodes record i.
func (f *idxFile) record(i int) (entry, error) {
	e, p := getIndexRecord(f.recs[i*f.stride:], f.stride)
	if int(p) >= len(f.packs) {
		return e, fmt.Errorf("index %s: record %d names pack %d of %d: %w", f.id, i, p, len(f.packs), errBadIndex)
	}
	e.pack = f.packs[p]
	return e, nil
}

// bucket is the range of records whose digest starts with byte b.
func (f *idxFile) bucket(b byte) (lo, hi int) {
	if b > 0 {
		lo = int(binary.LittleEndian.Uint32(f.fanout[4*(int(b)-1):]))
	}
	hi = int(binary.LittleEndian.Uint32(f.fanout[4*int(b):]))
	return min(lo, f.n), min(max(lo, hi), f.n)
}

// lookup appends the copies of d the index holds to out, newest first.
func (f *idxFile) lookup(d Digest, out []entry) []entry {
	defer runtime.KeepAlive(f)
	lo, hi := f.bucket(d[0])
	// A digest is compared by its first eight bytes as a number first,
	// and by the rest only when those are equal (almost never): a lookup
	// searches every index file, and the call of bytes.Compare for each
	// comparison was a fifth of its time (BenchmarkLookup).
	key := binary.BigEndian.Uint64(d[:8])
	i := lo + sortSearch(hi-lo, func(i int) bool {
		rec := f.recs[(lo+i)*f.stride:]
		if k := binary.BigEndian.Uint64(rec); k != key {
			return k > key
		}
		return bytes.Compare(rec[8:32], d[8:]) >= 0
	})
	for ; i < hi && bytes.Equal(f.recs[i*f.stride:i*f.stride+32], d[:]); i++ {
		if e, err := f.record(i); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// sortSearch is sort.Search, without the import.
func sortSearch(n int, f func(int) bool) int {
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !f(m) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// snapshot is the set of index files a reader knows, as of its last
// listing. It is immutable: a refresh makes a new one.
type snapshot struct {
	files []*idxFile
	byID  map[packID]*idxFile
	// gen numbers a store's snapshots in the order they were made
	// (packs.durable).
	gen uint64
	tableState
}

var emptySnapshot = &snapshot{byID: map[packID]*idxFile{}}

// lookup returns every copy of d the indexes hold, newest first.
func (s *snapshot) lookup(d Digest) []entry {
	var out []entry
	if t := s.noteLookup(); t != nil {
		out = t.lookup(d, out)
	} else {
		for _, f := range s.files {
			out = f.lookup(d, out)
		}
	}
	if len(out) > 1 {
		slices.SortStableFunc(out, func(a, b entry) int { return compareEntries(a, b) })
		out = slices.CompactFunc(out, func(a, b entry) bool { return a.pack == b.pack && a.off == b.off })
	}
	return out
}

// merged calls fn for every record of files in digest order (newest
// first among a digest's copies), a k-way merge that holds nothing but a
// cursor per file: an index of millions of blobs is walked, never copied.
// fn's error stops it. A record naming a pack beyond its table is an
// error.
func merged(files []*idxFile, fn func(entry) error) error {
	defer runtime.KeepAlive(files)
	type cursor struct {
		f *idxFile
		i int
		e entry
	}
	h := make([]*cursor, 0, len(files))
	for _, f := range files {
		if f.n == 0 {
			continue
		}
		e, err := f.record(0)
		if err != nil {
			return err
		}
		h = append(h, &cursor{f: f, e: e})
	}
	less := func(a, b *cursor) bool { return compareEntries(a.e, b.e) < 0 }
	down := func(i int) { siftDown(h, i, less) }
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		c := h[0]
		if err := fn(c.e); err != nil {
			return err
		}
		c.i++
		if c.i < c.f.n {
			e, err := c.f.record(c.i)
			if err != nil {
				return err
			}
			c.e = e
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return nil
}

// siftDown moves h[i] down the min-heap h (ordered by less) to where it
// belongs: the merges of sorted index files keep a heap of their cursors.
func siftDown[T any](h []T, i int, less func(a, b T) bool) {
	for {
		l, m := 2*i+1, i
		if l < len(h) && less(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}
