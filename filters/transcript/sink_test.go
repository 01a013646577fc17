package transcript

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

// TestSinkOrderAndFallback: lines come out in order whatever order their
// jobs finish in; a failed job writes its fallback; after a failed commit
// every later line with a fallback gets it, even if a later commit works.
func TestSinkOrderAndFallback(t *testing.T) {
	var out bytes.Buffer
	commits := 0
	s := NewSink(&out, 4, func() error {
		commits++
		if commits == 1 {
			return errors.New("sync failed")
		}
		return nil
	})
	ctx := context.Background()
	job := func(i int, fail bool) func(context.Context) ([]byte, []byte, error) {
		return func(context.Context) ([]byte, []byte, error) {
			if fail {
				return nil, []byte(fmt.Sprintf("orig%d\n", i)), errors.New("put failed")
			}
			return []byte(fmt.Sprintf("new%d\n", i)), []byte(fmt.Sprintf("orig%d\n", i)), nil
		}
	}
	s.Write([]byte("plain\n"))
	s.Go(ctx, 10, job(1, false))
	s.Go(ctx, 10, job(2, true))
	time.Sleep(5 * commitLinger) // the first, failing, commit happens
	s.Go(ctx, 10, job(3, false))
	if err := s.Close(); err == nil {
		t.Fatal("Close reported no error")
	}
	if got := out.String(); got != "plain\norig1\norig2\norig3\n" {
		t.Errorf("output %q", got)
	}
	if commits != 1 {
		t.Errorf("%d commits after a failed one, want none", commits-1)
	}

	// Without failures, the computed lines come out, in order.
	out.Reset()
	s = NewSink(&out, 4, func() error { return nil })
	for i := 0; i < 50; i++ {
		s.Go(ctx, 10, job(i, false))
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&want, "new%d\n", i)
	}
	if out.String() != want.String() {
		t.Errorf("out of order: %q", out.String())
	}
}

// TestSinkPieces: a line in pieces is written whole, in order among the
// others, and its fallback replaces all of it when its job fails.
func TestSinkPieces(t *testing.T) {
	var out bytes.Buffer
	s := NewSink(&out, 2, nil)
	ctx := context.Background()
	pieces := func(fail bool, p ...string) func(context.Context) ([][]byte, []byte, error) {
		return func(context.Context) ([][]byte, []byte, error) {
			var b [][]byte
			for _, x := range p {
				b = append(b, []byte(x))
			}
			if fail {
				return nil, []byte("orig\n"), ErrFellBack
			}
			return b, []byte("orig\n"), nil
		}
	}
	s.Write([]byte("a\n"))
	s.GoPieces(ctx, 10, false, pieces(false, "b", "c", "d\n"))
	s.GoPieces(ctx, 10, false, pieces(true, "x\n"))
	s.GoPieces(ctx, 10, true, pieces(false, "y", "\n")) // after a line fell back: its fallback
	s.GoPieces(ctx, 10, false, pieces(false, "e", "\n"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "a\nbcd\norig\norig\ne\n" {
		t.Errorf("output %q", got)
	}
}
