package blobstore

import "time"

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
