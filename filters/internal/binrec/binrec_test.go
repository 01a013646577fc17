package binrec

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math"
	"testing"
)

func record() []byte {
	b := []byte{Flags(true, false, true)}
	b = AppendInt(b, -7)
	b = AppendInt(b, math.MaxInt64)
	b = AppendString(b, "héllo")
	b = AppendFloat(b, 1.25)
	b = AppendInt(b, 2) // a count
	b = AppendString(b, "")
	b = AppendString(b, "x")
	return AppendFrame(b, []byte{9, 8})
}

func TestRoundTrip(t *testing.T) {
	r := NewReader(record())
	flags, a, b, s, f := r.Byte(), r.Int(), r.Int(), r.Text(), r.Float()
	n := r.Len()
	var list []string
	for range n {
		list = append(list, r.Text())
	}
	nested := r.Bytes()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if flags != 0b101 || a != -7 || b != math.MaxInt64 || s != "héllo" || f != 1.25 || len(list) != 2 || list[1] != "x" || !bytes.Equal(nested, []byte{9, 8}) {
		t.Fatalf("read %b %d %d %q %v %q %v", flags, a, b, s, f, list, nested)
	}
}

// TestMalformed: a record cut anywhere, or with bytes left over, reads as
// malformed, and a count larger than what is left reads as 0.
func TestMalformed(t *testing.T) {
	full := record()
	read := func(b []byte) error {
		r := NewReader(b)
		r.Byte()
		r.Int()
		r.Int()
		r.Text()
		r.Float()
		for range r.Len() {
			r.Text()
		}
		r.Bytes()
		return r.Err()
	}
	for cut := range len(full) {
		if err := read(full[:cut]); !errors.Is(err, ErrMalformed) {
			t.Errorf("cut at %d of %d: %v", cut, len(full), err)
		}
	}
	if err := read(append(full, 0)); !errors.Is(err, ErrMalformed) {
		t.Errorf("a byte left over: %v", err)
	}
	r := NewReader(AppendInt(nil, 1000))
	if n := r.Len(); n != 0 || r.Err() == nil {
		t.Errorf("a count past the end: %d, %v", n, r.Err())
	}
}

func TestFrames(t *testing.T) {
	var buf bytes.Buffer
	w := bufio.NewWriter(&buf)
	for _, rec := range [][]byte{{1, 2, 3}, {}, bytes.Repeat([]byte{7}, 300)} {
		if err := WriteFrame(w, rec); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	whole := buf.Bytes()
	rd := bufio.NewReader(bytes.NewReader(whole))
	var got [][]byte
	var b []byte
	for {
		f, err := ReadFrame(rd, b)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, bytes.Clone(f))
		b = f
	}
	if len(got) != 3 || !bytes.Equal(got[0], []byte{1, 2, 3}) || len(got[1]) != 0 || len(got[2]) != 300 {
		t.Fatalf("read %d frames: %v", len(got), got)
	}
	// Cut in the middle of the last frame: not a clean end.
	rd = bufio.NewReader(bytes.NewReader(whole[:len(whole)-1]))
	for range 2 {
		if _, err := ReadFrame(rd, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ReadFrame(rd, nil); err != io.ErrUnexpectedEOF {
		t.Fatalf("a cut frame: %v, want io.ErrUnexpectedEOF", err)
	}
}
