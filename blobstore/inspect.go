package blobstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// DataSizer is implemented by stores that can tell a blob's uncompressed
// size without reading all of it.
type DataSizer interface {
	// StatData is Stat plus the size of blob d's data, or -1 when the
	// store cannot tell without reading the blob (an encrypted local
	// blob, an object written without the size in its metadata), in one
	// request where the store answers both from one.
	StatData(ctx context.Context, d Digest) (Info, int64, error)
}

// StatData implements [DataSizer]: the data size comes from the zstd
// frame header at the start of the blob file, which records it.
func (l *Local) StatData(ctx context.Context, d Digest) (Info, int64, error) {
	info, err := l.Stat(ctx, d)
	if err != nil {
		return info, 0, err
	}
	n, err := l.dataSize(d)
	return info, n, err
}

func (l *Local) dataSize(d Digest) (int64, error) {
	_, name := l.paths(d)
	f, err := os.Open(name)
	if errors.Is(err, os.ErrNotExist) {
		return 0, notFound(d, err)
	}
	if err != nil {
		return 0, fmt.Errorf("stat blob %s: %w", d, err)
	}
	defer f.Close()
	buf := make([]byte, zstd.HeaderMaxSize)
	n, err := io.ReadFull(f, buf)
	if err == io.EOF {
		return 0, corrupt(d, "empty file", nil)
	}
	if err != nil && err != io.ErrUnexpectedEOF {
		return 0, fmt.Errorf("stat blob %s: %w", d, err)
	}
	var h zstd.Header
	if h.Decode(buf[:n]) != nil || !h.HasFCS {
		return -1, nil
	}
	return int64(h.FrameContentSize), nil
}

// StatData implements [DataSizer] for the remote store, if it does.
func (c *Cache) StatData(ctx context.Context, d Digest) (Info, int64, error) {
	if ds, ok := c.Store.(DataSizer); ok {
		return ds.StatData(ctx, d)
	}
	info, err := c.Store.Stat(ctx, d)
	return info, -1, err
}

// Summary describes what a store holds.
type Summary struct {
	Blobs       int64 `json:"blobs"`
	StoredBytes int64 `json:"stored_bytes"` // as stored: compressed, maybe encrypted
	// DataBytes is the uncompressed size of the blobs whose size the
	// store could tell (SizedBlobs of them) without reading them.
	DataBytes  int64 `json:"data_bytes"`
	SizedBlobs int64 `json:"sized_blobs"`
	// Unreadable counts the blobs (among Blobs) whose file or metadata
	// is damaged, so that their sizes could not be told.
	Unreadable int64 `json:"unreadable"`
	// StoredSized is the stored size of those same blobs, so that
	// DataBytes/StoredSized is a compression ratio over like for like.
	StoredSized int64 `json:"-"`
}

// CompressionRatio is data bytes per stored byte, over the blobs whose
// data size is known; 0 when none is.
func (s Summary) CompressionRatio() float64 {
	if s.StoredSized == 0 {
		return 0
	}
	return float64(s.DataBytes) / float64(s.StoredSized)
}

// Summarize lists every blob of s and Stats it, on workers goroutines:
// one request per blob for a remote store, so it reads no blob data. A
// blob whose file or metadata is damaged (ErrCorrupt) is counted as
// Unreadable and the others are still summed; other errors stop it.
func Summarize(ctx context.Context, s Store, workers int) (Summary, error) {
	var sum Summary
	var mu sync.Mutex
	ds, _ := s.(DataSizer)
	unreadable := func(size int64) error {
		mu.Lock()
		defer mu.Unlock()
		sum.Blobs++
		sum.Unreadable++
		sum.StoredBytes += size
		return nil
	}
	err := forEach(ctx, s, workers, nil, func(ctx context.Context, d Digest) error {
		info, n, err := Info{}, int64(-1), error(nil)
		if ds != nil {
			info, n, err = ds.StatData(ctx, d)
		} else {
			info, err = s.Stat(ctx, d)
		}
		if errors.Is(err, ErrNotFound) {
			return nil // deleted since it was listed
		}
		if errors.Is(err, ErrCorrupt) {
			return unreadable(info.Size)
		}
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		sum.Blobs++
		sum.StoredBytes += info.Size
		if n >= 0 {
			sum.SizedBlobs++
			sum.DataBytes += n
			sum.StoredSized += info.Size
		}
		return nil
	})
	return sum, err
}

// Problem is a blob Verify could not read back intact.
type Problem struct {
	Digest Digest
	Err    error
}

// VerifyResult counts what Verify found.
type VerifyResult struct {
	Checked       int64 `json:"checked"`
	Corrupt       int64 `json:"corrupt"`
	Undecryptable int64 `json:"undecryptable"` // encrypted to no identity given
}

// VerifyOptions configures Verify.
type VerifyOptions struct {
	Workers int
	// Progress, if set, is called now and then with the number of blobs
	// checked so far and the total.
	Progress func(done, total int64)
	// OnProblem, if set, is called (from one goroutine at a time) for each
	// blob that is corrupt or cannot be decrypted.
	OnProblem func(Problem)
}

// Verify reads every blob of s back, which re-hashes it, and reports the
// ones that are corrupt or cannot be decrypted. A blob deleted while
// Verify runs is not a problem. Other errors (the store unreachable) stop
// it.
func Verify(ctx context.Context, s Store, opt VerifyOptions) (VerifyResult, error) {
	var res VerifyResult
	var mu sync.Mutex
	var done atomic.Int64
	var total int64
	err := forEach(ctx, s, opt.Workers, &total, func(ctx context.Context, d Digest) error {
		_, err := s.Get(ctx, d)
		n := done.Add(1)
		if opt.Progress != nil && (n%64 == 0 || n == total) {
			mu.Lock()
			opt.Progress(n, total)
			mu.Unlock()
		}
		switch {
		case err == nil, errors.Is(err, ErrNotFound):
		case errors.Is(err, ErrCorrupt), errors.Is(err, ErrNoIdentity):
			mu.Lock()
			if errors.Is(err, ErrCorrupt) {
				res.Corrupt++
			} else {
				res.Undecryptable++
			}
			if opt.OnProblem != nil {
				opt.OnProblem(Problem{d, err})
			}
			mu.Unlock()
		default:
			return err
		}
		return nil
	})
	res.Checked = done.Load()
	return res, err
}

// forEach lists s and calls fn for every blob on workers goroutines; the
// first error stops it. If total is not nil the listing is completed
// first and its length stored there, for progress reports.
func forEach(ctx context.Context, s Store, workers int, total *int64, fn func(context.Context, Digest) error) error {
	if workers < 1 {
		workers = 1
	}
	var all []Digest
	if total != nil {
		if err := s.List(ctx, func(d Digest) error { all = append(all, d); return nil }); err != nil {
			return err
		}
		*total = int64(len(all))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	ch := make(chan Digest, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for d := range ch {
				if err := fn(ctx, d); err != nil {
					cancel(err)
				}
			}
		})
	}
	send := func(d Digest) error {
		select {
		case ch <- d:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
	var err error
	if total != nil {
		for _, d := range all {
			if err = send(d); err != nil {
				break
			}
		}
	} else {
		err = s.List(ctx, send)
	}
	close(ch)
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}
