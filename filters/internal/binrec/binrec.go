// Package binrec writes and reads the small binary records a filter keeps
// in a temp file instead of memory (bs trim's plan of every line): varints,
// strings and flags appended to a byte slice, and a Reader that reads them
// back in the same order and says when the bytes were not what it wrote.
// A record goes to the file framed by its length (AppendFrame, ReadFrame).
package binrec

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"math"
)

// ErrMalformed is what a Reader says of bytes that are not a record.
var ErrMalformed = errors.New("malformed record")

// AppendInt appends v as a varint.
func AppendInt(b []byte, v int) []byte { return binary.AppendVarint(b, int64(v)) }

// AppendString appends s with its length.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendFloat appends v's eight bytes.
func AppendFloat(b []byte, v float64) []byte {
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// Flags packs up to eight bools into a byte, the first in the lowest bit.
func Flags(bits ...bool) byte {
	var f byte
	for i, set := range bits {
		if set {
			f |= 1 << i
		}
	}
	return f
}

// Reader reads a record's fields in the order they were appended. A read
// past the end sets its error and returns zero; check Err once at the end.
type Reader struct {
	b   []byte
	bad bool
}

// NewReader reads the record b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is ErrMalformed when a read ran past the end or, once every field
// is read, bytes are left over.
func (r *Reader) Err() error {
	if r.bad || len(r.b) > 0 {
		return ErrMalformed
	}
	return nil
}

func (r *Reader) take(n int) []byte {
	if n < 0 || n > len(r.b) {
		r.bad, r.b = true, nil
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

// Int reads what AppendInt wrote.
func (r *Reader) Int() int {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return int(v)
}

// Len reads a count of what follows, as AppendInt wrote it: a count that
// is negative, or larger than the bytes left (every element takes one at
// least), makes the record malformed and reads as 0.
func (r *Reader) Len() int {
	n := r.Int()
	if n < 0 || n > len(r.b) {
		r.bad, r.b = true, nil
		return 0
	}
	return n
}

// Text reads what AppendString wrote.
func (r *Reader) Text() string {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.bad, r.b = true, nil
		return ""
	}
	r.b = r.b[k:]
	return string(r.take(int(n)))
}

// Float reads what AppendFloat wrote.
func (r *Reader) Float() float64 {
	if b := r.take(8); b != nil {
		return math.Float64frombits(binary.LittleEndian.Uint64(b))
	}
	return 0
}

// Bytes reads what AppendFrame framed inside a record: a nested record.
func (r *Reader) Bytes() []byte {
	n, k := binary.Uvarint(r.b)
	if k <= 0 || n > uint64(len(r.b)-k) {
		r.bad, r.b = true, nil
		return nil
	}
	r.b = r.b[k:]
	return r.take(int(n))
}

// AppendFrame appends record with its length in front, as ReadFrame and
// Reader.Bytes read it.
func AppendFrame(b, record []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(record)))
	return append(b, record...)
}

// WriteFrame writes record to w with its length in front, as ReadFrame
// reads it.
func WriteFrame(w *bufio.Writer, record []byte) error {
	var n [binary.MaxVarintLen64]byte
	if _, err := w.Write(binary.AppendUvarint(n[:0], uint64(len(record)))); err != nil {
		return err
	}
	_, err := w.Write(record)
	return err
}

// ReadFrame reads the next framed record from rd into buf (grown as
// needed) and returns it: io.EOF at a clean end, io.ErrUnexpectedEOF in
// the middle of one.
func ReadFrame(rd *bufio.Reader, buf []byte) ([]byte, error) {
	n, err := binary.ReadUvarint(rd)
	if err != nil {
		return nil, err
	}
	if n > math.MaxInt32 {
		return nil, ErrMalformed
	}
	if cap(buf) < int(n) {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(rd, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}
