package blobstore_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/blobstore/storetest"
	"github.com/klauspost/compress/zstd"
)

// Environment variables that turn the test binary into the helper process
// used by storetest's OtherProcess subtest.
const (
	helperStoreEnv = "BLOBSTORE_TEST_HELPER_STORE" // store directory
	helperDataEnv  = "BLOBSTORE_TEST_HELPER_DATA"  // directory of blobs to Put, named 0, 1, …
	helperRcptEnv  = "BLOBSTORE_TEST_HELPER_RCPT"  // age recipient to encrypt to, if any
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(helperStoreEnv); dir != "" {
		if err := helperPut(dir, os.Getenv(helperDataEnv)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Stores reached by URL cache their indexes under the user's cache
	// directory unless told otherwise: keep the tests' out of it.
	cache, err := os.MkdirTemp("", "bs-test-cache-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", cache)
	code := m.Run()
	os.RemoveAll(cache)
	if keysDir != "" {
		os.RemoveAll(keysDir)
	}
	os.Exit(code)
}

// helperPut is the other process of putFromOtherProcess: it opens the store
// (a directory or a URL),
// says "ready" on stdout, waits for a byte on stdin, and then Puts the blobs
// in dataDir in order.
func helperPut(storeDir, dataDir string) error {
	var opt blobstore.OpenOptions
	if r := os.Getenv(helperRcptEnv); r != "" {
		opt.Recipients = []string{r}
	}
	s, err := blobstore.Open(context.Background(), storeDir, opt)
	if err != nil {
		return err
	}
	var blobs [][]byte
	for i := 0; ; i++ {
		data, err := os.ReadFile(filepath.Join(dataDir, strconv.Itoa(i)))
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return err
		}
		blobs = append(blobs, data)
	}
	fmt.Println("ready")
	if _, err := os.Stdin.Read(make([]byte, 1)); err != nil {
		return fmt.Errorf("waiting for the go signal: %w", err)
	}
	for i, data := range blobs {
		d, err := s.Put(context.Background(), data)
		if err != nil {
			return fmt.Errorf("blob %d: %w", i, err)
		}
		if d != blobstore.Sum(data) {
			return fmt.Errorf("blob %d: Put returned digest %s, want %s", i, d, blobstore.Sum(data))
		}
	}
	return nil
}

// localHarness implements storetest.Harness for Local, remembering the
// directory of each store it creates.
type localHarness struct {
	dirs map[blobstore.Store]string
}

func TestLocal(t *testing.T) {
	lh := &localHarness{dirs: make(map[blobstore.Store]string)}
	h := storetest.Harness{
		New:                 lh.new,
		Corrupt:             lh.corrupt,
		LeaveCrashedPut:     lh.leaveCrashedPut,
		PutFromOtherProcess: lh.putFromOtherProcess,
		Age:                 lh.age,
		Reopen: func(t *testing.T, s blobstore.Store) blobstore.Store {
			o, err := blobstore.OpenLocal(lh.dirs[s])
			if err != nil {
				t.Fatal(err)
			}
			lh.dirs[o] = lh.dirs[s]
			return o
		},
	}
	packHooks(&h)
	storetest.Run(t, h)
}

// packHooks fills in the pack hooks of a harness that work through the
// store itself (export_packs_test.go).
func packHooks(h *storetest.Harness) {
	ctx := context.Background()
	h.AgePacked = func(t *testing.T, s blobstore.Store, by time.Duration) {
		if err := blobstore.AgePacked(ctx, s, by); err != nil {
			t.Fatal(err)
		}
	}
	h.FirstIndexLayout = func(t *testing.T, s blobstore.Store) {
		if err := blobstore.FirstIndexLayout(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	h.DamagePacked = func(t *testing.T, s blobstore.Store, d blobstore.Digest) {
		if err := blobstore.DamagePacked(ctx, s, d); err != nil {
			t.Fatal(err)
		}
	}
	h.DropIndexes = func(t *testing.T, s blobstore.Store) {
		if err := blobstore.DropIndexes(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	h.DropPacks = func(t *testing.T, s blobstore.Store) {
		if err := blobstore.DropPacks(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if h.AgePackFiles == nil {
		h.AgePackFiles = func(t *testing.T, s blobstore.Store, by time.Duration) {
			if err := blobstore.AgePackFiles(s, by); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (lh *localHarness) age(t *testing.T, s blobstore.Store, d blobstore.Digest, by time.Duration) {
	path := blobPath(lh.dirs[s], d)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, fi.ModTime().Add(-by)); err != nil {
		t.Fatal(err)
	}
}

func (lh *localHarness) new(t *testing.T) blobstore.Store {
	s, dir := openTemp(t)
	lh.dirs[s] = dir
	return s
}

// corrupt replaces the blob file with a well-formed zstd frame, checksum and
// all, of different bytes: only Get's digest check can catch that.
// TestLocalCorruption covers cruder damage.
func (lh *localHarness) corrupt(t *testing.T, s blobstore.Store, d blobstore.Digest) {
	path := blobPath(lh.dirs[s], d)
	if err := os.WriteFile(path, compress(t, []byte("forged content")), 0o600); err != nil {
		t.Fatal(err)
	}
}

// leaveCrashedPut creates the shard directory and a temp file holding the
// first half of the compressed blob, as a writer killed mid-write would.
func (lh *localHarness) leaveCrashedPut(t *testing.T, s blobstore.Store, data []byte) {
	shard := filepath.Dir(blobPath(lh.dirs[s], blobstore.Sum(data)))
	if err := os.MkdirAll(shard, 0o700); err != nil {
		t.Fatal(err)
	}
	c := compress(t, data)
	if err := os.WriteFile(filepath.Join(shard, ".tmp-123456"), c[:len(c)/2], 0o400); err != nil {
		t.Fatal(err)
	}
}

func (lh *localHarness) putFromOtherProcess(t *testing.T, s blobstore.Store, blobs [][]byte) func() error {
	return startHelper(t, lh.dirs[s], "", blobs)
}

// startHelper starts a helper process (see helperPut) that opens the store
// spec, encrypting to recipient if it is not empty, for
// Harness.PutFromOtherProcess.
func startHelper(t *testing.T, spec, recipient string, blobs [][]byte) func() error {
	dataDir := t.TempDir()
	for i, data := range blobs {
		if err := os.WriteFile(filepath.Join(dataDir, strconv.Itoa(i)), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperStoreEnv+"="+spec, helperDataEnv+"="+dataDir, helperRcptEnv+"="+recipient)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if line != "ready\n" {
		cmd.Wait()
		t.Fatalf("helper process did not get ready: %q, %v; stderr:\n%s", line, err, &stderr)
	}
	return func() error {
		if _, err := stdin.Write([]byte{'g'}); err != nil {
			return err
		}
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("helper process: %v; stderr:\n%s", err, &stderr)
		}
		return nil
	}
}

// TestLocalCorruption checks that every kind of damage to a blob file is
// reported as ErrCorrupt rather than returned as data.
func TestLocalCorruption(t *testing.T) {
	data := bytes.Repeat([]byte(`{"type":"tool_result","content":"ok"}`+"\n"), 200)
	tests := []struct {
		name   string
		damage func(c []byte) []byte
	}{
		{"Empty", func(c []byte) []byte { return nil }},
		{"Truncated", func(c []byte) []byte { return c[:len(c)/2] }},
		{"LastByteMissing", func(c []byte) []byte { return c[:len(c)-1] }},
		{"BitFlip", func(c []byte) []byte { c[len(c)/2] ^= 0x10; return c }},
		{"ChecksumFlip", func(c []byte) []byte { c[len(c)-1] ^= 1; return c }},
		{"TrailingGarbage", func(c []byte) []byte { return append(c, "garbage"...) }},
		{"ExtraFrame", func(c []byte) []byte { return append(c, compress(t, []byte("more"))...) }},
		{"OtherBlob", func(c []byte) []byte { return compress(t, []byte("other")) }},
		{"NotZstd", func(c []byte) []byte { return data }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, dir := openTemp(t)
			d := put(t, s, data)
			path := blobPath(dir, d)
			c, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, tt.damage(c), 0o600); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(context.Background(), d)
			if !errors.Is(err, blobstore.ErrCorrupt) || got != nil {
				t.Fatalf("Get = %d bytes, %v; want nil, ErrCorrupt", len(got), err)
			}
			if want := "blob " + d.String() + " corrupt: "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error %q does not start with %q", err, want)
			}
		})
	}
}

// TestLocalHugeClaimedSize checks that a blob file whose zstd header claims
// an enormous size is rejected without allocating that much memory.
func TestLocalHugeClaimedSize(t *testing.T) {
	s, dir := openTemp(t)
	d := put(t, s, []byte("x"))
	frame := []byte{
		0x28, 0xb5, 0x2f, 0xfd, // magic number
		0xc0,                   // 8-byte content size, not single segment, no checksum
		0x50,                   // 1 MiB window
		0, 0, 0, 0, 4, 0, 0, 0, // content size: 16 GiB
		0x09, 0x00, 0x00, 'x', // last block, raw, 1 byte
	}
	if err := os.WriteFile(blobPath(dir, d), frame, 0o600); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := s.Get(context.Background(), d)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, blobstore.ErrCorrupt) {
		t.Errorf("Get = %v, want ErrCorrupt", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("Get allocated %d MiB for a 1-byte blob file", n>>20)
	}
}

// TestLocalHugeFile checks that Get refuses a blob file too large to hold a
// valid blob without reading it.
func TestLocalHugeFile(t *testing.T) {
	s, dir := openTemp(t)
	d := put(t, s, []byte("x"))
	// Sparse, so this costs no disk space.
	if err := os.Truncate(blobPath(dir, d), 2<<30); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := s.Get(context.Background(), d)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, blobstore.ErrCorrupt) {
		t.Errorf("Get = %v, want ErrCorrupt", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<20 {
		t.Errorf("Get allocated %d MiB for a blob file it should refuse", n>>20)
	}
}

func TestLocalErrorMessages(t *testing.T) {
	s, dir := openTemp(t)
	ctx := context.Background()
	d := put(t, s, []byte("x"))
	if err := os.WriteFile(blobPath(dir, d), compress(t, []byte("y")), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(ctx, d)
	if want := "blob " + d.String() + " corrupt: digest mismatch"; err == nil || err.Error() != want {
		t.Errorf("Get of a blob holding other bytes: error %v, want %q", err, want)
	}
	missing := blobstore.Sum([]byte("missing"))
	want := "blob " + missing.String() + " not found"
	if _, err := s.Get(ctx, missing); err == nil || err.Error() != want {
		t.Errorf("Get of a missing blob: error %v, want %q", err, want)
	}
	if err := s.Delete(ctx, missing); err == nil || err.Error() != want {
		t.Errorf("Delete of a missing blob: error %v, want %q", err, want)
	}
	// Callers can still see the underlying file-system error.
	if _, err := s.Get(ctx, missing); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get of a missing blob: error %v does not match fs.ErrNotExist", err)
	}
}

// TestLocalLayout pins the on-disk format, which other tools and future
// versions of bs read directly.
func TestLocalLayout(t *testing.T) {
	s, dir := openTemp(t)
	data := bytes.Repeat([]byte(`{"role":"user","content":"hello"}`+"\n"), 100)
	d := put(t, s, data)

	h := d.Hex()
	path := filepath.Join(dir, "blobs", "sha256", h[:2], h[2:])
	c, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("blob file not where expected: %v", err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	got, err := dec.DecodeAll(c, nil)
	if err != nil {
		t.Fatalf("blob file is not zstd: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatal("blob file does not decode to the blob")
	}
	var hdr zstd.Header
	if err := hdr.Decode(c); err != nil {
		t.Fatal(err)
	}
	if !hdr.HasCheckSum {
		t.Error("blob file's zstd frame has no checksum")
	}
	if len(c) > len(data)/4 {
		t.Errorf("blob file holds %d bytes for %d of repetitive text; is it compressed?", len(c), len(data))
	}
	entries, err := os.ReadDir(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("shard directory holds %d entries, want just the blob (no temp files left behind)", len(entries))
	}
}

// TestLocalListIgnoresForeignFiles checks that List, Has and Delete only
// treat well-formed names of regular files as blobs.
func TestLocalListIgnoresForeignFiles(t *testing.T) {
	s, dir := openTemp(t)
	d := put(t, s, []byte("real"))
	root := filepath.Join(dir, "blobs", "sha256")
	h := d.Hex()
	fake := blobstore.Sum([]byte("fake")).Hex()

	mkdir := func(p string) {
		if err := os.MkdirAll(filepath.Join(root, p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(filepath.Join(root, p), []byte("junk"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	mkdir("zz")
	write("zz/" + fake[2:]) // shard name not hex
	mkdir(strings.ToUpper(fake[:2]))
	write(strings.ToUpper(fake[:2]) + "/" + fake[2:]) // uppercase shard name
	mkdir("abc")
	write("abc/" + fake[2:])                       // shard name too long
	write("README")                                // file among the shards
	write(h[:2] + "/" + strings.ToUpper(fake[2:])) // uppercase name
	write(h[:2] + "/" + fake[2:len(fake)-1])       // name too short
	write(h[:2] + "/" + fake[2:] + "0")            // name too long
	write(h[:2] + "/.tmp-" + fake[2:])             // temp file
	mkdir(fake[:2] + "/" + fake[2:])               // directory with a blob's name
	link := blobstore.Sum([]byte("link")).Hex()    // symlink with a blob's name
	mkdir(link[:2])
	if err := os.Symlink(blobPath(dir, d), filepath.Join(root, link[:2], link[2:])); err != nil {
		t.Fatal(err)
	}

	var got []blobstore.Digest
	err := s.List(context.Background(), func(d blobstore.Digest) error {
		got = append(got, d)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != d {
		t.Errorf("List = %v, want just %s", got, d)
	}
	fd, _ := blobstore.ParseDigest("sha256:" + fake)
	if ok, err := s.Has(context.Background(), fd); ok || err != nil {
		t.Errorf("Has of a directory with a blob's name = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.Get(context.Background(), fd); !errors.Is(err, blobstore.ErrNotFound) {
		t.Errorf("Get of a directory with a blob's name = %v, want ErrNotFound", err)
	}
	if err := s.Delete(context.Background(), fd); !errors.Is(err, blobstore.ErrNotFound) {
		t.Errorf("Delete of a directory with a blob's name = %v, want ErrNotFound", err)
	}
}

// TestLocalStaleTemps checks that old temp files, and only those, are
// removed by the first Put into their shard after the store is opened.
func TestLocalStaleTemps(t *testing.T) {
	s, dir := openTemp(t)
	d := put(t, s, []byte("blob"))
	shard := filepath.Dir(blobPath(dir, d))
	old := time.Now().Add(-2 * time.Hour)
	recent := time.Now().Add(-50 * time.Minute)
	files := []struct {
		name  string
		mtime time.Time
		keep  bool
	}{
		{".tmp-old", old, false},
		{".tmp-recent", recent, true},
		{".tmp-new", time.Now(), true},
		{"notes", old, true}, // not ours
		{".other", old, true},
	}
	for _, f := range files {
		p := filepath.Join(shard, f.name)
		if err := os.WriteFile(p, []byte("partial"), 0o400); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, f.mtime, f.mtime); err != nil {
			t.Fatal(err)
		}
	}

	s2, err := blobstore.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Find other data that lands in the same shard.
	var data []byte
	for i := 0; ; i++ {
		data = fmt.Appendf(nil, "neighbour %d", i)
		if blobstore.Sum(data)[0] == d[0] {
			break
		}
	}
	put(t, s2, data)
	for _, f := range files {
		_, err := os.Lstat(filepath.Join(shard, f.name))
		if exists := err == nil; exists != f.keep {
			t.Errorf("after a Put into the shard, %s exists = %v, want %v", f.name, exists, f.keep)
		}
	}
	if got := get(t, s2, d); string(got) != "blob" {
		t.Errorf("Get after the sweep = %q, want %q", got, "blob")
	}
}

// TestLocalConfirmsPendingBlob covers a writer that crashed after renaming
// its blob into place but before fsyncing the directory: the blob is
// visible, and a later Put of the same data must make it durable (and mark
// it so) instead of trusting it blindly.
func TestLocalConfirmsPendingBlob(t *testing.T) {
	s, dir := openTemp(t)
	data := []byte("renamed but not synced")
	d := put(t, s, data)
	path := blobPath(dir, d)
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if got := get(t, s, d); !bytes.Equal(got, data) {
		t.Fatalf("Get of a pending blob = %q, want %q", got, data)
	}
	put(t, s, data)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("after a second Put the blob has mode %04o, want 0600", fi.Mode().Perm())
	}
}

// TestLocalSameBlobManyWriters has goroutines race to write one blob and
// checks that the losers' temp files are all cleaned up.
func TestLocalSameBlobManyWriters(t *testing.T) {
	for range 20 {
		s, dir := openTemp(t)
		data := randomText(rand.New(rand.NewPCG(1, 2)), 64<<10)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := s.Put(context.Background(), data); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		d := blobstore.Sum(data)
		entries, err := os.ReadDir(filepath.Dir(blobPath(dir, d)))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != d.Hex()[2:] {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Fatalf("shard holds %q, want just the blob", names)
		}
		if got := get(t, s, d); !bytes.Equal(got, data) {
			t.Fatal("Get returned different bytes")
		}
	}
}

func TestOpenLocalErrors(t *testing.T) {
	if _, err := blobstore.OpenLocal(""); err == nil {
		t.Error("OpenLocal(\"\") succeeded")
	}
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := blobstore.OpenLocal(file); err == nil {
		t.Error("OpenLocal of a regular file succeeded")
	}
}

// BenchmarkPut measures storing new 16 KiB blobs of transcript-like text,
// each durable (fsynced) before Put returns.
func BenchmarkPut(b *testing.B) {
	const size = 16 << 10
	corpus := randomText(rand.New(rand.NewPCG(1, 1)), 4<<20)
	b.Run("Serial", func(b *testing.B) {
		s, _ := openTemp(b)
		b.SetBytes(size)
		for i := 0; b.Loop(); i++ {
			if _, err := s.Put(context.Background(), uniqueBlob(corpus, i, size)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Parallel Puts share fsyncs through the file system's journal commits,
	// which is how a caller reaches a useful throughput.
	b.Run("Parallel", func(b *testing.B) {
		s, _ := openTemp(b)
		b.SetBytes(size)
		b.SetParallelism(8)
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Put(context.Background(), uniqueBlob(corpus, int(n.Add(1)), size)); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	b.Run("Duplicate", func(b *testing.B) {
		s, _ := openTemp(b)
		blobs := make([][]byte, 256)
		for i := range blobs {
			blobs[i] = uniqueBlob(corpus, i, size)
			put(b, s, blobs[i])
		}
		b.SetBytes(size)
		for i := 0; b.Loop(); i++ {
			if _, err := s.Put(context.Background(), blobs[i%len(blobs)]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkGet measures reading back 16 KiB blobs from the page cache,
// including decompression and digest verification.
func BenchmarkGet(b *testing.B) {
	const size = 16 << 10
	corpus := randomText(rand.New(rand.NewPCG(1, 1)), 4<<20)
	s, _ := openTemp(b)
	ds := make([]blobstore.Digest, 256)
	for i := range ds {
		ds[i] = put(b, s, uniqueBlob(corpus, i, size))
	}
	b.Run("Serial", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; b.Loop(); i++ {
			if _, err := s.Get(context.Background(), ds[i%len(ds)]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Parallel", func(b *testing.B) {
		b.SetBytes(size)
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := s.Get(context.Background(), ds[int(n.Add(1))%len(ds)]); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}

// BenchmarkZstdLevel compares the encoder levels considered for Local on
// transcript-like text of typical value sizes, reporting compression speed
// and ratio. It is how encoderLevel in local.go was chosen.
func BenchmarkZstdLevel(b *testing.B) {
	corpus := randomText(rand.New(rand.NewPCG(1, 1)), 4<<20)
	for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault} {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderCRC(true))
		if err != nil {
			b.Fatal(err)
		}
		dec, err := zstd.NewReader(nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, size := range []int{4 << 10, 16 << 10, 50 << 10} {
			blobs := make([][]byte, 64)
			for i := range blobs {
				blobs[i] = uniqueBlob(corpus, i, size)
			}
			name := fmt.Sprintf("%s/%dKiB", level, size>>10)
			b.Run(name+"/Encode", func(b *testing.B) {
				b.SetBytes(int64(size))
				var in, out int
				var dst []byte
				for i := 0; b.Loop(); i++ {
					dst = enc.EncodeAll(blobs[i%len(blobs)], dst[:0])
					in += size
					out += len(dst)
				}
				b.ReportMetric(float64(in)/float64(out), "ratio")
			})
			b.Run(name+"/Decode", func(b *testing.B) {
				compressed := make([][]byte, len(blobs))
				for i, blob := range blobs {
					compressed[i] = enc.EncodeAll(blob, nil)
				}
				b.SetBytes(int64(size))
				var dst []byte
				for i := 0; b.Loop(); i++ {
					if dst, err = dec.DecodeAll(compressed[i%len(compressed)], dst[:0]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		enc.Close()
		dec.Close()
	}
}

// openTemp opens a Local store in a fresh temporary directory.
func openTemp(tb testing.TB) (*blobstore.Local, string) {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "store")
	s, err := blobstore.OpenLocal(dir)
	if err != nil {
		tb.Fatal(err)
	}
	return s, dir
}

// blobPath is where Local keeps blob d, per its documented layout.
func blobPath(dir string, d blobstore.Digest) string {
	h := d.Hex()
	return filepath.Join(dir, "blobs", "sha256", h[:2], h[2:])
}

func put(tb testing.TB, s blobstore.Store, data []byte) blobstore.Digest {
	tb.Helper()
	d, err := s.Put(context.Background(), data)
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

func get(tb testing.TB, s blobstore.Store, d blobstore.Digest) []byte {
	tb.Helper()
	data, err := s.Get(context.Background(), d)
	if err != nil {
		tb.Fatal(err)
	}
	return data
}

// compress zstd-compresses data with default settings, as a foreign writer
// might.
func compress(tb testing.TB, data []byte) []byte {
	tb.Helper()
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer enc.Close()
	return enc.EncodeAll(data, nil)
}

// uniqueBlob returns a size-byte window of corpus that differs from that of
// every other i: it starts at an i-dependent offset and with i itself.
func uniqueBlob(corpus []byte, i, size int) []byte {
	off := (i * 7919) % (len(corpus) - size)
	b := fmt.Appendf(make([]byte, 0, size), `{"seq":%d,`, i)
	return append(b, corpus[off:off+size-len(b)]...)
}

// randomText returns about n bytes of JSON lines resembling an agent
// transcript: tool calls and results with paths, code, logs, ids and
// timestamps. It is neither trivially compressible nor random.
func randomText(r *rand.Rand, n int) []byte {
	words := strings.Fields(`the a to of and in is for on with that this error file func return
		if err nil string int go test build run main package import type struct const var
		user assistant tool result content text path line ok failed warning info debug
		config server client request response status json yaml http https localhost port`)
	dirs := []string{"src", "internal", "cmd", "pkg", "lib", "test", "docs", "api", "util", "vendor"}
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	hexID := func(n int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[r.IntN(16)]
		}
		return string(b)
	}
	var b bytes.Buffer
	t := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for b.Len() < n {
		t = t.Add(time.Duration(r.IntN(5000)) * time.Millisecond)
		fmt.Fprintf(&b, `{"type":"%s","id":"toolu_%s","timestamp":"%s","content":"`,
			pick([]string{"tool_use", "tool_result", "assistant", "user"}), hexID(24), t.Format(time.RFC3339Nano))
		for range 3 + r.IntN(20) {
			switch r.IntN(4) {
			case 0: // file listing
				fmt.Fprintf(&b, `-rw-r--r-- 1 user staff %d %s %s/%s/%s.go\n`,
					r.IntN(100000), t.Format("Jan _2 15:04"), pick(dirs), pick(dirs), pick(words))
			case 1: // code
				fmt.Fprintf(&b, `\tif %s, err := %s.%s(%s); err != nil {\n\t\treturn %s\n\t}\n`,
					pick(words), pick(words), pick(words), pick(words), pick(words))
			case 2: // log line
				fmt.Fprintf(&b, `%s [%s] %s %s %s=%d %s\n`, t.Format(time.RFC3339),
					pick([]string{"INFO", "WARN", "DEBUG", "ERROR"}), pick(words), pick(words), pick(words), r.IntN(1000), hexID(8))
			default: // prose
				for range 5 + r.IntN(15) {
					b.WriteString(pick(words))
					b.WriteByte(' ')
				}
				b.WriteString(`\n`)
			}
		}
		b.WriteString("\"}\n")
	}
	return b.Bytes()[:n]
}

// TestLocalSealed: SealedAfterPut tells a blob stored encrypted, which
// stays so when a run that does not encrypt puts the same bytes, from one
// stored plain and from one not stored, which a store that encrypts
// would store encrypted.
func TestLocalSealed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	k := testKeys(t)
	sealing, err := blobstore.Open(ctx, dir, blobstore.OpenOptions{Recipients: []string{k.recipient}})
	if err != nil {
		t.Fatal(err)
	}
	secret, err := sealing.Put(ctx, []byte("sealed away"))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := blobstore.OpenLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	open, err := plain.Put(ctx, []byte("in the clear"))
	if err != nil {
		t.Fatal(err)
	}
	if again, err := plain.Put(ctx, []byte("sealed away")); err != nil || again != secret {
		t.Fatalf("put again: %v, %v", again, err)
	}
	never := blobstore.Sum([]byte("never stored"))
	wantSealedAfterPut(t, plain, map[blobstore.Digest]bool{secret: true, open: false, never: false})
	wantSealedAfterPut(t, sealing.(blobstore.Sealer), map[blobstore.Digest]bool{never: true})
}

// wantSealedAfterPut checks s's SealedAfterPut of each digest of want.
func wantSealedAfterPut(t *testing.T, s blobstore.Sealer, want map[blobstore.Digest]bool) {
	t.Helper()
	for d, w := range want {
		if got, err := s.SealedAfterPut(context.Background(), d); err != nil || got != w {
			t.Errorf("SealedAfterPut(%s) = %v, %v; want %v", d, got, err, w)
		}
	}
}
