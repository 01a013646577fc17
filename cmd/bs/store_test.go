package main

import (
	"context"
	"net"
	"net/url"
	"os"
	"strings"

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

// damage STORE DIGEST: overwrites blob DIGEST in the store (a directory
// or a URL) with bytes that are not a blob, behind the store's back.
func cmdDamage(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: damage STORE sha256:HEX")
	}
	d, err := blobstore.ParseDigest(args[1])
	ts.Check(err)
	h := d.Hex()
	key := "blobs/sha256/" + h[:2] + "/" + h[2:]
	junk := []byte("this is not what was stored")
	if !blobstore.IsURL(args[0]) {
		ts.Check(os.WriteFile(ts.MkAbs(args[0])+"/"+key, junk, 0o600))
		return
	}
	// Reach the object through gocloud directly, as another tool would.
	u, err := url.Parse(args[0])
	ts.Check(err)
	if u.Scheme == "file" {
		ts.Check(os.WriteFile(u.Path+"/"+key, junk, 0o600))
		return
	}
	q := u.Query()
	if u.Scheme == "s3" && q.Has("endpoint") {
		q.Set("use_path_style", "true")
	}
	prefix := strings.Trim(u.Path, "/")
	u.Path, u.RawQuery = "", q.Encode()
	ctx := context.Background()
	b, err := blob.OpenBucket(ctx, u.String())
	ts.Check(err)
	defer b.Close()
	if prefix != "" {
		key = prefix + "/" + key
	}
	ok, err := b.Exists(ctx, key)
	ts.Check(err)
	if !ok {
		ts.Fatalf("no object %s in %s", key, args[0])
	}
	ts.Check(b.WriteAll(ctx, key, junk, nil))
}
