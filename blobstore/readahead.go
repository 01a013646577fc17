package blobstore

import (
	"context"
	"sync"
)

// readahead serves the reads of packs in object storage from aligned
// windows of a pack, fetched whole: bs restore --all reads the blobs of a
// transcript in about the order they were stored, so one ranged GET of a
// window serves the hundreds of blobs it holds, where a GET per blob
// would cost a round trip each. The first read of a pack is left alone
// (restore --id reads one blob of it, and a window would fetch a thousand
// times too much); from the second on, its windows are fetched. Readers
// of one window wait for the one fetch. At most readaheadKept windows
// are held, the least recently used dropped first.
type readahead struct {
	mu    sync.Mutex
	reads map[packID]int
	kept  map[windowKey]*window
	tick  int64
}

const (
	readaheadWindow = 2 << 20
	readaheadAhead  = 2
	readaheadKept   = 2 + 2*readaheadAhead
)

type windowKey struct {
	pack packID
	k    int64 // the window's start is k*readaheadWindow
}

type window struct {
	done chan struct{} // closed once data and err are set
	data []byte
	err  error
	used int64
}

// read copies n bytes of pack id at off into buf from a window, fetching
// it (fetch reads up to n bytes at off, fewer at the pack's end) if need
// be. ok is false when the read is better made alone: a pack's first
// read, a range across windows, or a window that could not be fetched.
func (ra *readahead) read(ctx context.Context, id packID, off int64, n int, buf []byte, fetch func(ctx context.Context, off int64, n int) ([]byte, error)) (out []byte, ok bool, err error) {
	k := off / readaheadWindow
	if (off+int64(n)-1)/readaheadWindow != k || n <= 0 {
		return nil, false, nil
	}
	key := windowKey{id, k}
	ra.mu.Lock()
	if ra.reads == nil {
		ra.reads, ra.kept = map[packID]int{}, map[windowKey]*window{}
	}
	w := ra.kept[key]
	if w == nil {
		if ra.reads[id]++; ra.reads[id] == 1 {
			ra.mu.Unlock()
			return nil, false, nil
		}
		w = ra.start(ctx, key, fetch)
	}
	ra.tick++
	w.used = ra.tick
	ra.mu.Unlock()
	select {
	case <-w.done:
	case <-ctx.Done():
		return nil, false, ctx.Err()
	}
	// A window read whole means the pack goes on after it: fetch the next
	// ones meanwhile, as its readers will want them next (readaheadAhead
	// windows ahead of them, no more).
	if w.err == nil && len(w.data) == readaheadWindow {
		ra.mu.Lock()
		for j := int64(1); j <= readaheadAhead; j++ {
			if next := (windowKey{id, k + j}); ra.kept[next] == nil {
				ra.start(ctx, next, fetch)
			}
		}
		ra.mu.Unlock()
	}
	lo := off - k*readaheadWindow
	if w.err != nil || lo+int64(n) > int64(len(w.data)) {
		ra.mu.Lock()
		if ra.kept[key] == w {
			delete(ra.kept, key) // fetched again next time, not kept failed
		}
		ra.mu.Unlock()
		return nil, false, nil
	}
	buf = grow(buf, n)
	copy(buf, w.data[lo:])
	return buf, true, nil
}

// start begins fetching window key in the background, and keeps it.
// Called with ra.mu held.
func (ra *readahead) start(ctx context.Context, key windowKey, fetch func(ctx context.Context, off int64, n int) ([]byte, error)) *window {
	ra.tick++ // a window fetched ahead is as good as used: keep it
	w := &window{done: make(chan struct{}), used: ra.tick}
	ra.kept[key] = w
	ra.evict()
	go func() {
		w.data, w.err = fetch(ctx, key.k*readaheadWindow, readaheadWindow)
		close(w.done)
	}()
	return w
}

// evict drops the least recently used fetched windows beyond the limit.
func (ra *readahead) evict() {
	for len(ra.kept) > readaheadKept {
		var oldest windowKey
		var found bool
		var least int64
		for k, w := range ra.kept {
			select {
			case <-w.done:
			default:
				continue // being fetched: its readers wait for it
			}
			if !found || w.used < least {
				oldest, least, found = k, w.used, true
			}
		}
		if !found {
			return
		}
		delete(ra.kept, oldest)
	}
}
