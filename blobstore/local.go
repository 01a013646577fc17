package blobstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/zstd"
)

const (
	// dirMode and fileMode keep the store private to its owner: blobs hold
	// tool output, which is full of secrets.
	dirMode  = 0o700
	fileMode = 0o600

	// pendingMode marks a blob file whose directory entry may not be durable
	// yet. A writer creates its temp file with this mode and switches the
	// renamed blob to fileMode only after it has fsynced the shard
	// directory, so any Put that finds a fileMode blob can trust it without
	// an fsync of its own. See Local.Put.
	pendingMode = 0o400

	// tempPrefix starts the name of every temp file. The dot keeps such
	// names from ever looking like a blob, whose names are pure hex.
	tempPrefix = ".tmp-"

	// staleTempAge is how old a temp file must be before it is treated as
	// left over from a crashed writer. A live writer renames its temp file
	// moments after its last write, so an hour is very conservative.
	staleTempAge = time.Hour

	// maxBlobSize is the largest blob Local accepts. The decoder refuses to
	// produce more than this, which bounds the memory a damaged or hostile
	// blob file can make Get allocate, so Put refuses larger blobs rather
	// than store something it could not read back.
	maxBlobSize = 1 << 30

	// maxCompressedSize bounds the blob files Get will read: zstd never
	// expands data by more than a small fraction, so anything bigger is
	// damaged and reading it would only waste memory.
	maxCompressedSize = maxBlobSize + maxBlobSize/64

	// Lengths of a digest's hex form as split into shard directory and
	// file name.
	shardLen = 2
	nameLen  = 2*len(Digest{}) - shardLen
)

// encoderLevel trades compression ratio for speed, and Put throughput is
// what bs extract needs. On values from real transcripts SpeedFastest
// encodes about 1.5 times as fast as SpeedDefault for a ratio about 5% worse
// (2.9 against 3.1), and both decode at about the same speed (see
// BenchmarkZstdLevel in local_test.go).
const encoderLevel = zstd.SpeedFastest

// Local is a [Store] kept in a directory on the local file system.
//
// A batch of blobs (PutPending, Commit) goes into pack files,
// <dir>/packs/<id>.pack, described by an index file, <dir>/index/<id>.idx
// (see docs/store.md and the package documentation). A blob put alone
// (Put), or in a batch of at most a few (looseMax), is a loose file,
// <dir>/blobs/sha256/<first 2 hex digits>/<other 62 hex digits>, as in
// the store's first layout, which stays readable: one zstd-compressed
// file per blob, with the zstd frame checksum. Directories the store
// creates get mode 0700 and files mode 0600, whatever the umask; a loose
// blob file whose directory entry is not yet known to be durable has mode
// 0400 instead (see Put). Temp files, whose names start with ".tmp-",
// live next to the blobs and in packs/. Several processes may use the
// same directory at once, writers included: each writes packs of its
// own, and none takes a lock.
//
// Blobs larger than 1 GiB are refused by Put.
//
// Use [OpenLocal] to get a Local; the zero value is not usable. A Local
// holds no resources that need releasing.
type Local struct {
	root string // <dir>/blobs/sha256

	// The encoders and the decoder serve all goroutines (encoders;
	// DecodeAll is safe for concurrent use, and its state is costly to
	// build).
	enc *encoders
	dec *zstd.Decoder

	// crypt encrypts what Put writes and decrypts what Get reads; nil
	// stores plain zstd (see Open and crypt.go). Set with setCrypter.
	crypt *crypter

	// packs holds the packed blobs, in lp.
	packs *packs
	lp    *localPacks
	// looseSeen is whether the store holds loose blobs, once looked at
	// (mayHaveLoose).
	looseSeen atomic.Int32

	// shardReady[i] records that this process has run ensureShard for
	// shard directory %02x(i), so Put need not repeat that work.
	shardReady [256]atomic.Bool
	// shardMade[i] records that PutPending has created shard %02x(i);
	// it becomes durable with the next Commit (batch_local.go).
	shardMade [256]atomic.Bool

	mu sync.Mutex
	// Shard directories DeleteUnsynced removed blobs from, to be synced
	// by SyncDeletes (delete_local.go).
	deleted map[string]struct{}
}

var _ Store = (*Local)(nil)

// OpenLocal opens the store in dir, creating dir and the store layout inside
// it if they do not exist.
//
// Temp files left behind by crashed writers are invisible to all methods;
// they are removed, once an hour old, by the first Put into their shard
// directory in each process. (Sweeping the whole store here instead
// would read every directory entry of the store on every open: about 130 ms
// per 200,000 blobs, paid by each bs command, even read-only ones.)
func OpenLocal(dir string) (*Local, error) {
	if dir == "" {
		return nil, errors.New("open blob store: empty directory name")
	}
	root := filepath.Join(dir, "blobs", "sha256")
	if err := mkdirAllPrivate(root); err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	enc, dec, err := newCodec()
	if err != nil {
		return nil, fmt.Errorf("open blob store: %w", err)
	}
	l := &Local{root: root, enc: enc, dec: dec, lp: newLocalPacks(dir)}
	l.packs = newPacks(l.lp, dec, DefaultRefreshAfter)
	l.packs.looseMax, l.packs.writeLoose = looseMax, l.writeLoose
	return l, nil
}

// looseMax is the most blobs a commit writes loose rather than as a pack
// (docs/store.md says why).
const looseMax = 4

// setCrypter makes the store encrypt to, and decrypt with, c's keys.
func (l *Local) setCrypter(c *crypter) {
	l.crypt = c
	l.packs.crypt = c
}

// encoderWindow is the zstd window blobs are compressed with.
const encoderWindow = 1 << 20

// newCodec returns the zstd encoders and decoder every store uses.
func newCodec() (*encoders, *zstd.Decoder, error) {
	// The first encoder is built here, so that an option zstd refuses
	// is an error of opening the store rather than a panic of the pool's
	// New.
	first, err := newEncoder()
	if err != nil {
		return nil, nil, err
	}
	enc := newEncoders()
	enc.pool.Put(first)
	dec, err := zstd.NewReader(nil,
		zstd.WithDecoderMaxMemory(maxBlobSize),
		// GOMAXPROCS decoders at most: DecodeAll never uses more than one
		// goroutine per call, so more would only hold memory.
		zstd.WithDecoderConcurrency(0),
	)
	if err != nil {
		return nil, nil, err
	}
	return enc, dec, nil
}

// encoderOptions are how every stored form is compressed (newCodec's
// encoders, and writeStored's for a huge blob).
func encoderOptions() []zstd.EOption {
	return []zstd.EOption{
		zstd.WithEncoderLevel(encoderLevel),
		// Each encoder keeps two windows of history; at the default 8 MiB
		// that was 16 MiB an encoder, a third of bs extract's heap. Blobs
		// are values and chunks of at most 1 MiB (a longer single line
		// aside), so a larger window would find almost nothing more.
		zstd.WithWindowSize(encoderWindow),
		// Get's digest check catches any damage, but the frame checksum,
		// which costs next to nothing, makes damage to the file show up
		// as a zstd error, telling it apart from a wrong but intact file.
		zstd.WithEncoderCRC(true),
	}
}

// decodeStored turns a blob's stored form back into its data: decrypted
// if it is encrypted, decompressed, and checked against d, so that wrong
// bytes are never returned.
//
// A huge blob's data (a loose one: a packed one is read as a stream,
// packs.getHuge) is decoded by a decoder of its own into memory of its
// exact size, made as a huge line's is (hugemem.Make): the shared decoder
// keeps what it last decoded into reachable, and restore, waiting for one
// 100 MiB result to go before it decodes the next, would hold both.
func decodeStored(dec *zstd.Decoder, crypt *crypter, d Digest, stored []byte) ([]byte, error) {
	compressed, err := crypt.open(d, stored)
	if err != nil {
		return nil, err
	}
	if n, ok := hugeFrame(compressed); ok {
		var data []byte
		err := decodeStream(bytes.NewReader(compressed), func(r io.Reader) (err error) {
			data, err = readExactly(d, r, n)
			return err
		})
		return data, err
	}
	data, err := decompress(dec, d, compressed, nil)
	if err != nil {
		return nil, err
	}
	if Sum(data) != d {
		return nil, corrupt(d, "digest mismatch", nil)
	}
	return data, nil
}

// hugeFrame reports the size of the data of compressed form compressed
// when its frame header says it is huge (hugeSize).
func hugeFrame(compressed []byte) (int, bool) {
	var h zstd.Header
	if h.Decode(compressed) != nil || !h.HasFCS || !hugeSize(int64(h.FrameContentSize)) {
		return 0, false
	}
	return int(h.FrameContentSize), true
}

// decode decrypts and decompresses blob d's stored form, appending the
// data to dst, without checking it: the caller does (decodeStored by its
// digest, readsBackAs against the data it has).
func decode(dec *zstd.Decoder, crypt *crypter, d Digest, stored, dst []byte) ([]byte, error) {
	compressed, err := crypt.open(d, stored)
	if err != nil {
		return nil, err
	}
	return decompress(dec, d, compressed, dst)
}

// decompress appends the data of blob d's compressed form to dst.
func decompress(dec *zstd.Decoder, d Digest, compressed, dst []byte) ([]byte, error) {
	data, err := dec.DecodeAll(compressed, dst)
	if err != nil {
		return nil, corrupt(d, "cannot decode: "+err.Error(), err)
	}
	return data, nil
}

// Put implements [Store.Put]: one blob, written loose.
//
// A packed copy younger than the grace period that reads back as data
// serves (packs.reuse). Otherwise the blob is written to a temp file in its
// shard directory, fsynced, and renamed onto its final name; the shard
// directory is then fsynced so the new name survives a crash, and only
// then is the file's mode changed from 0400 to 0600. Concurrent Puts of
// the same data, in this process or another, all succeed and leave one
// good file.
//
// If the blob's file already exists and reads back as data (see vouch),
// Put keeps it; if its mode is not yet 0600 its writer may not have
// fsynced the directory yet, so Put does. A damaged one is replaced.
func (l *Local) Put(ctx context.Context, data []byte) (Digest, error) {
	if err := ctx.Err(); err != nil {
		return Digest{}, err
	}
	if len(data) > maxBlobSize {
		return Digest{}, fmt.Errorf("put blob: %d bytes exceeds the limit of %d", len(data), maxBlobSize)
	}
	d := Sum(data)
	shard, name := l.paths(d)
	compressed, err := l.newForm(ctx, d, data, nil)
	if err != nil {
		return Digest{}, fmt.Errorf("put blob %s: %w", d, err)
	}
	if compressed == nil {
		return d, nil // stored already
	}
	// Compressing a large blob takes a while; don't start the I/O if the
	// caller has given up meanwhile.
	if err := ctx.Err(); err != nil {
		return Digest{}, err
	}
	l.looseSeen.Store(looseSome)
	if err := l.ensureShard(d[0], shard); err != nil {
		return Digest{}, fmt.Errorf("put blob %s: %w", d, err)
	}
	if err := writeBlob(shard, name, compressed); err != nil {
		return Digest{}, fmt.Errorf("put blob %s: %w", d, err)
	}
	return d, nil
}

// newForm returns what a Put of data (blob d) writes, appended to dst:
// its compressed and, for an encrypting store, sealed form; or nil when a
// copy already stored serves: a packed one younger than the grace period
// that reads back as data (packs.reuse), or a loose file (looseServes).
func (l *Local) newForm(ctx context.Context, d Digest, data, dst []byte) ([]byte, error) {
	if served, err := l.served(ctx, d, data); err != nil || served {
		return nil, err
	}
	return l.crypt.seal(l.enc.compress(data, dst))
}

// served reports whether a copy already stored serves a Put of data (blob
// d): a packed one younger than the grace period that reads back as data
// (packs.reuse), or a loose file (looseServes).
func (l *Local) served(ctx context.Context, d Digest, data []byte) (bool, error) {
	if ok, err := l.packs.reuse(ctx, d, data); err != nil || ok {
		return ok, err
	}
	if l.mayHaveLoose() {
		shard, name := l.paths(d)
		return l.looseServes(ctx, d, data, shard, name)
	}
	return false, nil
}

// mayHaveLoose reports whether the store may hold loose blobs: a store
// made since packs has none until a small commit or a Put writes one, and
// then looking for each value's file would cost a failed stat per value
// (a fifth of bs extract's system time). It looks once per process; a
// loose blob another process writes later is at worst stored again, in a
// pack.
func (l *Local) mayHaveLoose() bool {
	switch l.looseSeen.Load() {
	case looseNone:
		return false
	case looseSome:
		return true
	}
	entries, err := readDir(l.root)
	some := err != nil || len(entries) > 0
	if some {
		l.looseSeen.Store(looseSome)
	} else {
		l.looseSeen.CompareAndSwap(looseUnknown, looseNone)
	}
	return some || l.looseSeen.Load() == looseSome
}

// The states of Local.looseSeen.
const (
	looseUnknown = iota
	looseNone
	looseSome
)

// looseServes reports whether the loose file of blob d (name, in shard)
// serves a Put of data, so that nothing need be written (see
// keepExisting).
func (l *Local) looseServes(ctx context.Context, d Digest, data []byte, shard, name string) (bool, error) {
	fi, err := os.Lstat(name)
	switch {
	case err == nil && fi.Mode().IsRegular():
		return l.keepExisting(ctx, d, data, shard, name, fi)
	case err == nil:
		return false, fmt.Errorf("%s is not a regular file", name)
	case !errors.Is(err, fs.ErrNotExist):
		return false, err
	}
	return false, nil
}

// keepExisting decides what a Put does with the blob file it found in
// place: keep it (vouched for, and made durable and fresh), or write the
// data again (keep false).
func (l *Local) keepExisting(ctx context.Context, d Digest, data []byte, shard, name string, fi fs.FileInfo) (keep bool, err error) {
	if keep, err = l.vouch(ctx, d, data); err != nil || !keep {
		return keep, err
	}
	return true, l.confirmExisting(shard, name, fi)
}

// vouch decides whether the blob file already in place may stand for d,
// so that a placeholder can rely on it: it may when it reads back as data,
// or when it is encrypted and this store holds no identity to check it
// with (a writer that has only recipients cannot do better). A damaged or
// vanished blob is to be written again (keep false). A blob encrypted to
// recipients none of our identities opens is an error: replacing it would
// lock its owners out, and keeping it would leave us a placeholder we
// could not restore.
func (l *Local) vouch(ctx context.Context, d Digest, data []byte) (keep bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	err = l.readsBackAs(d, data)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrNoIdentity):
		if l.crypt.canOpen() {
			return false, fmt.Errorf("already stored, encrypted to recipients none of the identities given can open: %w", err)
		}
		return true, nil
	case errors.Is(err, ErrCorrupt), errors.Is(err, ErrNotFound):
		return false, nil
	}
	return false, err
}

// confirmExisting makes sure that a blob file found in place by Put is
// durable and moves its modification time to now (see [Store.Put]: a sweep
// deletes only blobs older than its start). Its writer may still be between
// the rename and the directory fsync (or may have crashed there), in which
// case its mode is still pendingMode and we do the fsync ourselves. The
// common case, a blob written long ago, costs one utimensat beyond the
// Lstat already done.
func (l *Local) confirmExisting(shard, name string, fi fs.FileInfo) error {
	if err := os.Chtimes(name, time.Time{}, time.Now()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if fi.Mode().Perm() == fileMode {
		return nil
	}
	if err := syncDir(shard); err != nil {
		return err
	}
	// Publish what we just established so later Puts skip the fsync. The
	// blob may have been deleted or replaced meanwhile; either is fine.
	if err := os.Chmod(name, fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// writeBlob atomically and durably creates name in shard with the given
// content. See Put.
func writeBlob(shard, name string, content []byte) (err error) {
	f, err := os.CreateTemp(shard, tempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close() // may already be closed; the error is moot then
			os.Remove(tmp)
		}
	}()
	// Set the mode explicitly rather than trusting creation modes: the
	// umask can only remove bits, and a umask of 0777 would leave 0000.
	if err := f.Chmod(pendingMode); err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	// Rename replaces any file another writer renamed there meanwhile; both
	// hold the same blob, so either may win.
	if err := os.Rename(tmp, name); err != nil {
		return err
	}
	if err := syncDir(shard); err != nil {
		return err
	}
	// Only now may other Puts skip the fsync; see confirmExisting. The file
	// may already have been replaced by a concurrent writer's, which will
	// publish its own once it has synced.
	if err := os.Chmod(name, fileMode); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// ensureShard creates shard directory shard (index i) if needed, makes its
// entry in root durable and removes stale temp files from it, once per
// process and shard.
func (l *Local) ensureShard(i byte, shard string) error {
	if l.shardReady[i].Load() {
		return nil
	}
	if err := mkdirPrivate(shard); err != nil {
		return err
	}
	// Sync root even if another process created the shard: it may have
	// crashed before doing so itself.
	if err := syncDir(l.root); err != nil {
		return err
	}
	removeStaleTemps(shard, time.Now().Add(-staleTempAge))
	l.shardReady[i].Store(true)
	return nil
}

// Get implements [Store.Get]: a packed copy, else the loose file.
func (l *Local) Get(ctx context.Context, d Digest) ([]byte, error) {
	return l.packs.getBlob(ctx, l, d)
}

// getLoose reads blob d's loose file.
func (l *Local) getLoose(ctx context.Context, d Digest) ([]byte, error) {
	buf := getBuf()
	defer putBuf(buf)
	stored, err := l.load(d, buf)
	if err != nil {
		return nil, err
	}
	return decodeStored(l.dec, l.crypt, d, stored)
}

// SealedAfterPut implements [Sealer]. PutPending relies on a loose copy
// too, so a blob without a packed copy is as its loose file is.
func (l *Local) SealedAfterPut(ctx context.Context, d Digest) (bool, error) {
	if sealed, found, err := l.packs.sealed(ctx, d); err != nil || found {
		return sealed, err
	}
	if sealed, found, err := l.sealedLoose(d); err != nil || found {
		return sealed, err
	}
	return l.crypt.encrypts(), nil
}

// sealedLoose reports whether blob d's loose file is encrypted, from its
// first bytes, and whether there is one.
func (l *Local) sealedLoose(d Digest) (sealed, found bool, err error) {
	if !l.mayHaveLoose() {
		return false, false, nil
	}
	_, name := l.paths(d)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	defer f.Close()
	head := make([]byte, len(ageMagic))
	n, _ := io.ReadFull(f, head)
	return isEncrypted(head[:n]), true, nil
}

// load reads blob d's file as it is stored, into *buf (which it may
// replace with a larger buffer).
func (l *Local) load(d Digest, buf *[]byte) ([]byte, error) {
	_, name := l.paths(d)
	stored, err := readFileMax(name, maxCompressedSize, *buf)
	if err == nil {
		*buf = stored
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, notFound(d, err)
	}
	if errors.Is(err, errNotRegular) {
		return nil, notFound(d, nil) // as Has and List see it
	}
	if errors.Is(err, errTooLarge) {
		return nil, corrupt(d, "file too large", nil)
	}
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", d, err)
	}
	return stored, nil
}

// readsBackAs returns nil when blob d's file decodes to exactly data,
// which the caller knows to hash to d, and otherwise the error Get would
// give. Comparing with data spares hashing the blob again, and decoding
// into pooled buffers spares allocating them: bs extract re-run over a
// session it has seen does this for every value.
func (l *Local) readsBackAs(d Digest, data []byte) error {
	if len(data) > hugeBlob {
		return l.streamsBackAs(d, data)
	}
	buf, plain := getBuf(), getBuf()
	defer putBuf(buf)
	defer putBuf(plain)
	stored, err := l.load(d, buf)
	if err != nil {
		return err
	}
	*plain, err = holds(l.dec, l.crypt, d, stored, data, (*plain)[:0])
	return err
}

// streamsBackAs is readsBackAs of a huge blob (a value read twice in a
// session, its first copy loose): the file is decoded as a stream and
// compared as it goes, so that neither its stored form nor what it
// decodes to is in memory beside data.
func (l *Local) streamsBackAs(d Digest, data []byte) error {
	_, name := l.paths(d)
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return notFound(d, err)
	}
	if err != nil {
		return fmt.Errorf("get blob %s: %w", d, err)
	}
	defer f.Close()
	switch fi, err := f.Stat(); {
	case err != nil:
		return fmt.Errorf("get blob %s: %w", d, err)
	case !fi.Mode().IsRegular():
		return notFound(d, nil) // as load sees it
	case fi.Size() > maxCompressedSize:
		return corrupt(d, "file too large", nil)
	}
	compressed, err := l.crypt.openStream(d, f)
	if err != nil {
		return err
	}
	return decodeStream(compressed, func(r io.Reader) error { return readsAs(d, r, data) })
}

// holds returns nil when stored is a stored form of data, which the
// caller knows to hash to d, and otherwise the error Get would give: a
// re-Put's check, which compares rather than hashing the blob again. The
// data decoded, appended to dst, is returned for reuse as a buffer.
func holds(dec *zstd.Decoder, crypt *crypter, d Digest, stored, data, dst []byte) ([]byte, error) {
	got, err := decode(dec, crypt, d, stored, dst)
	if err != nil {
		return dst, err
	}
	if !bytes.Equal(got, data) {
		return got, corrupt(d, "digest mismatch", nil)
	}
	return got, nil
}

// bufPool holds buffers for the stored and decoded forms of blobs that are
// needed only while a blob is read (see readsBackAs and Get).
var bufPool = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBuf is the largest buffer kept for reuse, so that one huge blob
// does not pin its size in memory.
const maxPooledBuf = 4 << 20

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > maxPooledBuf {
		*b = nil
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// grow returns b resliced to n bytes, or a new slice of n bytes when b is
// too small.
func grow(b []byte, n int) []byte {
	if cap(b) >= n {
		return b[:n]
	}
	return make([]byte, n)
}

// Has implements [Store.Has].
func (l *Local) Has(ctx context.Context, d Digest) (bool, error) {
	return l.packs.has(ctx, l, d)
}

func (l *Local) hasLoose(ctx context.Context, d Digest) (bool, error) {
	_, name := l.paths(d)
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("stat blob %s: %w", d, err)
	}
	// List reports only regular files; stay consistent with it.
	return fi.Mode().IsRegular(), nil
}

// Stat implements [Store.Stat]: the newest copy's, packed or loose.
func (l *Local) Stat(ctx context.Context, d Digest) (Info, error) {
	return l.packs.stat(ctx, l, d)
}

func (l *Local) statLoose(ctx context.Context, d Digest) (Info, error) {
	_, name := l.paths(d)
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return Info{}, notFound(d, err)
	}
	if err != nil {
		return Info{}, fmt.Errorf("stat blob %s: %w", d, err)
	}
	if !fi.Mode().IsRegular() {
		return Info{}, notFound(d, nil)
	}
	return Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// List implements [Store.List]: the blobs the indexes name in packs that
// are there, then the loose ones not among them.
func (l *Local) List(ctx context.Context, fn func(Digest) error) error {
	return l.packs.list(ctx, l, fn)
}

// listLoose reports the loose blobs: regular files whose shard and file
// names are lowercase hex of the right lengths, ignoring everything else,
// notably temp files.
func (l *Local) listLoose(ctx context.Context, fn func(Digest) error) error {
	shards, err := readDir(l.root)
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	for _, shard := range shards {
		if !shard.IsDir() || !isShardName(shard.Name()) {
			continue
		}
		// Each shard is read in full before fn runs, so fn may delete
		// blobs without disturbing the walk.
		entries, err := readDir(filepath.Join(l.root, shard.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed by hand since we read root
		}
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		for _, e := range entries {
			if !e.Type().IsRegular() || !isBlobName(e.Name()) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			d, err := parseHex(shard.Name() + e.Name())
			if err != nil {
				panic("blobstore: unreachable: " + err.Error())
			}
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete implements [Store.Delete]: the loose file goes, and every pack
// holding the blob is rewritten without it. When it returns nil the
// removal is durable.
func (l *Local) Delete(ctx context.Context, d Digest) error {
	return l.packs.delete(ctx, d, l.deleteLoose)
}

func (l *Local) deleteLoose(ctx context.Context, d Digest) error {
	shard, err := l.remove(ctx, d)
	if err != nil {
		return err
	}
	if err := syncDir(shard); err != nil {
		return fmt.Errorf("delete blob %s: %w", d, err)
	}
	return nil
}

// remove removes blob d's file, not yet durably, and returns its shard
// directory, whose sync makes the removal durable.
func (l *Local) remove(ctx context.Context, d Digest) (shard string, err error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	shard, name := l.paths(d)
	// Check the type first so Delete never removes something that List and
	// Has would not report as a blob.
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", notFound(d, err)
	}
	if err != nil {
		return "", fmt.Errorf("delete blob %s: %w", d, err)
	}
	if !fi.Mode().IsRegular() {
		return "", notFound(d, nil)
	}
	err = os.Remove(name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", notFound(d, err) // a concurrent Delete won
	}
	if err != nil {
		return "", fmt.Errorf("delete blob %s: %w", d, err)
	}
	return shard, nil
}

// paths returns the shard directory and file name of blob d.
func (l *Local) paths(d Digest) (shard, name string) {
	h := d.Hex()
	shard = filepath.Join(l.root, h[:shardLen])
	return shard, filepath.Join(shard, h[shardLen:])
}

// removeStaleTemps removes temp files in shard last modified before cutoff.
// It is best effort: a failure only leaves invisible garbage behind, which
// must not make Put fail.
func removeStaleTemps(shard string, cutoff time.Time) {
	entries, err := readDir(shard)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), tempPrefix) {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) {
			os.Remove(filepath.Join(shard, e.Name()))
		}
	}
}

func isShardName(s string) bool { return len(s) == shardLen && isLowerHex(s) }
func isBlobName(s string) bool  { return len(s) == nameLen && isLowerHex(s) }

var (
	errTooLarge   = errors.New("file too large")
	errNotRegular = errors.New("not a regular file")
	errShortRead  = errors.New("file shorter than its size")
)

// readDir returns the entries of dir in directory order; unlike
// os.ReadDir it does not sort them, which List has no use for.
func readDir(dir string) ([]fs.DirEntry, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// syncDir fsyncs directory dir, making the creation, renaming and removal of
// entries in it durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirPrivate creates directory dir with mode 0700 unless it already
// exists, and makes its entry durable.
func mkdirPrivate(dir string) error {
	err := os.Mkdir(dir, dirMode)
	if errors.Is(err, fs.ErrExist) {
		// Maybe created by a concurrent Put or another process: check that
		// it is a directory, but leave its mode alone since we didn't make it.
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	}
	if err != nil {
		return err
	}
	// The umask may have removed bits from dirMode; set it exactly.
	if err := os.Chmod(dir, dirMode); err != nil {
		return err
	}
	return syncDir(filepath.Dir(dir))
}

// mkdirAllPrivate is like mkdirPrivate but also creates missing parents,
// each with mode 0700.
func mkdirAllPrivate(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAllPrivate(parent); err != nil {
			return err
		}
	}
	return mkdirPrivate(dir)
}
