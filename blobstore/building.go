package blobstore

import (
	"io"
	"sync"
)

// A building pack's bytes go to its temp file through a buffer of
// packBuf bytes that its writers fill under packs.mu, each reserving its
// place (the pack's size, which the writes below keep: the buffer holds
// its last bytes, the file or writes in flight the rest); a full buffer
// is written at its offset after packs.mu is released (queue returns the
// write to make). The compression workers of
// a run share packs.mu: with the file's write made under it, every
// worker that finished a blob waited behind the one whose blob filled
// the buffer (1.2 s of waiting a run of trim into a new store, its
// mutex profile showed).
const packBuf = 256 << 10

// queue appends data to b's pack, under packs.mu, and returns the write
// to make once the lock is released: nil while the buffer has room. The
// write has to be made before the caller's data may change (it is part
// of it), and reports an error of the file as finish does.
func (b *building) queue(data []byte) func() error {
	at := b.size - int64(len(b.buf)) // where the buffer's bytes go
	b.size += int64(len(data))
	if len(b.buf)+len(data) < packBuf {
		if b.buf == nil {
			b.buf = (*packBufs.Get().(*[]byte))[:0]
		}
		b.buf = append(b.buf, data...)
		return nil
	}
	head := b.buf
	b.buf = nil
	b.writing.Add(1)
	return func() error {
		defer b.writing.Done()
		defer recycle(head)
		_, err := b.f.WriteAt(head, at)
		if err == nil {
			_, err = b.f.WriteAt(data, at+int64(len(head)))
		}
		if err != nil {
			b.fail(err)
		}
		return err
	}
}

// write appends data to b's pack and makes the write queue returns, if
// any, at once: for the writers that hold no lock the workers wait on, or
// write rarely (a pack's start, a huge blob, a repack).
func (b *building) write(data []byte) error {
	if w := b.queue(data); w != nil {
		return w()
	}
	return nil
}

// packBufs are the buffers of building packs: each is written whole and
// comes back for the next, rather than every pack growing a new one from
// nothing, a copy per doubling.
var packBufs = sync.Pool{New: func() any {
	b := make([]byte, 0, packBuf)
	return &b
}}

// recycle gives a buffer of packBufs back, unless it is nil or one that
// grew past them (spill's, of up to looseMem bytes).
func recycle(b []byte) {
	if b != nil && cap(b) == packBuf {
		packBufs.Put(&b)
	}
}

// copyFrom appends n bytes read from r to b's pack, writing them at once.
func (b *building) copyFrom(r io.Reader, n int64) error {
	if err := b.flush(); err != nil {
		return err
	}
	at := b.size
	b.size += n
	if _, err := io.CopyN(io.NewOffsetWriter(b.f, at), r, n); err != nil {
		b.fail(err)
		return err
	}
	return nil
}

// flush writes what b buffers, once the writes made outside the lock
// are done, and returns the first error of any write.
func (b *building) flush() error {
	b.writing.Wait()
	if len(b.buf) > 0 {
		head, at := b.buf, b.size-int64(len(b.buf))
		b.buf = nil
		if _, err := b.f.WriteAt(head, at); err != nil {
			b.fail(err)
		}
		recycle(head)
	}
	b.errMu.Lock()
	defer b.errMu.Unlock()
	return b.err
}

// fail keeps the first error of a write to b's file.
func (b *building) fail(err error) {
	b.errMu.Lock()
	defer b.errMu.Unlock()
	if b.err == nil {
		b.err = err
	}
}

// buildingWrites is the part of building that writes its file.
type buildingWrites struct {
	buf     []byte // the pack's last bytes, not yet written
	writing sync.WaitGroup
	errMu   sync.Mutex
	err     error
}
