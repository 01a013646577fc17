package blobstore

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"

	"filippo.io/age"
	"github.com/bstools/bs/internal/hugemem"
	"github.com/klauspost/compress/zstd"
)

// A blob of more than hugeBlob bytes of data is a huge one (the single
// tool results of 100 MiB and more of real Claude Code sessions): it is
// compressed and read back as a stream, so that it costs one copy in
// memory, the caller's, rather than three (the data, its stored form, and
// a decoded copy to check it against). Smaller blobs keep the one-call
// EncodeAll and DecodeAll, which are faster. A variable so that tests can
// send small blobs down the stream.
var hugeBlob = 16 << 20

// putHuge adds blob d (data) to the batch as add does, its stored form
// compressed and sealed as a stream: first into a temp file laid out as a
// pack of its own (its header, then the stored form), then placed where
// add would have placed it (place). A form small enough to wait in memory
// (one that compressed well) is read back and added so; one that starts
// a new pack makes the temp file that pack, with no copy; one that joins
// the pack being filled is copied into it from the file.
func (p *packs) putHuge(d Digest, data []byte) error {
	f, err := p.be.createTemp()
	if err != nil {
		return err
	}
	discard := func() {
		f.Close()
		os.Remove(f.Name())
	}
	w := bufio.NewWriterSize(f, 256<<10)
	w.WriteString(packMagic)
	n, crc, err := writeStored(w, p.crypt, data)
	if err == nil {
		err = w.Flush() // an error writing the pack shows now, not at commit
	}
	if err != nil {
		discard()
		return err
	}
	stored := io.NewSectionReader(f, int64(len(packMagic)), n)
	e := entry{d: d, length: uint32(n), size: uint32(len(data)), sealed: p.crypt.encrypts(), time: time.Now().UnixNano(), crc: crc, hasCRC: true}
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.pending[d]; ok {
		discard()
		return nil
	}
	b, inMemory := p.place(n)
	if inMemory { // it compressed well
		form := make([]byte, n)
		_, err := io.ReadFull(stored, form)
		discard()
		if err != nil {
			return err
		}
		p.holdInMemory(b, e, form)
		return nil
	}
	if b.f == nil && len(b.entries) == 0 {
		// A pack of its own: the temp file is it, as spill would write it.
		b.f = f
		e.off = uint32(len(packMagic))
		b.size = int64(len(packMagic)) + n
	} else {
		defer discard()
		if err := p.spill(b); err != nil {
			return err
		}
		e.off = uint32(b.size)
		if err := b.copyFrom(stored, n); err != nil {
			return err
		}
	}
	p.hold(b, e)
	return nil
}

// writeStored writes data's stored form to w as a stream: the zstd frame
// that compress makes (the same options, the content size in its header),
// sealed when c encrypts. It returns the bytes written and their CRC-32C.
func writeStored(w io.Writer, c *crypter, data []byte) (int64, uint32, error) {
	cw := &countingWriter{w: w}
	w = cw
	var sealer io.WriteCloser
	if c.encrypts() {
		var err error
		if sealer, err = age.Encrypt(w, c.recipients...); err != nil {
			return 0, 0, fmt.Errorf("encrypt: %w", err)
		}
		w = sealer
	}
	enc, err := zstd.NewWriter(nil, append(encoderOptions(), zstd.WithEncoderConcurrency(1))...)
	if err != nil {
		return 0, 0, err
	}
	enc.ResetContentSize(w, int64(len(data)))
	if _, err := enc.Write(data); err != nil {
		enc.Close()
		return 0, 0, err
	}
	if err := enc.Close(); err != nil {
		return 0, 0, err
	}
	if sealer != nil {
		if err := sealer.Close(); err != nil {
			return 0, 0, fmt.Errorf("encrypt: %w", err)
		}
	}
	return cw.n, cw.crc, cw.err
}

// countingWriter counts what it passes on and sums it (CRC-32C), and
// keeps the first error.
type countingWriter struct {
	w   io.Writer
	n   int64
	crc uint32
	err error
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.crc = crc32.Update(c.crc, castagnoli, b[:n])
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// isHuge reports whether copy e is read as a stream (readHuge): its data
// is huge and its size known.
func (e entry) isHuge() bool { return hugeSize(e.dataSize()) }

// hugeSize reports whether data of n bytes is a huge blob's, one read as
// a stream or into memory of its own (hugeBlob), within maxBlobSize.
func hugeSize(n int64) bool { return n > int64(hugeBlob) && n <= maxBlobSize }

// packStreamer is a packBackend that can read a range of a pack as a
// stream; readHuge reads the stored form whole from one that cannot.
type packStreamer interface {
	// streamPack opens n bytes of pack id at off; fs.ErrNotExist if the
	// pack is gone.
	streamPack(ctx context.Context, id packID, off int64, n int) (io.ReadCloser, error)
}

// readHuge decodes copy e as a stream, handing fn the data as it comes.
// It checks nothing: fn does. opened reports whether the stored form could
// be read (errors reading it are read's).
func (p *packs) readHuge(ctx context.Context, e entry, fn func(io.Reader) error) (opened bool, err error) {
	var stored io.Reader
	if s, ok := p.be.(packStreamer); ok {
		rc, err := s.streamPack(ctx, e.pack, int64(e.off), int(e.length))
		if err != nil {
			return false, p.readError(e, err)
		}
		defer rc.Close()
		stored = rc
	} else {
		buf := getBuf()
		defer putBuf(buf)
		b, err := p.read(ctx, e, buf)
		if err != nil {
			return false, err
		}
		stored = bytes.NewReader(b)
	}
	compressed, err := p.crypt.openStream(e.d, stored)
	if err != nil {
		return true, err
	}
	return true, decodeStream(compressed, fn)
}

// decodeStream hands fn a decoder of its own reading the data of the
// compressed form compressed, and closes it once fn returns: a decoder
// shared with other reads would keep what it last decoded reachable.
func decodeStream(compressed io.Reader, fn func(io.Reader) error) error {
	dec, err := zstd.NewReader(compressed, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxBlobSize))
	if err != nil {
		return err
	}
	defer dec.Close()
	return fn(dec)
}

// getHuge reads copy e of a huge blob (isHuge) into memory of exactly its
// size, checked against its digest; read as for readHuge.
func (p *packs) getHuge(ctx context.Context, e entry) (data []byte, read bool, err error) {
	read, err = p.readHuge(ctx, e, func(r io.Reader) (err error) {
		data, err = readExactly(e.d, r, int(e.dataSize()))
		return err
	})
	if err != nil {
		return nil, read, err
	}
	return data, true, nil
}

// readExactly reads blob d's n bytes of data from r, its decoder, into
// memory of exactly that size (hugemem.Make), and checks them against d.
func readExactly(d Digest, r io.Reader, n int) ([]byte, error) {
	data := hugemem.Make(n, n)
	if _, err := io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, corrupt(d, "digest mismatch", nil) // shorter than it should be
		}
		return nil, decodeError(d, err)
	}
	if err := atEnd(d, r); err != nil {
		return nil, err
	}
	if Sum(data) != d {
		return nil, corrupt(d, "digest mismatch", nil)
	}
	return data, nil
}

// holdsHuge is holds for copy e of a huge blob, read as a stream: nil when
// it reads back as data.
func (p *packs) holdsHuge(ctx context.Context, e entry, data []byte) error {
	_, err := p.readHuge(ctx, e, func(r io.Reader) error { return readsAs(e.d, r, data) })
	return err
}

// readsAs checks that r, the decoder of blob d, reads exactly data,
// comparing a piece at a time.
func readsAs(d Digest, r io.Reader, data []byte) error {
	buf := getBuf()
	defer putBuf(buf)
	chunk := grow(*buf, 1<<20)
	*buf = chunk
	for len(data) > 0 {
		n, err := io.ReadFull(r, chunk[:min(len(chunk), len(data))])
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return corrupt(d, "digest mismatch", nil) // shorter than data
			}
			return decodeError(d, err)
		}
		if !bytes.Equal(chunk[:n], data[:n]) {
			return corrupt(d, "digest mismatch", nil)
		}
		data = data[n:]
	}
	return atEnd(d, r)
}

// atEnd checks that r, a decoder, has nothing after the data read from it.
func atEnd(d Digest, r io.Reader) error {
	var one [1]byte
	n, err := r.Read(one[:])
	switch {
	case n > 0:
		return corrupt(d, "digest mismatch", nil) // longer than it should be
	case err == io.EOF:
		return nil
	case err == nil:
		return atEnd(d, r)
	}
	return decodeError(d, err)
}

// decodeError is a stream decoder's error as decode reports it.
func decodeError(d Digest, err error) error {
	var be *blobError
	if errors.As(err, &be) {
		return err // from the reader under the decoder: a decryption error
	}
	return corrupt(d, "cannot decode: "+err.Error(), err)
}

// openStream is open for a stored form read as a stream.
func (c *crypter) openStream(d Digest, stored io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(stored, 64<<10)
	head, _ := br.Peek(len(ageMagic))
	if !isEncrypted(head) {
		return br, nil
	}
	r, err := c.decrypt(d, br)
	if err != nil {
		return nil, err
	}
	return &decryptErrors{d: d, r: r}, nil
}

// decryptErrors reports a failure to authenticate the payload as open does.
type decryptErrors struct {
	d Digest
	r io.Reader
}

func (e *decryptErrors) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err != nil && err != io.EOF {
		err = corrupt(e.d, "cannot decrypt: "+err.Error(), err)
	}
	return n, err
}

// streamPack implements packStreamer with a file of its own, so that
// open's closing of the files it keeps cannot cut the stream.
func (lp *localPacks) streamPack(ctx context.Context, id packID, off int64, n int) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(lp.packPath(id))
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && off+int64(n) > fi.Size() {
		err = io.ErrUnexpectedEOF // the index names bytes the pack lacks (as readPack)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return sectionFile{io.NewSectionReader(f, off, int64(n)), f}, nil
}

// sectionFile reads a section of a file it closes.
type sectionFile struct {
	*io.SectionReader
	f *os.File
}

func (s sectionFile) Close() error { return s.f.Close() }
