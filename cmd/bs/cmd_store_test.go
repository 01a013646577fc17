package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"gocloud.dev/blob"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/blobstore/storetest"
)

// s3Configured is the [s3] condition: true when a server is configured
// (storetest.S3FromEnv), an error when BS_REQUIRE_S3=1 says one must be.
func s3Configured() (bool, error) {
	_, ok, err := storetest.S3FromEnv()
	return ok, err
}

// setupS3 gives a script with a server configured $S3STORE and $S3STORE2,
// store URLs under prefixes of their own that are emptied when the script ends, and the
// AWS credentials from the environment.
func setupS3(env *testscript.Env) error {
	srv, ok, _ := storetest.S3FromEnv()
	if !ok {
		return nil
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		env.Setenv(k, os.Getenv(k))
	}
	for _, name := range []string{"S3STORE", "S3STORE2"} {
		spec := srv.URL("bs-script")
		env.Setenv(name, spec)
		env.Defer(func() {
			ctx := context.Background()
			s, err := blobstore.Open(ctx, spec, blobstore.OpenOptions{})
			if err != nil {
				return
			}
			s.List(ctx, func(d blobstore.Digest) error { return s.Delete(ctx, d) })
		})
	}
	return nil
}

// deadport VAR: sets VAR to 127.0.0.1:PORT where nothing listens.
func cmdDeadport(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: deadport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	addr := l.Addr().String()
	ts.Check(l.Close())
	ts.Setenv(args[0], addr)
}

// damage STORE DIGEST: damages every copy of blob DIGEST in the store (a
// directory or a URL) behind the store's back: a loose one is overwritten
// with bytes that are not a blob; in a pack, one byte in the middle of the
// blob's stored form is flipped, leaving the other blobs of the pack as
// they were.
func cmdDamage(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: damage STORE sha256:HEX")
	}
	d, err := blobstore.ParseDigest(args[1])
	ts.Check(err)
	ctx := context.Background()
	copies := locate(ts, args[0], d)
	h := d.Hex()
	for _, c := range copies {
		key := "blobs/sha256/" + h[:2] + "/" + h[2:]
		if c.Pack != "" {
			key = "packs/" + c.Pack + ".pack"
		}
		damageObject(ts, ctx, args[0], key, func(b []byte) []byte {
			if c.Pack == "" {
				return []byte("this is not what was stored")
			}
			b[c.Offset+c.Stored/2] ^= 0x55
			return b
		})
	}
}

// locate is where the copies of d are in the store spec.
func locate(ts *testscript.TestScript, spec string, d blobstore.Digest) []blobstore.Copy {
	ctx := context.Background()
	if !blobstore.IsURL(spec) {
		spec = ts.MkAbs(spec)
	}
	s, err := blobstore.Open(ctx, spec, blobstore.OpenOptions{MustExist: true, IndexCache: ts.MkAbs("damage-index-cache")})
	ts.Check(err)
	copies, err := blobstore.Locate(ctx, s, d)
	if err != nil {
		ts.Fatalf("locate %s: %v", d, err)
	}
	return copies
}

// damageObject rewrites the file or object key of store spec with what
// change makes of its bytes, reaching it through gocloud directly, as
// another tool would.
func damageObject(ts *testscript.TestScript, ctx context.Context, spec, key string, change func([]byte) []byte) {
	if !blobstore.IsURL(spec) {
		p := filepath.Join(ts.MkAbs(spec), filepath.FromSlash(key))
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, change(b), 0o600))
		return
	}
	u, err := url.Parse(spec)
	ts.Check(err)
	if u.Scheme == "file" {
		p := filepath.Join(u.Path, filepath.FromSlash(key))
		b, err := os.ReadFile(p)
		ts.Check(err)
		ts.Check(os.WriteFile(p, change(b), 0o600))
		return
	}
	q := u.Query()
	if u.Scheme == "s3" && q.Has("endpoint") {
		q.Set("use_path_style", "true")
	}
	prefix := strings.Trim(u.Path, "/")
	u.Path, u.RawQuery = "", q.Encode()
	b, err := blob.OpenBucket(ctx, u.String())
	ts.Check(err)
	defer b.Close()
	if prefix != "" {
		key = prefix + "/" + key
	}
	data, err := b.ReadAll(ctx, key)
	if err != nil {
		ts.Fatalf("no object %s in %s: %v", key, spec, err)
	}
	ts.Check(b.WriteAll(ctx, key, change(data), nil))
}

// cptree SRC DST: copies the directory tree SRC to DST, as a store keeps
// it: directories 0700, files 0600.
func cmdCptree(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cptree SRC DST")
	}
	src, dst := ts.MkAbs(args[0]), ts.MkAbs(args[1])
	ts.Check(filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if e.IsDir() {
			return os.MkdirAll(to, 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o600)
	}))
}

// agestore DIR DURATION: makes every blob of the local store in DIR look
// written DURATION earlier (ageStore).
func cmdAgestore(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: agestore DIR DURATION")
	}
	by, err := time.ParseDuration(args[1])
	ts.Check(err)
	ts.Check(ageStore(ts.MkAbs(args[0]), by))
}

// ageStore makes every blob of the local store in dir look written by
// earlier: loose files' times, and the time of every record of every
// index file, as docs/store.md lays them out (the index's checksum
// recomputed).
func ageStore(dir string, by time.Duration) error {
	if err := ageFiles(filepath.Join(dir, "blobs"), by); err != nil {
		return err
	}
	idx, _ := filepath.Glob(filepath.Join(dir, "index", "*.idx"))
	for _, p := range idx {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		packs := int(binary.LittleEndian.Uint32(b[8:]))
		n := int(binary.LittleEndian.Uint32(b[12:]))
		recs := 16 + 1024 + 16*packs
		if n == 0 {
			continue
		}
		size := (len(b) - 32 - recs) / n // 64 bytes, or 56 in the first layout
		for i := 0; i < n; i++ {
			t := b[recs+size*i+48:]
			binary.LittleEndian.PutUint64(t, uint64(int64(binary.LittleEndian.Uint64(t))-by.Nanoseconds()))
		}
		sum := sha256.Sum256(b[:len(b)-32])
		copy(b[len(b)-32:], sum[:])
		if err := os.WriteFile(p, b, 0o600); err != nil {
			return err
		}
	}
	return nil
}
