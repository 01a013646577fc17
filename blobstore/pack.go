package blobstore

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"time"
)

// The pack layout (docs/store.md): a run stores its blobs in pack files,
// each named by a random id, and describes them in an index file that maps
// each digest to (pack, offset, length). Both are immutable once written.
//
// A pack file:
//
//	header   "bspack\x00\x01"                        8 bytes
//	blobs    each blob's stored form, back to back    (a zstd frame, or an age file of one)
//	trailer  one record per blob, as in an index       recordSize bytes each
//	footer   u32 record count, u32 CRC-32C of the trailer, "bspackix"
//
// An index file:
//
//	header   "bsindex\x02", u32 pack count P, u32 record count N
//	fanout   256 × u32: how many records have a first digest byte <= i
//	packs    P × 16-byte pack ids
//	records  N × indexRecordSize, sorted by digest, newest first among equals
//	sum      SHA-256 of everything before it
//
// A record: digest (32 bytes), u32 pack (a position in the pack table;
// 0 in a pack's own trailer), u32 offset of the stored form in the pack,
// u32 its length, u32 the data's size (bit 31 set when the stored form is
// age-encrypted), i64 when it was written (Unix nanoseconds). An index
// record goes on with u32 the CRC-32C of the stored form and u32 flags
// (bit 0: the CRC is known; a copy indexed again from an older pack's
// trailer has none). Integers are little-endian.
//
// The first index layout, "bsindex\x01", has records of recordSize bytes,
// without the CRC: it is read as ever, its copies' CRCs unknown.
const (
	packMagic   = "bspack\x00\x01"
	footerMagic = "bspackix"
	indexMagic  = "bsindex\x02"
	// indexMagicV1 is the first index layout, without CRCs.
	indexMagicV1 = "bsindex\x01"

	recordSize      = 56 // a pack trailer's, and the first index layout's
	indexRecordSize = 64 // recordSize, the CRC and the flags
	crcKnown        = 1  // the flag of an index record whose CRC is known
	footerSize      = 16
	indexHeader     = 16
	fanoutSize      = 256 * 4
	packIDSize      = 16
	sumSize         = sha256.Size

	// sealedBit marks an encrypted stored form in a record's size field;
	// a blob's size is at most maxBlobSize (2^30), so bit 31 is free.
	sealedBit = 1 << 31
	// sizeUnknown is the size field of a copy whose data size could not
	// be told (a loose blob packed encrypted, without an identity).
	sizeUnknown = sealedBit - 1

	// packTarget bounds a pack: a writer starts a new one once a pack
	// holds this much. A single larger blob gets a pack of its own.
	// 16 MiB is restic's default too: few enough files for a store of
	// millions of blobs, small enough to rewrite one in a moment.
	packTarget = 16 << 20
)

// castagnoli is the CRC-32C table of pack trailers.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// packID names a pack or an index file: 16 random bytes, written as 32
// lowercase hex digits.
type packID [packIDSize]byte

func newPackID() packID {
	var id packID
	rand.Read(id[:]) // never fails (crypto/rand)
	return id
}

func (id packID) String() string { return hex.EncodeToString(id[:]) }

// parsePackID parses the 32 lowercase hex digits of an id.
func parsePackID(s string) (packID, bool) {
	var id packID
	if len(s) != 2*packIDSize || !isLowerHex(s) {
		return id, false
	}
	_, err := hex.Decode(id[:], []byte(s))
	return id, err == nil
}

// entry is one copy of a blob in a pack.
type entry struct {
	d      Digest
	pack   packID
	off    uint32 // of the stored form in the pack file
	length uint32 // of the stored form
	size   uint32 // of the data
	sealed bool   // the stored form is age-encrypted
	time   int64  // when the copy was written (or re-Put), Unix nanoseconds
	// crc is the CRC-32C of the stored form, when hasCRC: enough to tell
	// that a copy is still the bytes its writer wrote without decoding
	// it (packs.reuse).
	crc    uint32
	hasCRC bool
}

// withCRC is e with the CRC of its stored form.
func (e entry) withCRC(stored []byte) entry {
	e.crc, e.hasCRC = crc32.Checksum(stored, castagnoli), true
	return e
}

func (e entry) modTime() time.Time { return time.Unix(0, e.time) }

// dataSize is the size of e's data, or -1 when the record does not know.
func (e entry) dataSize() int64 {
	if e.size == sizeUnknown {
		return -1
	}
	return int64(e.size)
}

// sizeField is the record field of a data size, -1 for unknown.
func sizeField(n int64) uint32 {
	if n < 0 {
		return sizeUnknown
	}
	return uint32(n)
}

// putRecord encodes e into b (recordSize bytes), with its pack given as a
// position in a pack table.
func putRecord(b []byte, e entry, pack uint32) {
	copy(b[:32], e.d[:])
	binary.LittleEndian.PutUint32(b[32:], pack)
	binary.LittleEndian.PutUint32(b[36:], e.off)
	binary.LittleEndian.PutUint32(b[40:], e.length)
	size := e.size
	if e.sealed {
		size |= sealedBit
	}
	binary.LittleEndian.PutUint32(b[44:], size)
	binary.LittleEndian.PutUint64(b[48:], uint64(e.time))
}

// getRecord decodes a record; pack is its pack table position.
func getRecord(b []byte) (e entry, pack uint32) {
	copy(e.d[:], b[:32])
	pack = binary.LittleEndian.Uint32(b[32:])
	e.off = binary.LittleEndian.Uint32(b[36:])
	e.length = binary.LittleEndian.Uint32(b[40:])
	size := binary.LittleEndian.Uint32(b[44:])
	e.size, e.sealed = size&^sealedBit, size&sealedBit != 0
	e.time = int64(binary.LittleEndian.Uint64(b[48:]))
	return e, pack
}

// putIndexRecord encodes e into b (indexRecordSize bytes) as an index
// holds it: putRecord's fields, then the CRC and the flags.
func putIndexRecord(b []byte, e entry, pack uint32) {
	putRecord(b, e, pack)
	var flags uint32
	if e.hasCRC {
		flags |= crcKnown
	}
	binary.LittleEndian.PutUint32(b[recordSize:], e.crc)
	binary.LittleEndian.PutUint32(b[recordSize+4:], flags)
}

// getIndexRecord decodes an index record of size bytes: recordSize (the
// first layout, no CRC) or indexRecordSize.
func getIndexRecord(b []byte, size int) (e entry, pack uint32) {
	e, pack = getRecord(b)
	if size == indexRecordSize {
		e.crc = binary.LittleEndian.Uint32(b[recordSize:])
		e.hasCRC = binary.LittleEndian.Uint32(b[recordSize+4:])&crcKnown != 0
	}
	return e, pack
}

// compareEntries orders entries as an index holds them: by digest, the
// newest copy first.
func compareEntries(a, b entry) int {
	if c := bytes.Compare(a.d[:], b.d[:]); c != 0 {
		return c
	}
	switch {
	case a.time > b.time:
		return -1
	case a.time < b.time:
		return 1
	}
	return bytes.Compare(a.pack[:], b.pack[:])
}

// packTrailer is the trailer and footer of a pack holding entries.
func packTrailer(entries []entry) []byte {
	b := make([]byte, len(entries)*recordSize+footerSize)
	for i, e := range entries {
		putRecord(b[i*recordSize:], e, 0)
	}
	n := len(entries) * recordSize
	binary.LittleEndian.PutUint32(b[n:], uint32(len(entries)))
	binary.LittleEndian.PutUint32(b[n+4:], crc32.Checksum(b[:n], castagnoli))
	copy(b[n+8:], footerMagic)
	return b
}

// errBadTrailer is a pack whose trailer cannot be read.
var errBadTrailer = errors.New("damaged pack trailer")

// trailerLen is how many bytes at the end of a pack file of size bytes
// its trailer and footer take, read from the footer (the file's last
// footerSize bytes).
func trailerLen(footer []byte, size int64) (int64, error) {
	if len(footer) < footerSize || string(footer[len(footer)-8:]) != footerMagic {
		return 0, errBadTrailer
	}
	f := footer[len(footer)-footerSize:]
	n := int64(binary.LittleEndian.Uint32(f))
	total := n*recordSize + footerSize
	if total+int64(len(packMagic)) > size {
		return 0, errBadTrailer
	}
	return total, nil
}

// parseTrailer decodes a pack's trailer and footer (tail is exactly
// those bytes) into entries of pack id, checking them against the pack's
// size.
func parseTrailer(id packID, tail []byte, size int64) ([]entry, error) {
	n := len(tail) - footerSize
	if n < 0 || n%recordSize != 0 || string(tail[n+8:]) != footerMagic ||
		int(binary.LittleEndian.Uint32(tail[n:])) != n/recordSize ||
		binary.LittleEndian.Uint32(tail[n+4:]) != crc32.Checksum(tail[:n], castagnoli) {
		return nil, errBadTrailer
	}
	end := size - int64(len(tail))
	entries := make([]entry, n/recordSize)
	for i := range entries {
		e, _ := getRecord(tail[i*recordSize:])
		if int64(e.off) < int64(len(packMagic)) || int64(e.off)+int64(e.length) > end {
			return nil, errBadTrailer
		}
		e.pack = id
		entries[i] = e
	}
	return entries, nil
}

// indexFileSize is the size of an index of n records of recSize bytes
// over p packs.
func indexFileSize(p, n, recSize int) int64 {
	return int64(indexHeader+fanoutSize+p*packIDSize) + int64(n)*int64(recSize) + sumSize
}

// indexWriter writes an index file: its header, fanout and pack table
// first (all known from the entries' digests and packs, given up front),
// then records in order, then the sum. It writes to w as it goes, so that
// an index of millions of records (a repack's) needs no memory of its
// size.
type indexWriter struct {
	w     func([]byte) error
	sum   [sumSize]byte
	h     sumHasher
	packs map[packID]uint32
	rec   [indexRecordSize]byte
	left  int
	last  entry
	wrote bool
}

// sumHasher is the SHA-256 of what an indexWriter wrote.
type sumHasher interface {
	Write([]byte) (int, error)
	Sum([]byte) []byte
}

// newIndexWriter starts an index of n records, over packs, whose digests'
// first bytes are counted in fanout (fanout[i] records start with byte i).
func newIndexWriter(w func([]byte) error, packs []packID, n int, counts *[256]uint32) (*indexWriter, error) {
	iw := &indexWriter{w: w, h: sha256.New(), packs: make(map[packID]uint32, len(packs)), left: n}
	head := make([]byte, indexHeader+fanoutSize+len(packs)*packIDSize)
	copy(head, indexMagic)
	binary.LittleEndian.PutUint32(head[8:], uint32(len(packs)))
	binary.LittleEndian.PutUint32(head[12:], uint32(n))
	var cum uint32
	for i, c := range counts {
		cum += c
		binary.LittleEndian.PutUint32(head[indexHeader+4*i:], cum)
	}
	if int(cum) != n {
		return nil, fmt.Errorf("index: fanout counts %d records, want %d", cum, n)
	}
	for i, id := range packs {
		iw.packs[id] = uint32(i)
		copy(head[indexHeader+fanoutSize+i*packIDSize:], id[:])
	}
	return iw, iw.write(head)
}

func (iw *indexWriter) write(b []byte) error {
	iw.h.Write(b)
	return iw.w(b)
}

// add writes the next record; records come sorted (compareEntries).
func (iw *indexWriter) add(e entry) error {
	p, ok := iw.packs[e.pack]
	if !ok {
		return fmt.Errorf("index: pack %s not in the pack table", e.pack)
	}
	if iw.left == 0 {
		return errors.New("index: more records than announced")
	}
	if iw.wrote && compareEntries(iw.last, e) > 0 {
		return errors.New("index: records out of order")
	}
	iw.last, iw.wrote = e, true
	iw.left--
	putIndexRecord(iw.rec[:], e, p)
	return iw.write(iw.rec[:])
}

// finish writes the sum, after the announced number of records.
func (iw *indexWriter) finish() error {
	if iw.left != 0 {
		return fmt.Errorf("index: %d records announced but not written", iw.left)
	}
	return iw.w(iw.h.Sum(iw.sum[:0]))
}

// encodeIndex is the index file of entries (sorted here).
func encodeIndex(entries []entry) []byte {
	slices.SortFunc(entries, compareEntries)
	var counts [256]uint32
	var packs []packID
	seen := map[packID]bool{}
	for _, e := range entries {
		counts[e.d[0]]++
		if !seen[e.pack] {
			seen[e.pack] = true
			packs = append(packs, e.pack)
		}
	}
	out := make([]byte, 0, indexFileSize(len(packs), len(entries), indexRecordSize))
	iw, err := newIndexWriter(func(b []byte) error { out = append(out, b...); return nil }, packs, len(entries), &counts)
	if err != nil {
		panic("blobstore: unreachable: " + err.Error())
	}
	for _, e := range entries {
		if err := iw.add(e); err != nil {
			panic("blobstore: unreachable: " + err.Error())
		}
	}
	iw.finish()
	return out
}
