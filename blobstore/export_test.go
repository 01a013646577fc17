package blobstore

import (
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"
)

// Hooks for the conformance harness of Mem in package blobstore_test.

// MemDamage replaces the bytes of blob d in m.
func MemDamage(m *Mem, d Digest, data []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.blobs[d]
	b.data = data
	m.blobs[d] = b
}

// MemAge moves blob d's ModTime back by the given duration.
func MemAge(m *Mem, d Digest, by time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.blobs[d]
	b.modTime = b.modTime.Add(-by)
	m.blobs[d] = b
}

// BucketOf is the bucket under a Cloud store, or a Cache over one, so
// tests can reach objects directly.
func BucketOf(s Store) *blob.Bucket {
	switch v := s.(type) {
	case *Cloud:
		return v.b
	case *Cache:
		return BucketOf(v.Store)
	}
	return nil
}

// Key is the object key of blob d in a Cloud store.
func Key(d Digest) string { return key(d) }

// Encoders is the store's encoders (encoders), for BenchmarkFloor.
type Encoders struct{ e *encoders }

// EncodeAll appends data's zstd frame to dst, as a store compresses it.
func (e Encoders) EncodeAll(data, dst []byte) []byte { return e.e.compress(data, dst) }

// NewCodec is the zstd encoders and decoder every store uses, for
// BenchmarkFloor.
func NewCodec() (Encoders, *zstd.Decoder, error) {
	enc, dec, err := newCodec()
	return Encoders{enc}, dec, err
}

// WithMem is o letting Open accept mem://, for the tests of stores over a
// bucket in memory.
func WithMem(o OpenOptions) OpenOptions {
	o.allowMem = true
	return o
}

// SetHugeBlob makes blobs of more than n bytes huge ones (see hugeBlob)
// until the returned function puts the threshold back.
func SetHugeBlob(n int) func() {
	old := hugeBlob
	hugeBlob = n
	return func() { hugeBlob = old }
}
