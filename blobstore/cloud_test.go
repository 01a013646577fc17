package blobstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"filippo.io/age"
	"gocloud.dev/blob/fileblob"
	"gocloud.dev/blob/memblob"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/blobstore/storetest"
)

// keys are an age identity file and its recipient.
type keys struct {
	recipient, identityFile string
}

var (
	keysOnce sync.Once
	theKeys  keys
	keysDir  string
)

// testKeys returns a key pair shared by the tests of this run.
func testKeys(t *testing.T) keys {
	keysOnce.Do(func() {
		// The keys outlive any one test: TestMain removes their directory.
		dir, err := os.MkdirTemp("", "bs-test-keys-")
		if err != nil {
			t.Fatal(err)
		}
		keysDir = dir
		theKeys = newKeys(t, dir)
	})
	return theKeys
}

func newKeys(t *testing.T, dir string) keys {
	t.Helper()
	id, err := age.GenerateX25519Identity()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.CreateTemp(dir, "bs-test-identity-*")
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "# test key\n%s\n", id)
	f.Close()
	return keys{recipient: id.Recipient().String(), identityFile: f.Name()}
}

// options opens a store with the keys; tests may open mem://.
func (k keys) options() blobstore.OpenOptions {
	if k.recipient == "" {
		return blobstore.WithMem(blobstore.OpenOptions{})
	}
	return blobstore.WithMem(blobstore.OpenOptions{Recipients: []string{k.recipient}, IdentityFiles: []string{k.identityFile}})
}

// cloudHarness runs storetest on Cloud stores opened by spec.
type cloudHarness struct {
	keys  keys
	spec  func(t *testing.T) string // a fresh, empty store's URL
	specs map[blobstore.Store]string
	dirs  map[blobstore.Store]string // fileblob directories
}

func (ch *cloudHarness) new(t *testing.T) blobstore.Store {
	spec := ch.spec(t)
	s, err := blobstore.Open(context.Background(), spec, ch.keys.options())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.(interface{ Close() error }).Close() })
	ch.specs[s] = spec
	if dir, ok := strings.CutPrefix(spec, "file://"); ok {
		ch.dirs[s] = dir
	}
	return s
}

// corrupt stores forged content, sealed as the store seals, in blob d's
// object: only Get's digest check can catch that.
func (ch *cloudHarness) corrupt(t *testing.T, s blobstore.Store, d blobstore.Digest) {
	ctx := context.Background()
	forged, err := s.Put(ctx, []byte("forged content"))
	if err != nil {
		t.Fatal(err)
	}
	b := blobstore.BucketOf(s)
	raw, err := b.ReadAll(ctx, blobstore.Key(forged))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteAll(ctx, blobstore.Key(d), raw, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, forged); err != nil {
		t.Fatal(err)
	}
}

func (ch *cloudHarness) putFromOtherProcess(t *testing.T, s blobstore.Store, blobs [][]byte) func() error {
	return startHelper(t, ch.specs[s], ch.keys.recipient, blobs)
}

// age sets a fileblob object's file time back.
func (ch *cloudHarness) age(t *testing.T, s blobstore.Store, d blobstore.Digest, by time.Duration) {
	path := filepath.Join(ch.dirs[s], filepath.FromSlash(blobstore.Key(d)))
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, time.Time{}, fi.ModTime().Add(-by)); err != nil {
		t.Fatal(err)
	}
}

// leaveCrashedPut leaves half a fileblob temp file next to the object.
func (ch *cloudHarness) leaveCrashedPut(t *testing.T, s blobstore.Store, data []byte) {
	path := filepath.Join(ch.dirs[s], filepath.FromSlash(blobstore.Key(blobstore.Sum(data))))
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	c := compress(t, data)
	if err := os.WriteFile(path+".18f2a1b3c4d5e6f7.tmp", c[:len(c)/2], 0o600); err != nil {
		t.Fatal(err)
	}
}

func (ch *cloudHarness) harness(file, otherProcess bool) storetest.Harness {
	ch.specs = map[blobstore.Store]string{}
	ch.dirs = map[blobstore.Store]string{}
	h := storetest.Harness{New: ch.new, Corrupt: ch.corrupt}
	if otherProcess {
		h.PutFromOtherProcess = ch.putFromOtherProcess
		h.Reopen = ch.reopen
	}
	h.AgePackFiles = func(t *testing.T, s blobstore.Store, by time.Duration) {
		t.Skip("an object store's times cannot be moved")
	}
	if file {
		h.Age = ch.age
		h.LeaveCrashedPut = ch.leaveCrashedPut
		h.AgePackFiles = ch.agePackFiles
	}
	packHooks(&h)
	return h
}

// reopen opens the store s was opened from again, with an index cache of
// its own, as another host would.
func (ch *cloudHarness) reopen(t *testing.T, s blobstore.Store) blobstore.Store {
	opt := ch.keys.options()
	opt.IndexCache = t.TempDir()
	o, err := blobstore.Open(context.Background(), ch.specs[s], opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { o.(interface{ Close() error }).Close() })
	ch.specs[o] = ch.specs[s]
	ch.dirs[o] = ch.dirs[s]
	return o
}

// agePackFiles sets the fileblob pack files' times back.
func (ch *cloudHarness) agePackFiles(t *testing.T, s blobstore.Store, by time.Duration) {
	packs, _ := filepath.Glob(filepath.Join(ch.dirs[s], "packs", "*.pack"))
	for _, p := range packs {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, time.Time{}, fi.ModTime().Add(-by)); err != nil {
			t.Fatal(err)
		}
	}
}

func memSpec(*testing.T) string { return "mem://" }

func fileSpec(t *testing.T) string { return "file://" + t.TempDir() }

// s3Spec is the URL of a fresh prefix in the test bucket.
func s3Spec(t *testing.T) string {
	srv, ok, err := storetest.S3FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("BS_TEST_S3_ENDPOINT not set")
	}
	spec := srv.URL("bstest")
	t.Cleanup(func() { emptyStore(t, spec) })
	return spec
}

// emptyStore deletes what a test left under an S3 prefix.
func emptyStore(t *testing.T, spec string) {
	ctx := context.Background()
	s, err := blobstore.Open(ctx, spec, blobstore.OpenOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	b := blobstore.BucketOf(s)
	it := b.List(nil)
	for {
		o, err := it.Next(ctx)
		if err != nil {
			break
		}
		b.Delete(ctx, o.Key)
	}
	b.Close()
}

func TestCloud(t *testing.T) {
	backends := []struct {
		name         string
		spec         func(*testing.T) string
		file, remote bool
	}{
		{"Mem", memSpec, false, false},
		{"File", fileSpec, true, true},
		{"S3", s3Spec, false, true},
	}
	for _, be := range backends {
		for _, enc := range []bool{false, true} {
			name := be.name
			if enc {
				name += "Encrypted"
			}
			t.Run(name, func(t *testing.T) {
				be.spec(t) // skip S3 early when it is not configured
				ch := &cloudHarness{spec: be.spec}
				if enc {
					ch.keys = testKeys(t)
				}
				storetest.Run(t, ch.harness(be.file, be.remote))
			})
		}
	}
}

// TestLocalEncrypted runs the suite on the local store with encryption.
func TestLocalEncrypted(t *testing.T) {
	k := testKeys(t)
	lh := &localHarness{dirs: make(map[blobstore.Store]string)}
	dirs := map[blobstore.Store]string{}
	newStore := func(t *testing.T) blobstore.Store {
		dir := t.TempDir()
		s, err := blobstore.Open(context.Background(), dir, k.options())
		if err != nil {
			t.Fatal(err)
		}
		lh.dirs[s] = dir
		dirs[s] = dir
		return s
	}
	h := storetest.Harness{
		New: newStore,
		Reopen: func(t *testing.T, s blobstore.Store) blobstore.Store {
			o, err := blobstore.Open(context.Background(), dirs[s], k.options())
			if err != nil {
				t.Fatal(err)
			}
			dirs[o] = dirs[s]
			return o
		},
		Corrupt: func(t *testing.T, s blobstore.Store, d blobstore.Digest) {
			forged := put(t, s, []byte("forged content"))
			raw, err := os.ReadFile(blobPath(dirs[s], forged))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(blobPath(dirs[s], d), raw, 0o600); err != nil {
				t.Fatal(err)
			}
		},
		PutFromOtherProcess: func(t *testing.T, s blobstore.Store, blobs [][]byte) func() error {
			return startHelper(t, dirs[s], k.recipient, blobs)
		},
		Age: lh.age,
	}
	packHooks(&h)
	storetest.Run(t, h)
}

// TestEncryptedAtRest checks that what lands in the bucket or the
// directory is age-encrypted and holds no plaintext, and that its name is
// still the digest of the plaintext.
func TestEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	k := testKeys(t)
	secret := bytes.Repeat([]byte("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG\n"), 50)
	d := blobstore.Sum(secret)

	c, err := blobstore.Open(ctx, "mem://", k.options())
	if err != nil {
		t.Fatal(err)
	}
	put(t, c, secret)
	raw, err := blobstore.BucketOf(c).ReadAll(ctx, blobstore.Key(d))
	if err != nil {
		t.Fatal(err)
	}
	checkSealed(t, raw, secret)

	dir := t.TempDir()
	l, err := blobstore.Open(ctx, dir, k.options())
	if err != nil {
		t.Fatal(err)
	}
	put(t, l, secret)
	raw, err = os.ReadFile(blobPath(dir, d))
	if err != nil {
		t.Fatal(err)
	}
	checkSealed(t, raw, secret)
	if got := get(t, l, d); !bytes.Equal(got, secret) {
		t.Fatal("Get of an encrypted local blob returned other bytes")
	}
}

func checkSealed(t *testing.T, raw, secret []byte) {
	t.Helper()
	if !bytes.HasPrefix(raw, []byte("age-encryption.org/v1\n")) {
		t.Fatalf("stored form starts %q, want an age header", raw[:min(len(raw), 24)])
	}
	if bytes.Contains(raw, []byte("wJalrXUtnFEMI")) {
		t.Fatal("stored form contains the plaintext")
	}
}

// TestNoIdentity checks that a blob encrypted to a key the reader lacks is
// a clear ErrNoIdentity, never bytes and never "corrupt".
func TestNoIdentity(t *testing.T) {
	ctx := context.Background()
	k := testKeys(t)
	other := newKeys(t, t.TempDir())
	data := []byte("tool output with a password: hunter2")
	d := blobstore.Sum(data)

	b := memblob.OpenBucket(nil)
	writer, err := blobstore.NewCloud(b, blobstore.CloudOptions{Recipients: []string{k.recipient}})
	if err != nil {
		t.Fatal(err)
	}
	put(t, writer, data)

	cases := []struct {
		name string
		opt  blobstore.CloudOptions
		want string
	}{
		{"WriterWithoutIdentity", blobstore.CloudOptions{Recipients: []string{k.recipient}}, "no identity was given"},
		{"NoKeys", blobstore.CloudOptions{}, "no identity was given"},
		{"WrongIdentity", blobstore.CloudOptions{IdentityFiles: []string{other.identityFile}}, "none of the identities"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, err := blobstore.NewCloud(b, tc.opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := r.Get(ctx, d)
			if got != nil || !errors.Is(err, blobstore.ErrNoIdentity) || errors.Is(err, blobstore.ErrCorrupt) {
				t.Fatalf("Get = %d bytes, %v; want ErrNoIdentity", len(got), err)
			}
			if msg := err.Error(); !strings.Contains(msg, d.String()) || !strings.Contains(msg, tc.want) {
				t.Errorf("error %q should name the digest and say %q", msg, tc.want)
			}
		})
	}
	r, err := blobstore.NewCloud(b, blobstore.CloudOptions{IdentityFiles: []string{other.identityFile, k.identityFile}})
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, r, d); !bytes.Equal(got, data) {
		t.Fatalf("Get with the right identity among others = %q", got)
	}
}

// TestMixedStore checks that a store that encrypts still reads blobs
// written before it did.
func TestMixedStore(t *testing.T) {
	k := testKeys(t)
	b := memblob.OpenBucket(nil)
	plain, _ := blobstore.NewCloud(b, blobstore.CloudOptions{})
	d := put(t, plain, []byte("written in the clear"))
	enc, _ := blobstore.NewCloud(b, blobstore.CloudOptions{Recipients: []string{k.recipient}, IdentityFiles: []string{k.identityFile}})
	if got := get(t, enc, d); string(got) != "written in the clear" {
		t.Fatalf("Get = %q", got)
	}
}

func TestBadKeys(t *testing.T) {
	if _, err := blobstore.Open(context.Background(), "mem://", blobstore.WithMem(blobstore.OpenOptions{Recipients: []string{"age1notakey"}})); err == nil || !strings.Contains(err.Error(), "age1notakey") {
		t.Errorf("bad recipient: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "id")
	os.WriteFile(bad, []byte("not a key\n"), 0o600)
	if _, err := blobstore.Open(context.Background(), "mem://", blobstore.WithMem(blobstore.OpenOptions{IdentityFiles: []string{bad}})); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad identity file: %v", err)
	}
	if _, err := blobstore.Open(context.Background(), t.TempDir(), blobstore.OpenOptions{IdentityFiles: []string{bad + ".missing"}}); err == nil {
		t.Error("missing identity file: no error")
	}
}

// TestCloudRefresh checks both sides of RefreshAfter on a bucket whose
// times cannot be set back: a re-Put within it leaves the object alone,
// one after it rewrites the object.
func TestCloudRefresh(t *testing.T) {
	ctx := context.Background()
	data := []byte("wanted again")
	for _, tc := range []struct {
		after time.Duration
		moves bool
	}{{time.Hour, false}, {time.Millisecond, true}} {
		s, err := blobstore.NewCloud(memblob.OpenBucket(nil), blobstore.CloudOptions{RefreshAfter: tc.after})
		if err != nil {
			t.Fatal(err)
		}
		d := put(t, s, data)
		first, err := s.Stat(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		put(t, s, data)
		second, err := s.Stat(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if moved := second.ModTime.After(first.ModTime); moved != tc.moves {
			t.Errorf("RefreshAfter %v: re-Put moved ModTime %v → %v; want moved = %v", tc.after, first.ModTime, second.ModTime, tc.moves)
		}
	}
}

func TestCloudDataSize(t *testing.T) {
	s, err := blobstore.Open(context.Background(), "mem://", blobstore.WithMem(blobstore.OpenOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Repeat([]byte("compressible "), 1000)
	d := put(t, s, data)
	_, n, err := s.(blobstore.DataSizer).StatData(context.Background(), d)
	if err != nil || n != int64(len(data)) {
		t.Fatalf("DataSize = %d, %v; want %d", n, err, len(data))
	}
	info, err := s.Stat(context.Background(), d)
	if err != nil || info.Size >= int64(len(data)) || info.Size <= 0 {
		t.Fatalf("Stat size = %d, %v; want the compressed size", info.Size, err)
	}
}

// TestCloudListIgnoresForeignKeys checks that objects that are not blobs
// are not listed.
func TestCloudListIgnoresForeignKeys(t *testing.T) {
	ctx := context.Background()
	b := memblob.OpenBucket(nil)
	s, _ := blobstore.NewCloud(b, blobstore.CloudOptions{})
	d := put(t, s, []byte("the one blob"))
	h := d.Hex()
	for _, k := range []string{"README", "blobs/sha256/" + h, "blobs/sha256/zz/" + h[2:], "blobs/sha256/" + h[:2] + "/" + h[2:] + ".tmp",
		"blobs/sha256/" + h[:2] + "/" + strings.ToUpper(h[2:]), "blobs/sha512/" + h[:2] + "/" + h[2:]} {
		if err := b.WriteAll(ctx, k, []byte("x"), nil); err != nil {
			t.Fatal(err)
		}
	}
	var got []blobstore.Digest
	s.List(ctx, func(d blobstore.Digest) error { got = append(got, d); return nil })
	if len(got) != 1 || got[0] != d {
		t.Fatalf("List = %v, want just %s", got, d)
	}
}

// TestOpen checks how store specs are told apart and what a file URL
// creates.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	for spec, want := range map[string]bool{"s3://b": true, "file:///x": true, "mem://": true, "/var/x": false, "rel/dir": false, "C:\\x": false, "a b://x": false} {
		if got := blobstore.IsURL(spec); got != want {
			t.Errorf("IsURL(%q) = %v", spec, got)
		}
	}
	dir := t.TempDir()
	s, err := blobstore.Open(ctx, filepath.Join(dir, "plain"), blobstore.OpenOptions{})
	if _, ok := s.(*blobstore.Local); !ok || err != nil {
		t.Errorf("Open of a path = %T, %v; want *Local", s, err)
	}
	if _, err := blobstore.Open(ctx, "ftp://host/x", blobstore.OpenOptions{}); err == nil || !strings.Contains(err.Error(), "unsupported scheme") {
		t.Errorf("Open ftp:// = %v", err)
	}
	fdir := filepath.Join(dir, "fileblob")
	s, err = blobstore.Open(ctx, "file://"+fdir, blobstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	d := put(t, s, []byte("in a file bucket"))
	fi, err := os.Stat(filepath.Join(fdir, "blobs", "sha256", d.Hex()[:2]))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("file:// shard directory mode %v, want 0700", fi.Mode().Perm())
	}
}

// TestDeadEndpoint checks that a store whose server is down fails with an
// error naming the store and the cause, quickly, and fails at once after
// that.
func TestDeadEndpoint(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	ctx := context.Background()
	s, err := blobstore.Open(ctx, "s3://bucket?region=us-east-1&endpoint=http://"+addr, blobstore.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = s.Put(ctx, []byte("nowhere to go"))
	if err == nil {
		t.Fatal("Put to a dead server succeeded")
	}
	if msg := err.Error(); !strings.Contains(msg, "s3://bucket") || !strings.Contains(msg, "connection refused") {
		t.Errorf("error %q should name the store and say the connection was refused", msg)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Put took %v to give up", d)
	}
	start = time.Now()
	if _, err := s.Get(ctx, blobstore.Sum([]byte("x"))); err == nil || errors.Is(err, blobstore.ErrNotFound) {
		t.Errorf("Get from a dead server = %v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("second call took %v; want it to fail at once", d)
	}
}

// TestCloudRefreshKeepsStoredForm checks that the refresh of an old
// object writes its bytes back as they are: a writer encrypting to other
// keys, or to none, must not re-seal it.
func TestCloudRefreshKeepsStoredForm(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	k1, k2 := newKeys(t, dir), newKeys(t, dir)
	data := []byte("a secret tool result that must stay sealed to k1")
	for i, second := range []blobstore.CloudOptions{{Recipients: []string{k2.recipient}}, {}, {Recipients: []string{k2.recipient}}, {}} {
		b := memblob.OpenBucket(nil)
		if i >= 2 {
			var err error
			if b, err = fileblob.OpenBucket(t.TempDir(), nil); err != nil {
				t.Fatal(err)
			}
		}
		first, err := blobstore.NewCloud(b, blobstore.CloudOptions{Recipients: []string{k1.recipient}, IdentityFiles: []string{k1.identityFile}})
		if err != nil {
			t.Fatal(err)
		}
		d := put(t, first, data)
		before, err := b.ReadAll(ctx, blobstore.Key(d))
		if err != nil {
			t.Fatal(err)
		}
		second.RefreshAfter = time.Millisecond
		other, err := blobstore.NewCloud(b, second)
		if err != nil {
			t.Fatal(err)
		}
		info, _ := first.Stat(ctx, d)
		time.Sleep(20 * time.Millisecond)
		put(t, other, data)
		after, err := b.ReadAll(ctx, blobstore.Key(d))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before, after) {
			t.Errorf("recipients %v: refresh changed the stored object (encrypted %v)", second.Recipients, bytes.HasPrefix(after, []byte("age-encryption.org/")))
		}
		if got, err := first.Get(ctx, d); err != nil || !bytes.Equal(got, data) {
			t.Errorf("recipients %v: k1 cannot read the blob back: %v", second.Recipients, err)
		}
		if info2, _ := first.Stat(ctx, d); !info2.ModTime.After(info.ModTime) {
			t.Errorf("recipients %v: refresh did not move ModTime", second.Recipients)
		}
	}
}

// TestCloudPutRepairsDamaged checks that a Put of data whose object is
// damaged overwrites it, and that an object it cannot decrypt is kept.
func TestCloudPutRepairsDamaged(t *testing.T) {
	ctx := context.Background()
	data := []byte("the good bytes of a blob")
	k := testKeys(t)
	for _, opt := range []blobstore.CloudOptions{{}, {Recipients: []string{k.recipient}, IdentityFiles: []string{k.identityFile}}} {
		b := memblob.OpenBucket(nil)
		s, err := blobstore.NewCloud(b, opt)
		if err != nil {
			t.Fatal(err)
		}
		d := blobstore.Sum(data)
		for _, damaged := range [][]byte{nil, []byte("garbage"), compress(t, []byte("other data"))} {
			if err := b.WriteAll(ctx, blobstore.Key(d), damaged, nil); err != nil {
				t.Fatal(err)
			}
			put(t, s, data)
			if got, err := s.Get(ctx, d); err != nil || !bytes.Equal(got, data) {
				t.Errorf("encrypted %v: after Put over %q, Get = %q, %v", len(opt.Recipients) > 0, damaged, got, err)
			}
		}
	}
	// A writer with only a recipient keeps an object it cannot check.
	b := memblob.OpenBucket(nil)
	owner, _ := blobstore.NewCloud(b, blobstore.CloudOptions{Recipients: []string{k.recipient}, IdentityFiles: []string{k.identityFile}})
	d := put(t, owner, data)
	before, _ := b.ReadAll(ctx, blobstore.Key(d))
	writer, _ := blobstore.NewCloud(b, blobstore.CloudOptions{Recipients: []string{newKeys(t, t.TempDir()).recipient}})
	put(t, writer, data)
	if after, _ := b.ReadAll(ctx, blobstore.Key(d)); !bytes.Equal(before, after) {
		t.Error("a writer without the identity replaced an object it cannot check")
	}
}

// TestOpenRefuses checks the store specs Open turns down, and that it
// creates nothing for them.
func TestOpenRefuses(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	t.Chdir(dir)
	cache := filepath.Join(dir, "st", "cache")
	for _, tc := range []struct {
		spec string
		opt  blobstore.OpenOptions
		want string
	}{
		{"mem://", blobstore.OpenOptions{}, "only in memory"},
		{"file://teamA" + dir + "/st", blobstore.OpenOptions{}, "file:///teamA" + dir + "/st"},
		{"file://relative/x", blobstore.OpenOptions{}, "no host"},
		{"file://", blobstore.OpenOptions{}, "needs a directory"},
		{"file:///", blobstore.OpenOptions{}, "needs a directory"},
		{"file://" + dir + "/st", blobstore.OpenOptions{CacheDir: dir + "/st"}, "overlaps"},
		{"file://" + dir + "/st", blobstore.OpenOptions{CacheDir: cache}, "overlaps"},
		{"file://" + cache, blobstore.OpenOptions{CacheDir: dir + "/st/"}, "overlaps"},
		{"file://" + dir + "/st", blobstore.OpenOptions{CacheDir: "st"}, "overlaps"},
		{dir + "/none", blobstore.OpenOptions{MustExist: true}, "no blob store at " + dir + "/none"},
		{dir, blobstore.OpenOptions{MustExist: true}, "no blob store at " + dir},
	} {
		s, err := blobstore.Open(ctx, tc.spec, tc.opt)
		if err == nil {
			s.(interface{ Close() error }).Close()
			t.Errorf("Open(%q, %+v) succeeded", tc.spec, tc.opt)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Open(%q, %+v) = %v; want it to say %q", tc.spec, tc.opt, err, tc.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("refused Opens created %v", ents)
	}
	// What is allowed: localhost, a cache beside the store, mem:// in tests.
	for _, tc := range []struct {
		spec string
		opt  blobstore.OpenOptions
	}{
		{"file://localhost" + dir + "/a", blobstore.OpenOptions{}},
		{"file://" + dir + "/b", blobstore.OpenOptions{CacheDir: dir + "/bc"}},
		{"mem://", blobstore.WithMem(blobstore.OpenOptions{})},
	} {
		s, err := blobstore.Open(ctx, tc.spec, tc.opt)
		if err != nil {
			t.Errorf("Open(%q, %+v) = %v", tc.spec, tc.opt, err)
			continue
		}
		put(t, s, []byte("x"))
		s.(interface{ Close() error }).Close()
	}
	if _, err := os.Stat(filepath.Join(dir, "a", "blobs")); err != nil {
		t.Errorf("file://localhost/DIR did not store in DIR: %v", err)
	}
}

// TestCloudAbandonedBatchLeavesNoTemp: a run that stops before it commits
// (killed, or failed) leaves nothing behind in the system's temp directory,
// where nothing would clean it up: a store with no cache spools its packs
// to files that have no name.
func TestCloudAbandonedBatchLeavesNoTemp(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	ctx := context.Background()
	s, err := blobstore.Open(ctx, memSpec(t), blobstore.WithMem(blobstore.OpenOptions{}))
	if err != nil {
		t.Fatal(err)
	}
	b, ok := s.(blobstore.Batcher)
	if !ok {
		t.Fatal("a cloud store batches")
	}
	data := []byte("a value the run never commits")
	if err := b.PutPending(ctx, blobstore.Sum(data), data); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, data); err != nil {
		t.Fatal(err)
	}
	if c, ok := s.(interface{ Close() error }); ok {
		c.Close()
	}
	if left, _ := os.ReadDir(tmp); len(left) > 0 {
		t.Errorf("left in the temp directory: %s", left[0].Name())
	}
}

// TestCloudSealedAfterPut: what a PutPending of a blob into a Cloud store
// that does not encrypt leaves readers: the packed copy it relies on as
// that copy is, its own plain copy when there is none, whatever a loose
// object of the blob holds (PutPending never relies on one, so the check
// asks the bucket nothing).
func TestCloudSealedAfterPut(t *testing.T) {
	ctx := context.Background()
	k := testKeys(t)
	b := memblob.OpenBucket(nil)
	sealing, err := blobstore.NewCloud(b, blobstore.CloudOptions{Recipients: []string{k.recipient}})
	if err != nil {
		t.Fatal(err)
	}
	packed, loose := []byte("sealed in a pack"), []byte("sealed loose")
	dp, dl := blobstore.Sum(packed), blobstore.Sum(loose)
	if err := sealing.PutPending(ctx, dp, packed); err != nil {
		t.Fatal(err)
	}
	if err := sealing.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sealing.Put(ctx, loose); err != nil { // a loose object
		t.Fatal(err)
	}
	plain, err := blobstore.NewCloud(b, blobstore.CloudOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantSealedAfterPut(t, plain, map[blobstore.Digest]bool{dp: true, dl: false, blobstore.Sum([]byte("never stored")): false})
	if err := plain.PutPending(ctx, dl, loose); err != nil {
		t.Fatal(err)
	}
	if err := plain.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := get(t, plain, dl); !bytes.Equal(got, loose) {
		t.Fatal("the plain packed copy of a sealed loose blob is not what a reader gets")
	}
}
