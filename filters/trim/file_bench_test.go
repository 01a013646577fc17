package trim_test

import (
	"context"
	"io"
	"os"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/trim"
)

// BenchmarkTrimFile runs trim as 'bs trim FILE > /dev/null' runs it, on
// the file named by $BS_TRIM_BENCH (for example scripts/benchgen's 256 MiB
// session), so that the command's path can be profiled: lossy, and with a
// local store that already holds the blobs ($BS_TRIM_BENCH_STORE, else a
// new one that a first, untimed run fills).
func BenchmarkTrimFile(b *testing.B) {
	path := os.Getenv("BS_TRIM_BENCH")
	if path == "" {
		b.Skip("BS_TRIM_BENCH not set")
	}
	info, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	for _, mode := range []string{"lossy", "store"} {
		b.Run(mode, func(b *testing.B) {
			opt := trim.Defaults()
			opt.Workers = 8
			if mode == "store" {
				dir := os.Getenv("BS_TRIM_BENCH_STORE")
				warm := dir == ""
				if warm {
					dir = b.TempDir()
				}
				st, err := blobstore.OpenLocal(dir)
				if err != nil {
					b.Fatal(err)
				}
				opt.Store = st
				if warm {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					_, err = trim.Run(context.Background(), path, f, io.Discard, opt)
					f.Close()
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.SetBytes(info.Size())
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				st, err := trim.Run(context.Background(), path, f, null, opt)
				f.Close()
				if err != nil || st.Cleared == 0 {
					b.Fatalf("trim: %v (%+v)", err, st)
				}
			}
		})
	}
}
