package blobstore_test

// The S3 test environment: proves that the S3-compatible server the tests
// and benchmarks use (scripts/s3server, versitygw on 127.0.0.1) does, through
// gocloud.dev/blob, what a cloud blob store needs. The same checks run
// against gocloud's in-memory bucket everywhere, so that they are known to
// hold for a correct bucket.
//
//	eval "$(scripts/s3server start)"; go test ./blobstore -run TestS3Env
//
// Without BS_TEST_S3_ENDPOINT the S3 case is skipped, unless BS_REQUIRE_S3=1
// (as CI sets it), when it fails.

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"gocloud.dev/blob"
	_ "gocloud.dev/blob/memblob"
	_ "gocloud.dev/blob/s3blob"
	"gocloud.dev/gcerrors"

	"github.com/bstools/bs/blobstore/storetest"
)

// s3TestURL returns the gocloud URL of the test server's bucket, or skips
// (fails under BS_REQUIRE_S3=1) when no server is configured.
func s3TestURL(t *testing.T) string {
	t.Helper()
	srv, ok, err := storetest.S3FromEnv()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skip("BS_TEST_S3_ENDPOINT not set; start a server with eval \"$(scripts/s3server start)\"")
	}
	return srv.BucketURL()
}

func TestS3Env(t *testing.T) {
	cases := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"mem", func(*testing.T) string { return "mem://" }},
		{"s3", s3TestURL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			u := c.url(t)
			ctx := context.Background()
			b, err := blob.OpenBucket(ctx, u)
			if err != nil {
				t.Fatalf("open %s: %v", u, err)
			}
			t.Cleanup(func() { b.Close() })
			// A prefix of its own, so that runs and other packages' tests
			// sharing the bucket never see each other's keys.
			prefix := fmt.Sprintf("s3env-%d-%x/", time.Now().UnixNano(), randBytes(t, 4))
			checkBucket(t, blob.PrefixedBucket(b, prefix))
		})
	}
}

func randBytes(t *testing.T, n int) []byte {
	t.Helper()
	p := make([]byte, n)
	if _, err := rand.Read(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func checkBucket(t *testing.T, b *blob.Bucket) {
	ctx := context.Background()
	t.Cleanup(func() {
		// Leave the shared bucket as it was, whatever failed.
		it := b.List(nil)
		for {
			o, err := it.Next(ctx)
			if err != nil {
				break
			}
			_ = b.Delete(ctx, o.Key)
		}
	})

	small := []byte(`{"type":"text","text":"hello"}`)
	// Above the S3 uploader's 5 MiB part size: a multipart upload.
	large := randBytes(t, 12<<20)
	blobs := map[string][]byte{
		"blobs/sha256/ab/0001": small,
		"blobs/sha256/ab/0002": {},
		"blobs/sha256/cd/0003": large,
	}
	for k, v := range blobs {
		err := b.WriteAll(ctx, k, v, &blob.WriterOptions{
			ContentType: "application/octet-stream",
			Metadata:    map[string]string{"bs-format": "1"},
		})
		if err != nil {
			t.Fatalf("put %s (%d bytes): %v", k, len(v), err)
		}
	}

	// Get, whole and a range.
	for k, v := range blobs {
		got, err := b.ReadAll(ctx, k)
		if err != nil {
			t.Fatalf("get %s: %v", k, err)
		}
		if !bytes.Equal(got, v) {
			t.Fatalf("get %s: %d bytes, want the %d put", k, len(got), len(v))
		}
	}
	r, err := b.NewRangeReader(ctx, "blobs/sha256/cd/0003", 6<<20, 100, nil)
	if err != nil {
		t.Fatalf("range read: %v", err)
	}
	part, err := io.ReadAll(r)
	r.Close()
	if err != nil || !bytes.Equal(part, large[6<<20:6<<20+100]) {
		t.Fatalf("range read: %v, bytes equal: %v", err, bytes.Equal(part, large[6<<20:6<<20+100]))
	}

	// Attributes.
	a, err := b.Attributes(ctx, "blobs/sha256/ab/0001")
	if err != nil {
		t.Fatalf("attributes: %v", err)
	}
	if a.Size != int64(len(small)) {
		t.Errorf("attributes: size %d, want %d", a.Size, len(small))
	}
	if a.Metadata["bs-format"] != "1" {
		t.Errorf("attributes: metadata %v, want bs-format=1", a.Metadata)
	}
	if a.ContentType != "application/octet-stream" {
		t.Errorf("attributes: content type %q", a.ContentType)
	}
	if d := time.Since(a.ModTime); d < -time.Minute || d > 5*time.Minute {
		t.Errorf("attributes: mod time %v is not about now", a.ModTime)
	}

	// A missing key is NotFound for every read.
	if _, err := b.ReadAll(ctx, "blobs/sha256/ff/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("get missing: %v, want NotFound", err)
	}
	if _, err := b.Attributes(ctx, "blobs/sha256/ff/missing"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("attributes of missing: %v, want NotFound", err)
	}
	if ok, err := b.Exists(ctx, "blobs/sha256/ff/missing"); ok || err != nil {
		t.Errorf("exists missing: %v, %v", ok, err)
	}
	if ok, err := b.Exists(ctx, "blobs/sha256/ab/0001"); !ok || err != nil {
		t.Errorf("exists: %v, %v", ok, err)
	}

	// Put only if absent: what makes a second Put of the same blob write
	// nothing.
	err = b.WriteAll(ctx, "blobs/sha256/ab/0001", []byte("other"), &blob.WriterOptions{IfNotExist: true})
	if gcerrors.Code(err) != gcerrors.FailedPrecondition {
		t.Errorf("put if not exist over an existing key: %v, want FailedPrecondition", err)
	}
	if got, _ := b.ReadAll(ctx, "blobs/sha256/ab/0001"); !bytes.Equal(got, small) {
		t.Errorf("put if not exist replaced the blob with %q", got)
	}

	// A re-Put moves the modification time forward (S3 keeps seconds).
	time.Sleep(1100 * time.Millisecond)
	if err := b.WriteAll(ctx, "blobs/sha256/ab/0001", small, nil); err != nil {
		t.Fatalf("re-put: %v", err)
	}
	a2, err := b.Attributes(ctx, "blobs/sha256/ab/0001")
	if err != nil {
		t.Fatalf("attributes after re-put: %v", err)
	}
	if !a2.ModTime.After(a.ModTime) {
		t.Errorf("re-put: mod time %v, not after %v", a2.ModTime, a.ModTime)
	}

	// List: flat, by prefix, and by directory.
	if got, want := listKeys(t, b, nil), sortedKeys(blobs); !slices.Equal(got, want) {
		t.Errorf("list: %q, want %q", got, want)
	}
	if got := listKeys(t, b, &blob.ListOptions{Prefix: "blobs/sha256/ab/"}); !slices.Equal(got, []string{"blobs/sha256/ab/0001", "blobs/sha256/ab/0002"}) {
		t.Errorf("list prefix: %q", got)
	}
	if got := listKeys(t, b, &blob.ListOptions{Prefix: "blobs/sha256/", Delimiter: "/"}); !slices.Equal(got, []string{"blobs/sha256/ab/", "blobs/sha256/cd/"}) {
		t.Errorf("list directories: %q", got)
	}
	// More keys than one list page holds.
	for i := range 1005 {
		if err := b.WriteAll(ctx, fmt.Sprintf("many/%04d", i), []byte{byte(i)}, nil); err != nil {
			t.Fatalf("put many/%04d: %v", i, err)
		}
	}
	if n := len(listKeys(t, b, &blob.ListOptions{Prefix: "many/"})); n != 1005 {
		t.Errorf("list of 1005 keys gave %d", n)
	}

	// Delete.
	if err := b.Delete(ctx, "blobs/sha256/ab/0001"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := b.ReadAll(ctx, "blobs/sha256/ab/0001"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("get after delete: %v, want NotFound", err)
	}
	if err := b.Delete(ctx, "blobs/sha256/ab/0001"); gcerrors.Code(err) != gcerrors.NotFound {
		t.Errorf("delete again: %v, want NotFound", err)
	}
	if got := listKeys(t, b, &blob.ListOptions{Prefix: "blobs/"}); slices.Contains(got, "blobs/sha256/ab/0001") {
		t.Errorf("list after delete: %q", got)
	}
}

func listKeys(t *testing.T, b *blob.Bucket, opts *blob.ListOptions) []string {
	t.Helper()
	var keys []string
	it := b.List(opts)
	for {
		o, err := it.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("list: %v", err)
		}
		keys = append(keys, o.Key)
	}
	slices.Sort(keys)
	return keys
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// BenchmarkS3Env measures what the S3 server does through gocloud with
// blobs of a typical tool result's size (8 KiB) and of 1 MiB, one request at
// a time and 16 at once (object storage is latency bound: a store gets its throughput from
// requests in flight, not from cores).
//
//	eval "$(scripts/s3server start)"; go test ./blobstore -run '^$' -bench S3Env
func BenchmarkS3Env(b *testing.B) {
	srv, ok, _ := storetest.S3FromEnv()
	if !ok {
		b.Skip("BS_TEST_S3_ENDPOINT not set; start a server with eval \"$(scripts/s3server start)\"")
	}
	ctx := context.Background()
	bucket, err := blob.OpenBucket(ctx, srv.BucketURL())
	if err != nil {
		b.Fatal(err)
	}
	defer bucket.Close()
	prefix := fmt.Sprintf("s3env-bench-%d/", time.Now().UnixNano())
	bkt := blob.PrefixedBucket(bucket, prefix)
	defer func() {
		it := bkt.List(nil)
		for {
			o, err := it.Next(ctx)
			if err != nil {
				break
			}
			_ = bkt.Delete(ctx, o.Key)
		}
	}()
	var seq atomic.Int64
	for _, size := range []int{8 << 10, 1 << 20} {
		data := make([]byte, size)
		if _, err := rand.Read(data); err != nil {
			b.Fatal(err)
		}
		for _, par := range []int{1, 16} {
			name := fmt.Sprintf("%dKiB/inflight=%d", size>>10, par)
			procs := (par + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)
			b.Run("Put/"+name, func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				b.SetParallelism(procs)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						k := fmt.Sprintf("put/%d", seq.Add(1))
						if err := bkt.WriteAll(ctx, k, data, nil); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
			b.Run("Get/"+name, func(b *testing.B) {
				k := fmt.Sprintf("get/%d", size)
				if err := bkt.WriteAll(ctx, k, data, nil); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
				b.SetParallelism(procs)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if _, err := bkt.ReadAll(ctx, k); err != nil {
							b.Error(err)
							return
						}
					}
				})
			})
		}
	}
}
