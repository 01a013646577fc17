package blobstore

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func fastRetrier() retrier {
	return retrier{attempts: 4, base: time.Millisecond, max: 4 * time.Millisecond, cooldown: time.Hour}
}

func TestRetrier(t *testing.T) {
	ctx := context.Background()
	failing := func(errs ...error) (func(context.Context) error, *int) {
		n := 0
		return func(context.Context) error {
			n++
			if n <= len(errs) {
				return errs[n-1]
			}
			return nil
		}, &n
	}
	reset := &wrapped{syscall.ECONNRESET}

	r := fastRetrier()
	op, n := failing(reset, reset)
	if err := r.do(ctx, op); err != nil || *n != 3 {
		t.Errorf("two resets then success: err %v after %d calls, want nil after 3", err, *n)
	}
	op, n = failing(reset, reset, reset, reset, reset)
	if err := r.do(ctx, op); !errors.Is(err, syscall.ECONNRESET) || *n != 4 {
		t.Errorf("resets forever: err %v after %d calls, want ECONNRESET after 4", err, *n)
	}
	perm := errors.New("access denied")
	op, n = failing(perm)
	if err := r.do(ctx, op); err != perm || *n != 1 {
		t.Errorf("permanent error: err %v after %d calls, want it after 1", err, *n)
	}

	// A refused connection is retried, then makes later calls fail at once.
	refused := &wrapped{syscall.ECONNREFUSED}
	op, n = failing(refused, refused, refused, refused)
	if err := r.do(ctx, op); !errors.Is(err, syscall.ECONNREFUSED) || *n != 4 {
		t.Errorf("refused: err %v after %d calls", err, *n)
	}
	op, n = failing()
	if err := r.do(ctx, op); !errors.Is(err, errUnreachable) || !errors.Is(err, syscall.ECONNREFUSED) || *n != 0 {
		t.Errorf("call after the service was found down: err %v after %d calls, want at once", err, *n)
	}

	// Cancellation stops the backoff.
	r = fastRetrier()
	r.base, r.max = time.Hour, time.Hour
	cctx, cancel := context.WithCancel(ctx)
	time.AfterFunc(10*time.Millisecond, cancel)
	op, _ = failing(reset, reset)
	if err := r.do(cctx, op); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled during backoff: %v", err)
	}
}

type wrapped struct{ err error }

func (w *wrapped) Error() string { return "call failed: " + w.err.Error() }
func (w *wrapped) Unwrap() error { return w.err }

// TestS3RetriesServerErrors runs a Put through the real S3 client against
// a server that answers 503 twice: the third attempt stores the blob.
func TestS3RetriesServerErrors(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/none")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/none")
	var puts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Query().Get("list-type") == "2" {
			// The listing of index files a Put looks in first: none.
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>bucket</Name><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>`))
			return
		}
		if r.Method != http.MethodPut {
			http.Error(w, "unexpected", http.StatusBadRequest)
			return
		}
		if puts.Add(1) <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`<?xml version="1.0"?><Error><Code>SlowDown</Code><Message>busy</Message></Error>`))
			return
		}
		w.Header().Set("ETag", `"x"`)
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	u, _ := url.Parse("s3://bucket?region=us-east-1&endpoint=" + url.QueryEscape(srv.URL))
	b, err := openS3(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewCloud(b, CloudOptions{Name: "s3://bucket"})
	if err != nil {
		t.Fatal(err)
	}
	c.retry = fastRetrier()
	if _, err := c.Put(context.Background(), []byte("eventually")); err != nil {
		t.Fatalf("Put: %v", err)
	}
	if n := puts.Load(); n != 3 {
		t.Fatalf("server saw %d PUTs, want 3", n)
	}

	// A server that is always busy: the error says so after 4 attempts.
	puts.Store(-100)
	_, err = c.Put(context.Background(), []byte("never"))
	if err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("Put to a busy server: %v", err)
	}
	// Only bs retries: the SDK's own retries are off.
	if n := puts.Load() + 100; n != 4 {
		t.Fatalf("busy server saw %d PUTs, want 4", n)
	}
}
