package blobstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

const (
	// cloudPrefix is where blobs live in a bucket, the layout of DESIGN
	// §4: blobs/sha256/<2 hex>/<62 hex>.
	cloudPrefix = "blobs/sha256/"

	// sizeMetaKey is the object metadata holding a blob's uncompressed
	// size, so stats need not download it. (gocloud lowercases keys.)
	sizeMetaKey = "bs-size"

	// DefaultRefreshAfter is how old an object must be before a Put of
	// the same data rewrites it so that its ModTime moves forward.
	DefaultRefreshAfter = time.Hour
)

// Cloud is a [Store] in a bucket of object storage, reached through
// gocloud.dev/blob: S3 and S3-compatible servers, Google Cloud Storage,
// Azure Blob Storage, a directory (fileblob) or memory (memblob).
//
// Objects are named blobs/sha256/<2 hex>/<62 hex> after the SHA-256 of the
// blob's data and hold its zstd compression, age-encrypted when the store
// has recipients; object metadata bs-size holds the data's size. Put is
// put-if-absent: it writes with the service's if-none-match condition
// (one request for a new blob, the common case in bs extract), so
// concurrent writers of the same blob from any number of hosts leave one
// object. Get verifies the digest of what it decodes.
//
// A Put of data already stored reads the object back (one request) and
// checks it as Get does; a damaged object is overwritten with the new
// one. An object encrypted to none of the store's identities (a writer
// holding only recipients) cannot be checked and is kept as it is.
//
// Object stores have no cheap way to touch an object's modification
// time. A Put of data already stored therefore leaves an intact object
// alone when it was written less than RefreshAfter (default one hour) ago
// and otherwise writes its stored bytes back unchanged, so that its
// ModTime moves forward: the refresh never re-encrypts the object to the
// current writer's recipients, nor stores it in plain. Retention
// that only deletes blobs older than its sweep and older than RefreshAfter
// is thus never fooled; bs prune-retention's ages are days.
//
// Every call to the service is retried with exponential backoff
// (100 ms doubling, at most 4 attempts) on transient errors: 5xx and 429
// responses, timeouts, refused and reset connections. After a call has
// failed to reach the service at all, further calls fail at once for a
// few seconds, so that a run against a stopped server ends quickly
// instead of waiting out the backoff for every blob.
type Cloud struct {
	b     *blob.Bucket
	desc  string
	enc   *encoders
	dec   *zstd.Decoder
	crypt *crypter
	retry retrier
	packs *packs

	refreshAfter time.Duration
	closeBucket  bool
}

var _ Store = (*Cloud)(nil)

// CloudOptions configures [NewCloud].
type CloudOptions struct {
	// Name describes the bucket in error messages, e.g. its URL.
	Name string
	// Recipients are age recipients (age1…); when given, Put encrypts.
	Recipients []string
	// IdentityFiles are age identity files Get decrypts with.
	IdentityFiles []string
	// RefreshAfter overrides DefaultRefreshAfter (see Cloud).
	RefreshAfter time.Duration
	// CloseBucket makes Close close the bucket.
	CloseBucket bool
	// IndexCache is the directory index files are cached in (see
	// DefaultIndexCache); "" keeps them in memory only.
	IndexCache string
}

// NewCloud returns a store in bucket b.
func NewCloud(b *blob.Bucket, opt CloudOptions) (*Cloud, error) {
	crypt, err := newCrypter(opt.Recipients, opt.IdentityFiles)
	if err != nil {
		return nil, err
	}
	enc, dec, err := newCodec()
	if err != nil {
		return nil, err
	}
	c := &Cloud{b: b, desc: opt.Name, enc: enc, dec: dec, crypt: crypt, refreshAfter: opt.RefreshAfter,
		retry: newRetrier(), closeBucket: opt.CloseBucket}
	if c.desc == "" {
		c.desc = "bucket"
	}
	if c.refreshAfter <= 0 {
		c.refreshAfter = DefaultRefreshAfter
	}
	c.packs = newPacks(&cloudPackStore{c: c, cache: opt.IndexCache}, dec, c.refreshAfter)
	c.packs.crypt = crypt
	return c, nil
}

// Close releases the bucket, if the store owns it.
func (c *Cloud) Close() error {
	if c.closeBucket {
		return c.b.Close()
	}
	return nil
}

// Remote reports that the store is reached over the network, where more
// requests in flight mean more throughput.
func (c *Cloud) Remote() bool { return true }

func key(d Digest) string {
	h := d.Hex()
	return cloudPrefix + h[:shardLen] + "/" + h[shardLen:]
}

// parseKey is the digest of a key under cloudPrefix, or false.
func parseKey(k string) (Digest, bool) {
	rest, ok := strings.CutPrefix(k, cloudPrefix)
	if !ok || len(rest) != shardLen+1+nameLen || rest[shardLen] != '/' {
		return Digest{}, false
	}
	if !isShardName(rest[:shardLen]) || !isBlobName(rest[shardLen+1:]) {
		return Digest{}, false
	}
	d, err := parseHex(rest[:shardLen] + rest[shardLen+1:])
	return d, err == nil
}

func isNotFound(err error) bool { return gcerrors.Code(err) == gcerrors.NotFound }

// wrap adds the bucket's name to an error from the service.
func (c *Cloud) wrap(op string, d Digest, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s blob %s: %w", op, d, c.cause(err))
}

// cause names the store in an error from the service and, when the
// service could not be reached, keeps only the network error, which says
// what went wrong (connection refused, no such host) better than the
// layers of SDK text around it.
func (c *Cloud) cause(err error) error {
	var op *net.OpError
	if unreachable(err) && errors.As(err, &op) {
		return fmt.Errorf("cannot reach %s: %w", c.desc, op)
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return fmt.Errorf("cannot reach %s: %w", c.desc, dns)
	}
	return fmt.Errorf("%s: %w", c.desc, err)
}

// Put implements [Store.Put]. See Cloud for how it deduplicates and
// moves ModTime.
func (c *Cloud) Put(ctx context.Context, data []byte) (Digest, error) {
	if err := ctx.Err(); err != nil {
		return Digest{}, err
	}
	if len(data) > maxBlobSize {
		return Digest{}, fmt.Errorf("put blob: %d bytes exceeds the limit of %d", len(data), maxBlobSize)
	}
	d := Sum(data)
	if ok, err := c.packs.reuse(ctx, d, data); err != nil {
		return Digest{}, fmt.Errorf("put blob %s: %w", d, err)
	} else if ok {
		return d, nil
	}
	stored, err := c.crypt.seal(c.enc.compress(data, nil))
	if err != nil {
		return Digest{}, fmt.Errorf("put blob %s: %w", d, err)
	}
	if err := ctx.Err(); err != nil {
		return Digest{}, err
	}
	err = c.write(ctx, d, stored, len(data), true)
	if gcerrors.Code(err) != gcerrors.FailedPrecondition {
		if err != nil {
			return Digest{}, c.wrap("put", d, err)
		}
		return d, nil
	}
	// Stored already, by us or another writer. Read it (one request) and
	// check it against data, as Local does: a damaged object is replaced
	// by this one.
	old, mtime, err := c.readObject(ctx, d)
	switch {
	case errors.Is(err, ErrNotFound):
		// Deleted since; store it again.
	case errors.Is(err, ErrCorrupt):
		// Damaged beyond reading it back: replace it.
	case err != nil:
		return Digest{}, err
	default:
		switch _, err := holds(c.dec, c.crypt, d, old, data, nil); {
		case err == nil, errors.Is(err, ErrNoIdentity):
			// Intact, or encrypted to keys this writer does not hold: a
			// writer with only recipients cannot vouch for it, so it is
			// kept. If it is old enough for retention to care, write its
			// bytes back unchanged (never re-sealed with this writer's
			// recipients, or lack of them) so that its ModTime moves.
			if time.Since(mtime) < c.refreshAfter {
				return d, nil
			}
			stored = old
		case errors.Is(err, ErrCorrupt):
			// Damaged: replace it with this writer's form.
		default:
			return Digest{}, err
		}
	}
	if err := c.write(ctx, d, stored, len(data), false); err != nil {
		return Digest{}, c.wrap("put", d, err)
	}
	return d, nil
}

// write uploads a blob's stored form, only if no object has its name when
// ifNotExist is set (then an existing object is FailedPrecondition).
func (c *Cloud) write(ctx context.Context, d Digest, stored []byte, size int, ifNotExist bool) error {
	// Upload hands the driver the bytes as they are (WriteAll would pipe
	// them through a goroutine). No ContentMD5: S3 ignores it, and every
	// read checks the digest anyway.
	opts := &blob.WriterOptions{
		ContentType:                 "application/octet-stream",
		DisableContentTypeDetection: true,
		Metadata:                    map[string]string{sizeMetaKey: strconv.Itoa(size)},
		IfNotExist:                  ifNotExist,
	}
	return c.retry.do(ctx, func(ctx context.Context) error {
		return c.b.Upload(ctx, key(d), bytes.NewReader(stored), opts)
	})
}

func (c *Cloud) attributes(ctx context.Context, d Digest) (*blob.Attributes, error) {
	var attrs *blob.Attributes
	err := c.retry.do(ctx, func(ctx context.Context) error {
		var err error
		attrs, err = c.b.Attributes(ctx, key(d))
		return err
	})
	return attrs, err
}

// Get implements [Store.Get]: a ranged GET of a packed copy, else the
// loose object.
func (c *Cloud) Get(ctx context.Context, d Digest) ([]byte, error) {
	return c.packs.getBlob(ctx, c, d)
}

func (c *Cloud) getLoose(ctx context.Context, d Digest) ([]byte, error) {
	stored, _, err := c.readObject(ctx, d)
	if err != nil {
		return nil, err
	}
	return decodeStored(c.dec, c.crypt, d, stored)
}

// readObject returns a blob's stored form and the object's ModTime.
func (c *Cloud) readObject(ctx context.Context, d Digest) ([]byte, time.Time, error) {
	var stored []byte
	var mtime time.Time
	inBody := false // the error is the body's, not the object's metadata's
	err := c.retry.do(ctx, func(ctx context.Context) error {
		inBody = false
		r, err := c.b.NewReader(ctx, key(d), nil)
		if err != nil {
			return err
		}
		defer r.Close()
		inBody = true
		mtime = r.ModTime()
		var buf bytes.Buffer
		if n := r.Size(); n > 0 && n <= maxCompressedSize {
			buf.Grow(int(n))
		}
		if _, err := buf.ReadFrom(io.LimitReader(r, maxCompressedSize+1)); err != nil {
			return err
		}
		stored = buf.Bytes()
		return nil
	})
	if isNotFound(err) {
		return nil, mtime, notFound(d, err)
	}
	if err != nil && inBody {
		return nil, mtime, c.wrap("get", d, err)
	}
	if err != nil {
		return nil, mtime, c.objectErr("get", d, err)
	}
	if len(stored) > maxCompressedSize {
		return nil, mtime, corrupt(d, "object too large", nil)
	}
	return stored, mtime, nil
}

// objectErr is c.wrap's error, or ErrCorrupt when the service could read
// the object's own bookkeeping (fileblob's .attrs sidecar) but not
// parse it: that blob is damaged, the store is not.
func (c *Cloud) objectErr(op string, d Digest, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return corrupt(d, "damaged object attributes: "+err.Error(), err)
	}
	return c.wrap(op, d, err)
}

// SealedAfterPut implements [Sealer]: PutPending relies on a packed copy
// or writes one (PutPending), which readers find before a loose object.
func (c *Cloud) SealedAfterPut(ctx context.Context, d Digest) (bool, error) {
	if sealed, found, err := c.packs.sealed(ctx, d); err != nil || found {
		return sealed, err
	}
	return c.crypt.encrypts(), nil
}

// Has implements [Store.Has].
func (c *Cloud) Has(ctx context.Context, d Digest) (bool, error) {
	return c.packs.has(ctx, c, d)
}

func (c *Cloud) hasLoose(ctx context.Context, d Digest) (bool, error) {
	var ok bool
	err := c.retry.do(ctx, func(ctx context.Context) error {
		var err error
		ok, err = c.b.Exists(ctx, key(d))
		return err
	})
	if err != nil {
		return false, c.objectErr("stat", d, err)
	}
	return ok, nil
}

// Stat implements [Store.Stat]: the newest copy's; Size is the packed
// copy's length or the loose object's size.
func (c *Cloud) Stat(ctx context.Context, d Digest) (Info, error) {
	return c.packs.stat(ctx, c, d)
}

func (c *Cloud) statLoose(ctx context.Context, d Digest) (Info, error) {
	info, _, err := c.statDataLoose(ctx, d)
	return info, err
}

// StatData implements [DataSizer]: a packed copy's index records its
// size; a loose object's attributes, one request, hold it in their
// metadata (-1 for an object written without it).
func (c *Cloud) StatData(ctx context.Context, d Digest) (Info, int64, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, 0, err
	}
	if e, ok, err := c.packs.newest(ctx, d); err != nil || ok {
		return Info{Size: int64(e.length), ModTime: e.modTime()}, e.dataSize(), err
	}
	return c.statDataLoose(ctx, d)
}

func (c *Cloud) statDataLoose(ctx context.Context, d Digest) (Info, int64, error) {
	attrs, err := c.attributes(ctx, d)
	if isNotFound(err) {
		return Info{}, 0, notFound(d, err)
	}
	if err != nil {
		return Info{}, 0, c.objectErr("stat", d, err)
	}
	n, err := strconv.ParseInt(attrs.Metadata[sizeMetaKey], 10, 64)
	if err != nil || n < 0 {
		n = -1
	}
	return Info{Size: attrs.Size, ModTime: attrs.ModTime}, n, nil
}

// List implements [Store.List]: the packed blobs, then the loose ones.
func (c *Cloud) List(ctx context.Context, fn func(Digest) error) error {
	return c.packs.list(ctx, c, fn)
}

// listLoose reports the loose objects, a page of 1000 keys at a time;
// keys that are not blob names are ignored.
func (c *Cloud) listLoose(ctx context.Context, fn func(Digest) error) error {
	err := c.listKeys(ctx, cloudPrefix, func(o *blob.ListObject) error {
		d, ok := parseKey(o.Key)
		if !ok || o.IsDir {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		return fn(d)
	})
	var le *listError
	if errors.As(err, &le) {
		return fmt.Errorf("list blobs: %w", le.err)
	}
	return err
}

// listError is an error of the service while listing, as opposed to
// one of the function called for each key.
type listError struct{ err error }

func (e *listError) Error() string { return e.err.Error() }
func (e *listError) Unwrap() error { return e.err }

// listKeys calls fn for each object under prefix, a page of 1000 keys
// at a time. An error of the service is a *listError.
func (c *Cloud) listKeys(ctx context.Context, prefix string, fn func(*blob.ListObject) error) error {
	token := blob.FirstPageToken
	for {
		var objs []*blob.ListObject
		var next []byte
		var err error
		for try := 0; try < 5; try++ {
			err = c.retry.do(ctx, func(ctx context.Context) error {
				var err error
				objs, next, err = c.b.ListPage(ctx, token, 1000, &blob.ListOptions{Prefix: prefix})
				return err
			})
			// fileblob reports NotFound when a file it is listing is
			// renamed away meanwhile (another writer's temp file): the
			// listing, not the bucket, is at fault, so list again.
			if !isNotFound(err) {
				break
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &listError{c.cause(err)}
		}
		for _, o := range objs {
			if err := fn(o); err != nil {
				return err
			}
		}
		if len(next) == 0 {
			return nil
		}
		token = next
	}
}

// Delete implements [Store.Delete]: the loose object goes, and every
// pack holding the blob is rewritten without it.
func (c *Cloud) Delete(ctx context.Context, d Digest) error {
	return c.packs.delete(ctx, d, c.deleteLoose)
}

func (c *Cloud) deleteLoose(ctx context.Context, d Digest) error {
	// Many services report success for deleting a missing object; look
	// first so a missing blob is ErrNotFound everywhere.
	// An object whose attributes are damaged is there all the same.
	ok, err := c.hasLoose(ctx, d)
	if err != nil && !errors.Is(err, ErrCorrupt) {
		return err
	}
	if !ok && err == nil {
		return notFound(d, nil)
	}
	err = c.retry.do(ctx, func(ctx context.Context) error { return c.b.Delete(ctx, key(d)) })
	if isNotFound(err) {
		return notFound(d, err)
	}
	if err != nil {
		return c.wrap("delete", d, err)
	}
	return nil
}
