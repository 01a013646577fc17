package blobstore

import (
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"testing"
)

// tableFiles are index files as a store accumulates them: digests spread
// over several files, some stored in more than one, some sharing their
// first eight bytes with another digest (the table's key) but not the
// rest, and an empty file.
func tableFiles(t testing.TB) ([]*idxFile, []Digest) {
	rng := rand.New(rand.NewPCG(1, 2))
	var all []Digest
	var files []*idxFile
	for f := range 6 {
		var es []entry
		n := 300 * f // the first is empty
		for i := range n {
			var d Digest
			switch {
			case i%17 == 3 && len(all) > 0: // a copy of a digest in an earlier file
				d = all[rng.IntN(len(all))]
			case i%23 == 5 && len(all) > 0: // the same key, another digest
				d = all[rng.IntN(len(all))]
				d[31] ^= byte(1 + rng.IntN(255))
			default:
				var seed [16]byte
				binary.LittleEndian.PutUint64(seed[:], uint64(f))
				binary.LittleEndian.PutUint64(seed[8:], uint64(i))
				d = Sum(seed[:])
			}
			all = append(all, d)
			es = append(es, entry{d: d, pack: packID{byte(f), byte(i)}, off: uint32(i), length: 10, size: 10, time: int64(f*1000 + i)})
		}
		idx, err := parseIndex(packID{byte(f)}, encodeIndex(es), nil)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, idx)
	}
	return files, all
}

// TestKeyTable checks that a lookup through the table finds exactly the
// copies the files' own lookups do, for digests that are there, once or
// several times, and for digests that are not, among them digests whose
// key is there.
func TestKeyTable(t *testing.T) {
	files, all := tableFiles(t)
	table := newKeyTable(files)
	if want := len(table.keys); want != table.starts[len(files)] || len(table.refs) != want {
		t.Fatalf("%d keys, %d refs, %d records", len(table.keys), len(table.refs), table.starts[len(files)])
	}
	if !slices.IsSorted(table.keys) {
		t.Fatal("keys out of order")
	}
	var probes []Digest
	for _, d := range all {
		missing := d
		missing[20] ^= 0x80
		probes = append(probes, d, missing)
	}
	probes = append(probes, Digest{}, Digest{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	sorted := func(es []entry) []entry {
		slices.SortFunc(es, compareEntries)
		return es
	}
	for _, d := range probes {
		var want []entry
		for _, f := range files {
			want = f.lookup(d, want)
		}
		got := table.lookup(d, nil)
		if !slices.Equal(sorted(got), sorted(want)) {
			t.Fatalf("%s: table found %v, the files %v", d, got, want)
		}
	}
}

// TestSnapshotTable checks when a snapshot builds its table: not for a
// few lookups, and after enough of them, with the same answers as before.
func TestSnapshotTable(t *testing.T) {
	files, all := tableFiles(t)
	s := &snapshot{files: files}
	before := make([][]entry, len(all))
	for i, d := range all[:minTableLookups-1] {
		before[i] = s.lookup(d)
	}
	if s.table.Load() != nil {
		t.Fatalf("table built after %d lookups", minTableLookups-1)
	}
	for i, d := range all[minTableLookups-1:] {
		before[minTableLookups-1+i] = s.lookup(d)
	}
	if s.table.Load() == nil {
		t.Fatalf("no table after %d lookups", len(all))
	}
	for i, d := range all {
		if got := s.lookup(d); !slices.Equal(got, before[i]) {
			t.Fatalf("%s: %v through the table, %v before", d, got, before[i])
		}
	}
	one := &snapshot{files: files[len(files)-1:]}
	for _, d := range all {
		one.lookup(d)
	}
	if one.table.Load() != nil {
		t.Fatal("a snapshot of one file built a table")
	}
}

// BenchmarkLookupTable is BenchmarkLookup through the table, the digests
// taken in random order, as a transcript's values come.
func BenchmarkLookupTable(b *testing.B) {
	for _, table := range []bool{false, true} {
		name := "files"
		if table {
			name = "table"
		}
		b.Run(name, func(b *testing.B) {
			files, known := lookupFiles(b)
			rand.New(rand.NewPCG(3, 4)).Shuffle(len(known), func(i, j int) { known[i], known[j] = known[j], known[i] })
			s := &snapshot{files: files}
			if table {
				s.table.Store(newKeyTable(files))
			} else {
				s.lookups.Store(-1 << 40) // never builds
			}
			for i := 0; b.Loop(); i++ {
				if got := s.lookup(known[i%len(known)]); len(got) != 1 {
					b.Fatalf("%d copies", len(got))
				}
			}
		})
	}
}

// BenchmarkKeyTable builds the table of BenchmarkLookup's files, which a
// snapshot does once lookups make it worth it (tableWorth).
func BenchmarkKeyTable(b *testing.B) {
	files, _ := lookupFiles(b)
	for b.Loop() {
		newKeyTable(files)
	}
}

// TestKeyTableDamagedFile: an index file whose records are out of order
// (a damaged key, which the layout check does not see) stays out of the
// merge, so it cannot hide the records of the intact files; each lookup
// still finds what searching the files one by one finds.
func TestKeyTableDamagedFile(t *testing.T) {
	files, all := tableFiles(t)
	damaged := slices.Clone(files[2].data)
	f := files[2]
	rec := len(damaged) - sumSize - f.n*f.stride // the first record
	damaged[rec] ^= 0x80
	bad, err := parseIndex(f.id, damaged, nil)
	if err != nil {
		t.Fatal(err)
	}
	files[2] = bad
	table := newKeyTable(files)
	if len(table.rest) != 1 || table.rest[0] != bad {
		t.Fatalf("%d files left out of the table, want the damaged one", len(table.rest))
	}
	for _, d := range all {
		var want []entry
		for _, f := range files {
			want = f.lookup(d, want)
		}
		got := table.lookup(d, nil)
		slices.SortFunc(got, compareEntries)
		slices.SortFunc(want, compareEntries)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: table found %d copies, the files %d", d, len(got), len(want))
		}
	}
}
