package blobstore

import "gocloud.dev/blob"

// BucketOf is the bucket under a Cloud store, or a Cache over one, so
// tests can reach objects directly.
func BucketOf(s Store) *blob.Bucket {
	switch v := s.(type) {
	case *Cloud:
		return v.b
	case *Cache:
		return BucketOf(v.Store)
	}
	return nil
}

// Key is the object key of blob d in a Cloud store.
func Key(d Digest) string { return key(d) }
