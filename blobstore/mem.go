package blobstore

import (
	"context"
	"sync"
	"time"
)

// Mem is a [Store] held in memory, for tests and for tools that want the
// store's semantics without a disk. It keeps blobs uncompressed and, like
// every Store, verifies their digest on Get. The zero value is an empty
// store ready to use.
type Mem struct {
	mu    sync.Mutex
	blobs map[Digest]memBlob
}

type memBlob struct {
	data    []byte
	modTime time.Time
}

// Put implements [Store.Put].
func (m *Mem) Put(ctx context.Context, data []byte) (Digest, error) {
	if err := ctx.Err(); err != nil {
		return Digest{}, err
	}
	d := Sum(data)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.blobs == nil {
		m.blobs = map[Digest]memBlob{}
	}
	b, ok := m.blobs[d]
	if !ok || Sum(b.data) != d { // new, or damaged: (re)write it
		b.data = append([]byte(nil), data...)
	}
	b.modTime = time.Now()
	m.blobs[d] = b
	return d, nil
}

// Get implements [Store.Get].
func (m *Mem) Get(ctx context.Context, d Digest) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	b, ok := m.blobs[d]
	m.mu.Unlock()
	if !ok {
		return nil, notFound(d, nil)
	}
	if Sum(b.data) != d {
		return nil, corrupt(d, "digest mismatch", nil)
	}
	return append([]byte(nil), b.data...), nil
}

// Has implements [Store.Has].
func (m *Mem) Has(ctx context.Context, d Digest) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.blobs[d]
	return ok, nil
}

// Stat implements [Store.Stat].
func (m *Mem) Stat(ctx context.Context, d Digest) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.blobs[d]
	if !ok {
		return Info{}, notFound(d, nil)
	}
	return Info{Size: int64(len(b.data)), ModTime: b.modTime}, nil
}

// List implements [Store.List]. It walks a snapshot of the digests, so fn
// may put and delete blobs.
func (m *Mem) List(ctx context.Context, fn func(Digest) error) error {
	m.mu.Lock()
	ds := make([]Digest, 0, len(m.blobs))
	for d := range m.blobs {
		ds = append(ds, d)
	}
	m.mu.Unlock()
	for _, d := range ds {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

// Delete implements [Store.Delete].
func (m *Mem) Delete(ctx context.Context, d Digest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.blobs[d]; !ok {
		return notFound(d, nil)
	}
	delete(m.blobs, d)
	return nil
}
