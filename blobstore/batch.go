package blobstore

import "context"

// Batcher is implemented by stores that can make many new blobs durable
// with one sync instead of one per blob. On a local disk an fsync costs a
// few hundred microseconds and a transcript holds about a hundred large
// values per megabyte, so per-blob syncs, not compression, would set the
// speed of bs extract.
//
// A pending blob is invisible to Has, Get and List until Commit returns:
// what a reader can see is always durable, and a crash before Commit
// leaves nothing behind but temp files the store cleans up.
type Batcher interface {
	Store
	// PutPending stores data, whose digest the caller has computed as d,
	// so that it becomes visible and durable at the next Commit. Data
	// already stored or already pending is not written again.
	// PutPending does not retain data after it returns.
	PutPending(ctx context.Context, d Digest, data []byte) error
	// Commit makes every blob pending when it is called durable and
	// visible.
	Commit(ctx context.Context) error
}

// Sealer is a store that tells whether a blob is stored encrypted without
// reading it. A blob an encrypting run stored stays encrypted when a run
// that does not encrypt puts the same bytes again, and only an identity
// reads it back.
type Sealer interface {
	// SealedAfterPut reports whether the copy of d that a reader finds
	// first will be encrypted once a PutPending of d by this store is
	// committed: the copy already there that PutPending relies on (its
	// newest packed one, as its index records; for Local, else its loose
	// file, from its first bytes; Cloud's PutPending relies on no loose
	// object, so the bucket is not asked), else the one it writes.
	SealedAfterPut(ctx context.Context, d Digest) (bool, error)
}

// Packer is a store that keeps blobs in packs (Local, Cloud, and a Cache
// over a Cloud store): it can consolidate them and prune them by packs.
type Packer interface {
	Store
	// Repack merges small packs and moves loose blobs into packs.
	Repack(ctx context.Context, opt RepackOptions) (RepackResult, error)
	// Prune deletes the blobs opt.Keep does not reference that are older
	// than opt.Cutoff, by deleting and rewriting packs.
	Prune(ctx context.Context, opt PruneOptions) (PruneResult, error)
}

var (
	_ Packer  = (*Local)(nil)
	_ Packer  = (*Cloud)(nil)
	_ Packer  = (*Cache)(nil)
	_ Batcher = (*Cache)(nil)
)
