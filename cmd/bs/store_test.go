package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"gocloud.dev/blob"

	"github.com/bstools/bs/blobstore"
)

// The S3-compatible server the [s3] scripts run against (the s3e2e script
// starts one and exports these; CI sets them). Without BS_TEST_S3_ENDPOINT
// the [s3] condition is false, unless BS_REQUIRE_S3=1 makes that an error.
const (
	s3EndpointEnv = "BS_TEST_S3_ENDPOINT" // e.g. http://127.0.0.1:7070
	s3BucketEnv   = "BS_TEST_S3_BUCKET"
	s3RegionEnv   = "BS_TEST_S3_REGION" // default us-east-1
	s3RequireEnv  = "BS_REQUIRE_S3"
)

func s3Configured() (bool, error) {
	if os.Getenv(s3EndpointEnv) != "" {
		if os.Getenv(s3BucketEnv) == "" {
			return false, fmt.Errorf("%s is set but %s is not", s3EndpointEnv, s3BucketEnv)
		}
		return true, nil
	}
	if os.Getenv(s3RequireEnv) == "1" {
		return false, fmt.Errorf("%s=1 but %s is not set", s3RequireEnv, s3EndpointEnv)
	}
	return false, nil
}

// setupS3 gives a script with a server configured $S3STORE and $S3STORE2,
// store URLs under prefixes of their own that are emptied when the script ends, and the
// AWS credentials from the environment.
func setupS3(env *testscript.Env) error {
	if ok, _ := s3Configured(); !ok {
		return nil
	}
	for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"} {
		env.Setenv(k, os.Getenv(k))
	}
	region := os.Getenv(s3RegionEnv)
	if region == "" {
		region = "us-east-1"
	}
	q := url.Values{"endpoint": {os.Getenv(s3EndpointEnv)}, "region": {region}}
	for _, name := range []string{"S3STORE", "S3STORE2"} {
		spec := fmt.Sprintf("s3://%s/bs-script-%d-%016x?%s", os.Getenv(s3BucketEnv), os.Getpid(), rand.Uint64(), q.Encode())
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
