package par

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

func TestInOrder(t *testing.T) {
	ctx := context.Background()
	for _, workers := range []int{0, 1, 3, 8} {
		var got []int
		var live, peak atomic.Int32
		err := InOrder(ctx, 100, workers, func(i int) (int, error) {
			n := live.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(time.Duration(100-i) * time.Microsecond) // later jobs finish first
			live.Add(-1)
			return i * i, nil
		}, func(i, v int) error {
			if v != i*i {
				t.Errorf("result %d for job %d", v, i)
			}
			got = append(got, i)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if g != i {
				t.Fatalf("%d workers: emitted %v, not in order", workers, got)
			}
		}
		if len(got) != 100 {
			t.Errorf("%d workers: emitted %d results, want 100", workers, len(got))
		}
		if p := int(peak.Load()); p > max(workers, 1) {
			t.Errorf("%d workers: %d jobs ran at once", workers, p)
		}
	}
}

func TestInOrderStopsAtFirstError(t *testing.T) {
	boom := errors.New("boom")
	var started atomic.Int32
	var emitted []int
	err := InOrder(context.Background(), 1000, 2, func(i int) (int, error) {
		started.Add(1)
		if i == 10 {
			return 0, boom
		}
		return i, nil
	}, func(i, _ int) error {
		emitted = append(emitted, i)
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom", err)
	}
	if len(emitted) != 10 {
		t.Errorf("emitted %d results before the failing job, want 10", len(emitted))
	}
	if n := started.Load(); n > 20 {
		t.Errorf("%d jobs started after a failure at job 10", n)
	}
	// An error from emit stops it too.
	err = InOrder(context.Background(), 1000, 2, func(i int) (int, error) { return i, nil }, func(i, _ int) error {
		if i == 5 {
			return boom
		}
		return nil
	})
	if !errors.Is(err, boom) {
		t.Fatalf("error %v, want boom from emit", err)
	}
}

func TestEach(t *testing.T) {
	var sum atomic.Int64
	if err := Each(context.Background(), 100, 3, func(i int) error { sum.Add(int64(i)); return nil }); err != nil {
		t.Fatal(err)
	}
	if sum.Load() != 4950 {
		t.Errorf("sum of the indexes %d, want 4950: a call missing or repeated", sum.Load())
	}
	boom := errors.New("boom")
	if err := Each(context.Background(), 100, 3, func(i int) error {
		if i == 7 {
			return boom
		}
		return nil
	}); !errors.Is(err, boom) {
		t.Errorf("error %v, want boom", err)
	}
}
