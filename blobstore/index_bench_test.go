package blobstore

import (
	"encoding/binary"
	"testing"
)

// BenchmarkLookup looks digests up in a snapshot of 16 index files of
// 1,700 records each, as a store extract wrote 27,000 values into holds:
// half of the digests are there, half are not.
func BenchmarkLookup(b *testing.B) {
	files, known := lookupFiles(b)
	s := &snapshot{files: files}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		d := known[i%len(known)]
		if i%2 == 1 {
			d[31] ^= 1
		}
		if got := s.lookup(d); len(got) != 1-i%2 {
			b.Fatalf("%d copies", len(got))
		}
	}
}

// lookupFiles are 16 index files of 1,700 records each, and their digests.
func lookupFiles(b testing.TB) ([]*idxFile, []Digest) {
	var files []*idxFile
	var known []Digest
	for f := range 16 {
		var es []entry
		for i := range 1700 {
			var seed [8]byte
			binary.LittleEndian.PutUint64(seed[:], uint64(f*1700+i))
			e := entry{d: Sum(seed[:]), pack: packID{byte(f)}, off: uint32(i), length: 10, size: 10}
			es = append(es, e)
			known = append(known, e.d)
		}
		idx, err := parseIndex(packID{byte(f)}, encodeIndex(es), nil)
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, idx)
	}
	return files, known
}
