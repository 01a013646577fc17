package blobstore

import (
	"crypto/sha256"
	"encoding/binary"
	"testing"
)

// fuzzEntries are a few copies over two packs, some with a CRC, some
// without, two of one digest: the seeds' records.
func fuzzEntries() []entry {
	packs := []packID{{1}, {2}}
	var es []entry
	for i := range 6 {
		e := entry{d: Sum([]byte{byte(i % 5)}), pack: packs[i%2], off: uint32(8 + 100*i), length: 100, size: uint32(300 + i), time: int64(i)}
		if i%3 != 0 {
			e = e.withCRC([]byte{byte(i)})
		}
		es = append(es, e)
	}
	return es
}

// firstLayout is index file b (the current layout) in the first one:
// records without the CRC and the flags, under the first magic.
func firstLayout(b []byte) []byte {
	n := int(binary.LittleEndian.Uint32(b[12:]))
	table := indexHeader + fanoutSize + int(binary.LittleEndian.Uint32(b[8:]))*packIDSize
	out := append([]byte(indexMagicV1), b[8:table]...)
	for i := range n {
		out = append(out, b[table+i*indexRecordSize:table+i*indexRecordSize+recordSize]...)
	}
	sum := sha256.Sum256(out)
	return append(out, sum[:]...)
}

// FuzzParseIndex: whatever bytes an index file holds (damaged on disk, cut
// short, written by another version), parsing it either fails with
// errBadIndex or gives a file whose every record, lookup and merge stays
// within its bytes and names a pack of its table.
func FuzzParseIndex(f *testing.F) {
	cur := encodeIndex(fuzzEntries())
	f.Add(cur)
	f.Add(firstLayout(cur))
	f.Add(encodeIndex(nil))
	f.Add([]byte("bsindex\x02"))
	f.Fuzz(func(t *testing.T, data []byte) {
		idx, err := parseIndex(packID{}, data, nil)
		if err != nil {
			return
		}
		if idx.stride != indexRecordSize && idx.stride != recordSize {
			t.Fatalf("a record of %d bytes", idx.stride)
		}
		known := map[packID]bool{}
		for _, p := range idx.packs {
			known[p] = true
		}
		for i := range idx.n {
			e, err := idx.record(i)
			if err == nil && !known[e.pack] {
				t.Fatalf("record %d names pack %s, not in the table", i, e.pack)
			}
			if idx.stride == recordSize && e.hasCRC {
				t.Fatalf("record %d of the first layout has a CRC", i)
			}
			for _, c := range idx.lookup(e.d, nil) {
				if c.d != e.d {
					t.Fatalf("lookup of %s gave a copy of %s", e.d, c.d)
				}
			}
		}
		idx.lookup(Digest{}, nil)
		idx.lookup(Digest{0xff, 0xff}, nil)
		merged([]*idxFile{idx, idx}, func(entry) error { return nil })
		idx.verifySum()
	})
}

// TestIndexLayouts: an index in either layout reads back the copies it
// was written from, the current one with their CRCs, the first without.
func TestIndexLayouts(t *testing.T) {
	es := fuzzEntries()
	cur := encodeIndex(es) // sorts es
	for _, layout := range []struct {
		name string
		data []byte
		crc  bool
	}{{"current", cur, true}, {"first", firstLayout(cur), false}} {
		idx, err := parseIndex(packID{}, layout.data, nil)
		if err != nil {
			t.Fatalf("%s layout: %v", layout.name, err)
		}
		if err := idx.verifySum(); err != nil {
			t.Fatalf("%s layout: %v", layout.name, err)
		}
		if idx.n != len(es) {
			t.Fatalf("%s layout: %d records, want %d", layout.name, idx.n, len(es))
		}
		for i, want := range es {
			got, err := idx.record(i)
			if err != nil {
				t.Fatal(err)
			}
			if !layout.crc {
				want.crc, want.hasCRC = 0, false
			}
			if got != want {
				t.Fatalf("%s layout, record %d: %+v, want %+v", layout.name, i, got, want)
			}
		}
	}
}

// FuzzParseTrailer: whatever bytes end a pack file, reading its trailer
// either fails with errBadTrailer or gives copies that lie within the
// pack's blobs, after its header and before the trailer.
func FuzzParseTrailer(f *testing.F) {
	es := fuzzEntries()
	tail := packTrailer(es)
	f.Add(tail, int64(8+600+len(tail)))
	f.Add(packTrailer(nil), int64(8+16))
	f.Add([]byte("bspackix"), int64(8))
	f.Fuzz(func(t *testing.T, tail []byte, size int64) {
		n, err := trailerLen(tail, size)
		if err != nil {
			return
		}
		if n > int64(len(tail)) {
			return // the footer's count reaches before these bytes
		}
		got, err := parseTrailer(packID{7}, tail[int64(len(tail))-n:], size)
		if err != nil {
			return
		}
		end := size - n
		for _, e := range got {
			if int64(e.off) < int64(len(packMagic)) || int64(e.off)+int64(e.length) > end || e.pack != (packID{7}) || e.hasCRC {
				t.Fatalf("copy %+v outside the pack's blobs [%d, %d)", e, len(packMagic), end)
			}
		}
	})
}
