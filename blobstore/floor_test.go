//go:build unix

package blobstore_test

import (
	"context"
	"crypto/sha256"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
)

// BenchmarkFloor measures, one core at a time, what storing values and
// reading them back costs whatever the filter around it does: zstd at the
// store's settings, SHA-256, and reading a blob file. These bound what
// extract, trim and roll into a new store, and restore, can reach on the
// machine at hand (README, Performance). One iteration handles every
// value once.
//
// The values are those of the store at $BS_FLOOR_STORE (scripts/bench
// points it at the store its extract filled, so the values are the
// benchmark session's), or generated transcript-like text of 1-16 KiB.
//
//	BS_FLOOR_STORE=~/.local/share/bs go test ./blobstore -run '^$' -bench Floor -benchtime 3x
func BenchmarkFloor(b *testing.B) {
	values := floorValues(b)
	total := 0
	for _, v := range values {
		total += len(v)
	}
	b.Logf("%d values, %d bytes, %.0f bytes each on average", len(values), total, float64(total)/float64(len(values)))
	enc, dec, err := blobstore.NewCodec()
	if err != nil {
		b.Fatal(err)
	}
	compressed := make([][]byte, len(values))
	for i, v := range values {
		compressed[i] = enc.EncodeAll(v, nil)
	}
	// CPU time (user and system, of the whole process) is what the
	// cores pay; wall time would include waiting for the disk.
	perValue := func(b *testing.B, cpu time.Duration) {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*len(values)), "cpu-µs/value")
	}
	b.Run("Encode", func(b *testing.B) {
		b.SetBytes(int64(total))
		var dst []byte
		for b.Loop() {
			for _, v := range values {
				dst = enc.EncodeAll(v, dst[:0])
			}
		}
	})
	b.Run("Decode", func(b *testing.B) {
		b.SetBytes(int64(total))
		var dst []byte
		for b.Loop() {
			for _, c := range compressed {
				if dst, err = dec.DecodeAll(c, dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("SHA256", func(b *testing.B) {
		b.SetBytes(int64(total))
		for b.Loop() {
			for _, v := range values {
				sha256.Sum256(v)
			}
		}
	})
	// Get: each blob read back from a store filled as extract fills it
	// (PutPending, one Commit: packs), including the decompression and
	// the digest check that Decode and SHA256 measure alone: the rest is
	// the store's share (an index lookup, a ranged read of a pack).
	store, err := blobstore.OpenLocal(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	for _, v := range values {
		if err := store.PutPending(context.Background(), blobstore.Sum(v), v); err != nil {
			b.Fatal(err)
		}
	}
	if err := store.Commit(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Run("Get", func(b *testing.B) {
		b.SetBytes(int64(total))
		cpu0 := cpuTime()
		for b.Loop() {
			for _, v := range values {
				if _, err := store.Get(context.Background(), blobstore.Sum(v)); err != nil {
					b.Fatal(err)
				}
			}
		}
		perValue(b, cpuTime()-cpu0)
	})
}

// cpuTime is the user and system time the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// floorValues returns the values BenchmarkFloor works on.
func floorValues(b *testing.B) [][]byte {
	dir := os.Getenv("BS_FLOOR_STORE")
	if dir == "" {
		r := rand.New(rand.NewPCG(3, 3))
		corpus := randomText(r, 8<<20)
		values := make([][]byte, 4096)
		for i := range values {
			values[i] = uniqueBlob(corpus, i, 1<<10+r.IntN(15<<10))
		}
		return values
	}
	s, err := blobstore.OpenLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	var values [][]byte
	err = s.List(context.Background(), func(d blobstore.Digest) error {
		v, err := s.Get(context.Background(), d)
		if err != nil {
			return err
		}
		values = append(values, v)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	if len(values) == 0 {
		b.Fatalf("no blobs in the store at %s", dir)
	}
	return values
}
