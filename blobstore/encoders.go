package blobstore

import (
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// encoders compress stored forms, each call with an encoder of its own
// from a sync.Pool of single-goroutine zstd encoders. One zstd.Encoder
// with an encoder per core behind it hands whichever is free to the next
// EncodeAll, so its tables (a few hundred KiB) moved between the cores'
// caches with almost every blob; the pool's per-P caches keep each
// encoder on the core that used it last. In process, extract -j 2 of the
// 256 MiB bench session spent 12% less CPU compressing (2.68 s to 2.37 s
// a run) and took 5% less time. An encoder the pool lets go at a
// collection is built again when wanted, which costs far less.
//
// As many calls compress at once as there are cores, as zstd's own
// encoders allowed: a store with sixteen workers (a remote one) would
// otherwise hold sixteen encoders of a few MiB each.
type encoders struct {
	pool  sync.Pool
	slots chan struct{}
}

func newEncoders() *encoders {
	e := &encoders{slots: make(chan struct{}, runtime.GOMAXPROCS(0))}
	e.pool.New = func() any {
		enc, err := newEncoder()
		if err != nil {
			// Only an invalid option fails, and encoderOptions are fixed:
			// newCodec has built one with them already.
			panic(err)
		}
		return enc
	}
	return e
}

// newEncoder is one encoder of the pool: EncodeAll only, from one
// goroutine at a time. With lower memory it holds 1.4 MiB rather than
// 2.6 once used, and compressed the bench's values as fast and as small.
func newEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, append(encoderOptions(), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))...)
}

// compress appends data's zstd frame to dst. A large value gets room for
// its whole frame at once: EncodeAll would otherwise grow dst by doubling,
// which for a 100 MiB value that does not compress allocates 255 MiB and
// holds 192 MiB at its peak.
func (e *encoders) compress(data, dst []byte) []byte {
	e.slots <- struct{}{}
	defer func() { <-e.slots }()
	enc := e.pool.Get().(*zstd.Encoder)
	defer e.pool.Put(enc)
	if len(data) > 1<<20 {
		dst = slices.Grow(dst, enc.MaxEncodedSize(len(data)))
	}
	return enc.EncodeAll(data, dst)
}
