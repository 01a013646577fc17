package retention

// Len is the number of referenced blobs, for the tests of package
// retention_test.
func (m *Marks) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.blobs)
}
