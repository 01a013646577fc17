package blobstore

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// Many goroutines compressing at once, more than there are cores (and
// slots), each get frames that decode to their own data.
func TestEncodersConcurrent(t *testing.T) {
	enc, dec, err := newCodec()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Go(func() {
			var dst []byte
			for i := range 50 {
				data := bytes.Repeat([]byte(fmt.Sprintf("goroutine %d value %d ", g, i)), 100+i*37)
				dst = enc.compress(data, dst[:0])
				got, err := dec.DecodeAll(dst, nil)
				if err != nil || !bytes.Equal(got, data) {
					t.Errorf("goroutine %d value %d: decodes to %d bytes (%v), want %d", g, i, len(got), err, len(data))
					return
				}
			}
		})
	}
	wg.Wait()
}
