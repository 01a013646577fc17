package blobstore

import (
	"context"
	"errors"
	"slices"
)

// looseTier is a store's loose blobs, one file (Local) or object (Cloud)
// each: the store's first layout, still read and still written for a blob
// put alone. The methods of packs below answer for a whole store, packed
// copies first.
type looseTier interface {
	getLoose(ctx context.Context, d Digest) ([]byte, error)
	hasLoose(ctx context.Context, d Digest) (bool, error)
	statLoose(ctx context.Context, d Digest) (Info, error)
	// statDataLoose is statLoose and the data's size, -1 if unknown
	// without reading the blob (see DataSizer).
	statDataLoose(ctx context.Context, d Digest) (Info, int64, error)
	listLoose(ctx context.Context, fn func(Digest) error) error
}

// refreshChanged lists the indexes again and reports whether the set
// changed: what a reader does before it calls a blob missing, since
// another process may have packed it, or repacked it, meanwhile.
func (p *packs) refreshChanged(ctx context.Context) (bool, error) {
	old := p.snap.Load()
	if err := p.refresh(ctx); err != nil {
		return false, err
	}
	return p.snap.Load() != old, nil // refresh keeps a snapshot of the same files
}

// getBlob is Store.Get over packs and lt.
func (p *packs) getBlob(ctx context.Context, lt looseTier, d Digest) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	data, err := p.get(ctx, d)
	if err == nil || ctx.Err() != nil {
		return data, err
	}
	data, lerr := lt.getLoose(ctx, d)
	if lerr == nil || !errors.Is(lerr, ErrNotFound) {
		return data, lerr
	}
	if !errors.Is(err, ErrNotFound) {
		return nil, err // only damaged packed copies
	}
	if changed, rerr := p.refreshChanged(ctx); rerr != nil {
		return nil, rerr
	} else if changed {
		return p.get(ctx, d)
	}
	return nil, lerr
}

// has is Store.Has over packs and lt.
func (p *packs) has(ctx context.Context, lt looseTier, d Digest) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if _, ok, err := p.newest(ctx, d); err != nil || ok {
		return ok, err
	}
	if ok, err := lt.hasLoose(ctx, d); err != nil || ok {
		return ok, err
	}
	if changed, err := p.refreshChanged(ctx); err != nil || !changed {
		return false, err
	}
	_, ok, err := p.newest(ctx, d)
	return ok, err
}

// stat is Store.Stat over packs and lt: the newest copy's size and time.
func (p *packs) stat(ctx context.Context, lt looseTier, d Digest) (Info, error) {
	if err := ctx.Err(); err != nil {
		return Info{}, err
	}
	for try := 0; ; try++ {
		e, ok, err := p.newest(ctx, d)
		if err != nil {
			return Info{}, err
		}
		li, lerr := lt.statLoose(ctx, d)
		if lerr != nil && !errors.Is(lerr, ErrNotFound) {
			return Info{}, lerr
		}
		switch {
		case ok && (lerr != nil || e.modTime().After(li.ModTime)):
			return Info{Size: int64(e.length), ModTime: e.modTime()}, nil
		case lerr == nil:
			return li, nil
		}
		if try > 0 {
			return Info{}, lerr
		}
		if changed, err := p.refreshChanged(ctx); err != nil {
			return Info{}, err
		} else if !changed {
			return Info{}, lerr
		}
	}
}

// sealed tells whether the newest packed copy of d is encrypted, and
// whether there is one, from the indexes alone (bs extract asks for every
// value it moves, so no pack is looked at).
func (p *packs) sealed(ctx context.Context, d Digest) (sealed, found bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, false, err
	}
	es, err := p.copies(ctx, d)
	if err != nil || len(es) == 0 {
		return false, false, err
	}
	return es[0].sealed, true, nil
}

// list is Store.List over packs and lt: each blob once, those with a
// copy in a pack that is there first, in digest order, then the loose
// ones not among them. It walks a snapshot, so fn may delete blobs.
func (p *packs) list(ctx context.Context, lt looseTier, fn func(Digest) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s, err := p.snapshot(ctx)
	if err != nil {
		return err
	}
	there := map[packID]bool{}
	packThere := func(id packID) (bool, error) {
		ok, seen := there[id]
		if !seen {
			var err error
			if ok, err = p.packThere(ctx, id); err != nil {
				return false, err
			}
			there[id] = ok
		}
		return ok, nil
	}
	var last Digest
	listed := false
	err = merged(s.files, func(e entry) error {
		if listed && e.d == last {
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		ok, err := packThere(e.pack)
		if err != nil || !ok {
			return err
		}
		last, listed = e.d, true
		return fn(e.d)
	})
	if err != nil {
		return err
	}
	return lt.listLoose(ctx, func(d Digest) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, e := range s.lookup(d) {
			if ok, err := packThere(e.pack); err != nil || ok {
				return err // listed with the packed ones
			}
		}
		return fn(d)
	})
}

// delete is Store.Delete over packs and a loose tier: the loose copy goes
// (deleteLoose), and every pack holding a copy is rewritten without it
// (drop). Deleting a blob that has neither is ErrNotFound.
func (p *packs) delete(ctx context.Context, d Digest, deleteLoose func(context.Context, Digest) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lerr := deleteLoose(ctx, d)
	if lerr != nil && !errors.Is(lerr, ErrNotFound) {
		return lerr
	}
	found, err := p.drop(ctx, []Digest{d})
	if err != nil {
		return err
	}
	if !slices.Contains(found, d) && lerr != nil {
		return lerr
	}
	return nil
}
