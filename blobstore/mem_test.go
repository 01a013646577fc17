package blobstore_test

import (
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/blobstore/storetest"
)

func TestMemConformance(t *testing.T) {
	storetest.Run(t, storetest.Harness{
		New: func(*testing.T) blobstore.Store { return new(blobstore.Mem) },
		Corrupt: func(_ *testing.T, s blobstore.Store, d blobstore.Digest) {
			blobstore.MemDamage(s.(*blobstore.Mem), d, []byte("forged content"))
		},
		Age: func(_ *testing.T, s blobstore.Store, d blobstore.Digest, by time.Duration) {
			blobstore.MemAge(s.(*blobstore.Mem), d, by)
		},
	})
}
