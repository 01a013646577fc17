package spool

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
)

// limitedReaderAt fails a read that goes past limit, as a tee spool's
// bytes past what it has been written are not there yet, and counts the
// reads.
type limitedReaderAt struct {
	r     io.ReaderAt
	limit int64
	reads int
	t     *testing.T
}

func (l *limitedReaderAt) ReadAt(p []byte, off int64) (int, error) {
	l.reads++
	if off+int64(len(p)) > l.limit {
		l.t.Errorf("read of [%d, %d) past the limit %d", off, off+int64(len(p)), l.limit)
	}
	return l.r.ReadAt(p, off)
}

// Ahead gives the bytes of every range read in order, the same as the
// input holds, lines and the ranges between them alike, never reading
// past the limit; a line longer than its buffer included; with far fewer
// reads than ranges.
func TestAhead(t *testing.T) {
	in := make([]byte, 3<<20)
	for i := range in {
		in[i] = byte(i * 13)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, limitStep := range []int64{64 << 10, 1 << 20, int64(len(in))} {
		src := &limitedReaderAt{r: bytes.NewReader(in), t: t}
		a := NewAhead(src)
		var out bytes.Buffer
		off, ranges := int64(0), 0
		for limit := limitStep; off < int64(len(in)); limit = min(limit+limitStep, int64(len(in))) {
			src.limit = limit
			for off < limit {
				n := min(int64(rng.IntN(3000)), limit-off)
				if rng.IntN(200) == 0 {
					n = min(aheadSize+int64(rng.IntN(1000)), limit-off) // a huge line
				}
				if rng.IntN(2) == 0 {
					b, err := a.Bytes(off, int(n), limit)
					if err != nil {
						t.Fatal(err)
					}
					out.Write(b)
				} else if err := a.CopyTo(&out, off, n, limit); err != nil {
					t.Fatal(err)
				}
				off += n
				ranges++
			}
		}
		if !bytes.Equal(out.Bytes(), in) {
			t.Fatalf("limit step %d: the ranges read differ from the input", limitStep)
		}
		if cap(a.buf) > aheadSize {
			t.Errorf("limit step %d: keeps %d bytes, more than %d", limitStep, cap(a.buf), aheadSize)
		}
		if max := ranges / 10; src.reads > max {
			t.Errorf("limit step %d: %d reads for %d ranges", limitStep, src.reads, ranges)
		}
	}
}

// An input that ends before the range does is an error, not less output,
// and what the failed read got is not served after.
func TestAheadShort(t *testing.T) {
	in := []byte("0123456789")
	a := NewAhead(bytes.NewReader(in))
	if _, err := a.Bytes(5, 10, 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Bytes past the end: %v, want ErrUnexpectedEOF", err)
	}
	var out bytes.Buffer
	if err := a.CopyTo(&out, 8, 5, 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("CopyTo past the end: %v, want ErrUnexpectedEOF", err)
	}
	b, err := a.Bytes(2, 3, 10)
	if err != nil || string(b) != "234" {
		t.Fatalf("Bytes(2, 3) = %q, %v", b, err)
	}
}

// TestAheadCopyTo copies ranges of an input larger than Ahead's buffer,
// in no order, within one buffer and across several, and fails on an
// input that ends before the range does rather than copy less.
func TestAheadCopyTo(t *testing.T) {
	in := make([]byte, 700<<10)
	for i := range in {
		in[i] = byte(i * 7)
	}
	a := NewAhead(bytes.NewReader(in))
	end := int64(len(in))
	for _, c := range []struct{ off, n int64 }{
		{0, 0}, {0, 1}, {5, 100}, {0, int64(len(in))}, {1, 256 << 10}, {3, 512<<10 + 9}, {int64(len(in)) - 10, 10},
	} {
		var out bytes.Buffer
		if err := a.CopyTo(&out, c.off, c.n, end); err != nil {
			t.Fatalf("%d+%d: %v", c.off, c.n, err)
		}
		if !bytes.Equal(out.Bytes(), in[c.off:c.off+c.n]) {
			t.Fatalf("%d+%d: copied %d bytes, not the range", c.off, c.n, out.Len())
		}
	}
	var out bytes.Buffer
	if err := a.CopyTo(&out, end-10, 11, end+1); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a range past the end: %v", err)
	}
}
