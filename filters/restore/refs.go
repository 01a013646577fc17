package restore

import (
	"fmt"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/transcript"
)

// RefKind says how a transcript line references a blob.
type RefKind uint8

const (
	// RefExtracted is a value extract, trim or roll removed: a member of
	// _extracted.
	RefExtracted RefKind = iota + 1
	// RefEvicted is a chunk of the lines bs roll evicted: _evicted.blobs.
	RefEvicted
	// RefArchived is a part of a holder transcript bs archive wrote:
	// _archived.blobs.
	RefArchived
)

func (k RefKind) String() string {
	switch k {
	case RefExtracted:
		return "extracted"
	case RefEvicted:
		return "evicted"
	case RefArchived:
		return "archived"
	}
	return "unknown"
}

// Ref is one blob a line references.
type Ref struct {
	Kind    RefKind
	Blob    blobstore.Digest
	Pointer string // RefExtracted: where the value stood in the entry
	Holder  string // RefArchived: the holder's id
}

// refError is a reference member bs wrote that is damaged, so the blobs it
// names cannot be told.
type refError struct {
	Field string
	Err   error
}

func (e *refError) Error() string { return fmt.Sprintf("damaged %s member: %v", e.Field, e.Err) }

func (e *refError) Unwrap() error { return e.Err }

// References calls fn, in order, for every blob the parsed line t
// references: the members of _extracted, the chunks of a roll marker's
// _evicted range, the parts of an archive marker's holder. It is the one
// reader of what a line points at in the store (retention marks with it,
// restore and index follow the same members). It does not read the
// store. A damaged member is a *refError, returned after fn has been
// called for the references read before it.
func References(t *transcript.Tree, fn func(Ref)) error {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return nil
	}
	if ex := t.Get(0, "_extracted"); ex >= 0 {
		if t.Nodes[ex].Kind != '{' {
			return &refError{Field: "_extracted", Err: fmt.Errorf("not an object")}
		}
		var bad error
		t.Children(ex, func(m, _ int) {
			if bad != nil {
				return
			}
			ptr := t.Key(m)
			d, err := blobstore.ParseDigest(t.Str(t.Get(m, "blob")))
			if err != nil {
				bad = fmt.Errorf("%s: %w", ptr, err)
				return
			}
			fn(Ref{Kind: RefExtracted, Blob: d, Pointer: ptr})
		})
		if bad != nil {
			return &refError{Field: "_extracted", Err: bad}
		}
	}
	if ev := t.Get(0, transcript.EvictedField); ev >= 0 {
		digests, err := evictedBlobs(t, ev)
		if err != nil {
			return &refError{Field: transcript.EvictedField, Err: err}
		}
		for _, d := range digests {
			fn(Ref{Kind: RefEvicted, Blob: d})
		}
	}
	m, ok, err := archive.ParseMarker(t)
	if err != nil {
		return &refError{Field: transcript.ArchivedField, Err: err}
	}
	if ok {
		for _, d := range m.Blobs {
			fn(Ref{Kind: RefArchived, Blob: d, Holder: m.ID})
		}
	}
	return nil
}

// evictedBlobs reads the blobs member of a roll marker's _evicted, node ev.
func evictedBlobs(t *transcript.Tree, ev int) ([]blobstore.Digest, error) {
	blobs := t.Get(ev, "blobs")
	if blobs < 0 || t.Nodes[blobs].Kind != '[' || t.Nodes[blobs].First < 0 {
		return nil, fmt.Errorf("no blobs")
	}
	var digests []blobstore.Digest
	var bad error
	t.Children(blobs, func(c, _ int) {
		d, err := blobstore.ParseDigest(t.Str(c))
		if err != nil && bad == nil {
			bad = err
		}
		digests = append(digests, d)
	})
	return digests, bad
}
