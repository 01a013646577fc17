package blobstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"
)

// Hooks for the pack tests of the conformance harnesses, in package
// blobstore_test. They work through the pack layer, so they serve Local,
// Cloud and a Cache over one alike.

func packsOf(s Store) (*packs, error) {
	if l, ok := s.(layered); ok {
		if p, _ := l.layers(); p != nil {
			return p, nil
		}
	}
	return nil, errors.New("the store keeps no packs")
}

// AgePacked moves the time of every packed copy in s back by by: every
// index file is written again with its records' times moved.
func AgePacked(ctx context.Context, s Store, by time.Duration) error {
	return rewriteIndexes(ctx, s, func(es []entry) []byte {
		for i := range es {
			es[i].time -= by.Nanoseconds()
		}
		return encodeIndex(es)
	})
}

// FirstIndexLayout writes every index file of s again in the first index
// layout ("bsindex\x01", records without a CRC), as bs wrote them before
// index records carried one.
func FirstIndexLayout(ctx context.Context, s Store) error {
	return rewriteIndexes(ctx, s, func(es []entry) []byte { return firstLayout(encodeIndex(es)) })
}

// rewriteIndexes replaces every index file of s by encode of its records.
func rewriteIndexes(ctx context.Context, s Store, encode func([]entry) []byte) error {
	p, err := packsOf(s)
	if err != nil {
		return err
	}
	if err := p.refresh(ctx); err != nil {
		return err
	}
	for _, f := range p.snap.Load().files {
		var es []entry
		for i := range f.n {
			e, err := f.record(i)
			if err != nil {
				return err
			}
			es = append(es, e)
		}
		g, err := p.writeIndex(ctx, encode(es))
		if err == nil {
			err = p.adopt(ctx, g, f.id)
		}
		if err != nil {
			return err
		}
		if err := p.be.deleteIndex(ctx, f.id); err != nil {
			return err
		}
	}
	return nil
}

// DamagePacked flips one byte in the middle of the stored form of every
// packed copy of d, writing its pack again under the same name.
func DamagePacked(ctx context.Context, s Store, d Digest) error {
	p, err := packsOf(s)
	if err != nil {
		return err
	}
	es, err := p.copies(ctx, d)
	if err != nil {
		return err
	}
	if len(es) == 0 {
		return fmt.Errorf("no packed copy of %s", d)
	}
	for _, e := range es {
		pf, err := p.be.statPack(ctx, e.pack)
		if err != nil {
			return err
		}
		b, err := p.be.readPack(ctx, e.pack, 0, int(pf.size), nil)
		if err != nil {
			return err
		}
		b[int(e.off)+int(e.length)/2] ^= 0x55
		tmp, err := p.be.createTemp()
		if err != nil {
			return err
		}
		if _, err := tmp.Write(b); err != nil {
			return err
		}
		if lp, ok := p.be.(*localPacks); ok {
			lp.deletePack(ctx, e.pack) // drop the open file, so reads see the new one
		}
		if err := p.be.publishPack(ctx, e.pack, tmp); err != nil {
			return err
		}
	}
	return p.be.syncPacks(ctx)
}

// DropIndexes deletes every index file of s, leaving its packs named by
// none, as a writer killed between its pack and its index would.
func DropIndexes(ctx context.Context, s Store) error {
	p, err := packsOf(s)
	if err != nil {
		return err
	}
	ids, err := p.be.listIndexes(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := p.be.deleteIndex(ctx, id); err != nil {
			return err
		}
	}
	return p.refresh(ctx)
}

// DropPacks deletes every pack of s, leaving indexes that name packs
// that are gone.
func DropPacks(ctx context.Context, s Store) error {
	p, err := packsOf(s)
	if err != nil {
		return err
	}
	return p.be.listPacks(ctx, func(pf packFile) error { return p.be.deletePack(ctx, pf.id) })
}

// AgePackFiles moves the modification time of every pack file of a
// local store back by by (object stores cannot be told to).
func AgePackFiles(s Store, by time.Duration) error {
	p, err := packsOf(s)
	if err != nil {
		return err
	}
	lp, ok := p.be.(*localPacks)
	if !ok {
		return errors.New("not a local store")
	}
	all, err := ids(lp.dir, packSuffix)
	if err != nil {
		return err
	}
	for _, id := range all {
		fi, err := os.Stat(lp.packPath(id))
		if err != nil {
			return err
		}
		if err := os.Chtimes(lp.packPath(id), time.Time{}, fi.ModTime().Add(-by)); err != nil {
			return err
		}
	}
	return nil
}
