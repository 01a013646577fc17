package spool

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// TestCopyRange copies ranges of an input larger than CopyRange's buffer,
// within one buffer and across several, and fails on an input that ends
// before the range does rather than copy less.
func TestCopyRange(t *testing.T) {
	in := make([]byte, 700<<10)
	for i := range in {
		in[i] = byte(i * 7)
	}
	r := bytes.NewReader(in)
	for _, c := range []struct{ off, n int64 }{
		{0, 0}, {0, 1}, {5, 100}, {0, int64(len(in))}, {1, 256 << 10}, {3, 512<<10 + 9}, {int64(len(in)) - 10, 10},
	} {
		var out bytes.Buffer
		if err := CopyRange(&out, r, c.off, c.n); err != nil {
			t.Fatalf("%d+%d: %v", c.off, c.n, err)
		}
		if !bytes.Equal(out.Bytes(), in[c.off:c.off+c.n]) {
			t.Fatalf("%d+%d: copied %d bytes, not the range", c.off, c.n, out.Len())
		}
	}
	var out bytes.Buffer
	if err := CopyRange(&out, r, int64(len(in))-10, 11); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a range past the end: %v", err)
	}
}
