// Package blobstore is a private, content-addressed store for the values that
// bs filters remove from agent transcripts.
//
// A blob is an arbitrary byte string named by the SHA-256 of its bytes (a
// [Digest]). Because the name is derived from the content, storing the same
// bytes twice stores them once, and a reader can always check that what it got
// back is what was put: a [Store] never returns bytes whose digest does not
// match the one asked for.
//
// Transcript tool output routinely contains secrets, so implementations keep
// blobs private to the user that owns the store.
//
// [Local] is the on-disk implementation; [Cloud] keeps blobs in object
// storage (S3, GCS, Azure, through gocloud.dev/blob), optionally behind a
// local read-through [Cache]; [Open] picks one from a directory or a URL.
// Either can encrypt blobs at rest with age (see [OpenOptions]). Package
// github.com/bstools/bs/blobstore/storetest holds a conformance suite that
// every implementation is expected to pass.
//
// # Layout
//
// Local and Cloud share one layout (docs/store.md has it in full). A batch
// of blobs ([Batcher]: PutPending, then Commit) is written as pack files,
// packs/<id>.pack, each many blobs of at most 16 MiB together, and one
// index file, index/<id>.idx, that maps each digest to (pack, offset,
// length) and also records the blob's size and when it was written. Ids
// are 16 random bytes in hex, so writers need no lock and never collide.
// A blob's stored form is a zstd frame (with its checksum), or an age file
// of one, the same in a pack as loose. A pack starts "bspack\x00\x01" and
// ends with a trailer listing its blobs, so that it describes itself; an
// index is a header, a 256-entry fanout table, its packs' ids, 56-byte
// records sorted by digest, and a SHA-256 of all that. Packs and indexes
// are immutable: written to a temp file, synced and renamed (one object
// each on object storage), the pack before its index, and Commit returns
// only when both are durable. Readers map the index files (a local copy of
// each, for Cloud) and look a digest up by binary search; reading a blob is
// one ranged read of its pack.
//
// A blob put alone (Put), or in a commit of at most four to a Local store,
// is written loose, blobs/sha256/<2 hex>/<62 hex>: the first layout, which
// stays readable.
// Repack merges small packs and moves loose blobs into packs; Prune
// deletes the packs that hold only unreferenced old blobs and rewrites
// those whose unreferenced share is large. Neither takes a lock: a pack is
// deleted only after every copy kept from it is durable elsewhere.
package blobstore

import (
	"context"
	"errors"
	"time"
)

// ErrNotFound is matched (via [errors.Is]) by the error returned when a blob
// is not in the store.
var ErrNotFound = errors.New("blob not found")

// ErrCorrupt is matched (via [errors.Is]) by the error returned when a stored
// blob cannot be decoded or its bytes do not hash to its digest.
var ErrCorrupt = errors.New("blob corrupt")

// Store is a content-addressed blob store.
//
// Implementations are safe for concurrent use by multiple goroutines and by
// multiple processes sharing the same backing storage.
//
// Errors about a specific blob wrap [ErrNotFound] or [ErrCorrupt] where those
// apply, and their messages name the digest.
type Store interface {
	// Put stores data and returns its digest. When Put returns nil the blob
	// is durable. Identical data is stored once: a second Put of the same
	// bytes writes no data, but sees that retention, which deletes only
	// blobs older than the start of its sweep, cannot delete the blob a
	// writer has just relied on: it moves a loose blob's ModTime to the
	// time of the Put, and relies on a packed copy only while it is younger
	// than the grace period (Cloud.RefreshAfter, an hour), writing a fresh
	// copy otherwise; retention keeps a packed copy twice that long. Put
	// does not retain data after it returns.
	Put(ctx context.Context, data []byte) (Digest, error)

	// Get returns the blob's bytes, verifying their digest: a mismatch or
	// undecodable content is ErrCorrupt, never wrong bytes. A missing blob
	// is ErrNotFound. The returned slice belongs to the caller.
	Get(ctx context.Context, d Digest) ([]byte, error)

	// Has reports whether the blob is stored. It does not verify content.
	Has(ctx context.Context, d Digest) (bool, error)

	// Stat returns what the store knows of a blob without reading it: its
	// size as stored and when it was last written or re-Put. A missing
	// blob is ErrNotFound.
	Stat(ctx context.Context, d Digest) (Info, error)

	// List calls fn once per stored blob, in no particular order; an error
	// from fn stops the walk and is returned. Blobs put or deleted while
	// List runs may or may not be reported. fn may call other methods of the
	// store, including Delete.
	List(ctx context.Context, fn func(Digest) error) error

	// Delete removes a blob; deleting a missing blob is ErrNotFound.
	Delete(ctx context.Context, d Digest) error
}

// Info describes a stored blob.
type Info struct {
	// Size is the number of bytes the blob takes in the store (compressed,
	// and encrypted where the store encrypts), not the size of its data.
	Size int64
	// ModTime is when the blob was last written or re-Put.
	ModTime time.Time
}

// blobError is the error returned for a specific blob. Its message has the
// form "blob sha256:… not found" or "blob sha256:… corrupt: <detail>", and it
// matches kind (ErrNotFound or ErrCorrupt) and cause via errors.Is/As.
type blobError struct {
	d      Digest
	kind   error  // ErrNotFound or ErrCorrupt
	detail string // why the blob is corrupt; empty for not found
	cause  error  // underlying error, if any
}

func (e *blobError) Error() string {
	var what string
	switch e.kind {
	case ErrNotFound:
		what = "not found"
	case ErrCorrupt:
		what = "corrupt"
	case ErrNoIdentity:
		what = "cannot be decrypted"
	default:
		what = e.kind.Error()
	}
	msg := "blob " + e.d.String() + " " + what
	if e.detail != "" {
		msg += ": " + e.detail
	}
	return msg
}

func (e *blobError) Unwrap() []error {
	if e.cause == nil {
		return []error{e.kind}
	}
	return []error{e.kind, e.cause}
}

func notFound(d Digest, cause error) error {
	return &blobError{d: d, kind: ErrNotFound, cause: cause}
}

func corrupt(d Digest, detail string, cause error) error {
	return &blobError{d: d, kind: ErrCorrupt, detail: detail, cause: cause}
}
