package blobstore

import (
	"bytes"
	"encoding/binary"
	"runtime"
	"sync/atomic"
)

// keyTable holds every record of a snapshot's index files in one array,
// ordered by the first eight bytes of its digest: a lookup is then one
// binary search over dense memory instead of one per file, each of which
// misses the cache on its own fanout and records. A run over values that
// are stored already looks up every one of them (twice, when the search
// index asks whether it is sealed), and with the sixteen index files a
// store keeps before it compacts them, those misses were most of a
// lookup's cost.
type keyTable struct {
	keys []uint64 // the first eight bytes of each digest, ascending
	refs []uint32 // for keys[i]: record refs[i] - starts[f] of files[f]
	// starts[f] is the number of files[f]'s first record when the files'
	// records are counted one after another; starts[len(files)] is them all.
	starts []int
	files  []*idxFile // the files the table holds
	// rest are the files whose records are not in order: a damaged file
	// the merge cannot take (its own search misses what its disorder
	// hides, as it did before the table), searched on its own.
	rest []*idxFile
}

// Thresholds of tableWorth: a snapshot builds its table once it has
// served minTableLookups lookups and those have searched, file by file,
// at least one record in tableRecordsPerSearch of the whole: building
// reads every record once, so a handful of lookups (restore --id) never
// pays for it, while a run over thousands of values does within its first
// percent of them.
const (
	minTableLookups       = 256
	tableRecordsPerSearch = 8
)

// noteLookup counts a lookup of s and returns its table, building it
// when the lookups so far make it worth its cost; nil until then. One
// caller builds it while the others go on searching file by file.
func (s *snapshot) noteLookup() *keyTable {
	if t := s.table.Load(); t != nil {
		return t
	}
	n := s.lookups.Add(1)
	// Checked at powers of two, so the count of records is added up
	// a few times per snapshot, not per lookup.
	if n < minTableLookups || n&(n-1) != 0 || !s.tableWorth(n) || !s.building.CompareAndSwap(false, true) {
		return nil
	}
	t := newKeyTable(s.files)
	s.table.Store(t)
	return t
}

// tableWorth is whether n lookups make the table worth building.
func (s *snapshot) tableWorth(n int64) bool {
	if len(s.files) < 2 {
		return false // a file's own fanout and records are the table
	}
	total := 0
	for _, f := range s.files {
		total += f.n
	}
	return n*int64(len(s.files))*tableRecordsPerSearch >= int64(total)
}

// newKeyTable merges the keys of files, each in order already, into one
// table; a file whose keys are not in order stays out of it.
func newKeyTable(all []*idxFile) *keyTable {
	defer runtime.KeepAlive(all)
	t := &keyTable{}
	for _, f := range all {
		if f.sorted() {
			t.files = append(t.files, f)
		} else {
			t.rest = append(t.rest, f)
		}
	}
	files := t.files
	t.starts = make([]int, len(files)+1)
	for i, f := range files {
		t.starts[i+1] = t.starts[i] + f.n
	}
	n := t.starts[len(files)]
	t.keys, t.refs = make([]uint64, 0, n), make([]uint32, 0, n)
	// A k-way merge on a heap of the files' cursors.
	type cursor struct {
		f    int // index into files
		i    int // the record
		key  uint64
		base uint32 // starts[f]
	}
	key := func(f *idxFile, i int) uint64 { return binary.BigEndian.Uint64(f.recs[i*f.stride:]) }
	h := make([]cursor, 0, len(files))
	for i, f := range files {
		if f.n > 0 {
			h = append(h, cursor{f: i, key: key(f, 0), base: uint32(t.starts[i])})
		}
	}
	less := func(a, b cursor) bool { return a.key < b.key }
	down := func(i int) { siftDown(h, i, less) }
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 {
		c := &h[0]
		t.keys = append(t.keys, c.key)
		t.refs = append(t.refs, c.base+uint32(c.i))
		c.i++
		if f := files[c.f]; c.i < f.n {
			c.key = key(f, c.i)
		} else {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
	return t
}

// lookup appends the copies of d that the files t was built from hold to
// out, in no particular order.
func (t *keyTable) lookup(d Digest, out []entry) []entry {
	files := t.files
	defer runtime.KeepAlive(files)
	for _, f := range t.rest {
		out = f.lookup(d, out)
	}
	key := binary.BigEndian.Uint64(d[:8])
	keys := t.keys
	i := sortSearch(len(keys), func(i int) bool { return keys[i] >= key })
	for ; i < len(keys) && keys[i] == key; i++ {
		ref := int(t.refs[i])
		fi := sortSearch(len(files), func(f int) bool { return t.starts[f+1] > ref })
		f, r := files[fi], ref-t.starts[fi]
		if !bytes.Equal(f.recs[r*f.stride+8:r*f.stride+32], d[8:]) {
			continue
		}
		if e, err := f.record(r); err == nil {
			out = append(out, e)
		}
	}
	return out
}

// sorted reports whether f's records are in the order of their keys, as
// its writer left them: the table's merge takes that for granted.
func (f *idxFile) sorted() bool {
	defer runtime.KeepAlive(f)
	var prev uint64
	for i := range f.n {
		k := binary.BigEndian.Uint64(f.recs[i*f.stride:])
		if k < prev {
			return false
		}
		prev = k
	}
	return true
}

// tableState is what a snapshot keeps for its table: the lookups it has
// served and the table once built.
type tableState struct {
	lookups  atomic.Int64
	building atomic.Bool
	table    atomic.Pointer[keyTable]
}
