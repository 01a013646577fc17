package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"

	"gocloud.dev/gcerrors"
)

// retrier retries calls to an object store on transient errors with
// exponential backoff, and fails fast for a while once the service could
// not be reached at all (see Cloud).
type retrier struct {
	attempts  int
	base, max time.Duration
	cooldown  time.Duration

	mu       sync.Mutex
	downTill time.Time
	downErr  error
}

func newRetrier() retrier {
	return retrier{attempts: 4, base: 100 * time.Millisecond, max: 2 * time.Second, cooldown: 5 * time.Second}
}

// errUnreachable marks the error returned while the service is known to
// be down.
var errUnreachable = errors.New("service unreachable")

// do runs op until it succeeds, fails with an error that is not
// transient, or has been tried r.attempts times.
func (r *retrier) do(ctx context.Context, op func(context.Context) error) error {
	r.mu.Lock()
	if time.Now().Before(r.downTill) {
		err := r.downErr
		r.mu.Unlock()
		return fmt.Errorf("%w: %w", errUnreachable, err)
	}
	r.mu.Unlock()
	wait := r.base
	for attempt := 1; ; attempt++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !transient(err) || attempt >= r.attempts {
			if unreachable(err) {
				r.mu.Lock()
				r.downTill = time.Now().Add(r.cooldown)
				r.downErr = err
				r.mu.Unlock()
			}
			return err
		}
		// Full jitter: sleep a random time up to the current step.
		t := time.NewTimer(time.Duration(rand.Int64N(int64(wait))) + wait/2)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, r.max)
	}
}

// transient reports whether a failed call may succeed if tried again:
// the service was unreachable, overloaded or failed internally, or the
// connection broke.
func transient(err error) bool {
	if unreachable(err) {
		return true
	}
	switch gcerrors.Code(err) {
	case gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded:
		return true
	case gcerrors.NotFound, gcerrors.FailedPrecondition, gcerrors.PermissionDenied,
		gcerrors.InvalidArgument, gcerrors.AlreadyExists, gcerrors.Unimplemented, gcerrors.Canceled:
		return false
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) {
		c := status.HTTPStatusCode()
		return c >= 500 || c == 429 || c == 408
	}
	// A connection cut short; or, from fileblob, a metadata sidecar read
	// while another writer of the same blob rewrites it.
	if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// unreachable reports whether err says the service could not be
// reached: no connection, no name, no route.
func unreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return true
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
