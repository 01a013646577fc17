package retention

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/internal/par"
)

// Item is a blob or a file that went, or would go under a dry run.
type Item struct {
	Name  string `json:"name"`  // "sha256:<hex>" for a blob, else the file's path
	Bytes int64  `json:"bytes"` // as stored
}

// SweepOptions configure Sweep.
type SweepOptions struct {
	// Cutoff: an unmarked blob last written before it goes. Take it
	// before the mark begins (start - retention), so that whatever is
	// written or re-Put from then on stays.
	Cutoff  time.Time
	DryRun  bool // list what would go, delete nothing
	Workers int  // concurrent Stat and Delete calls (default 16)
	// RewriteAbove: in a store that keeps packs, a pack whose share of
	// unreferenced old bytes is above it is rewritten without them (0:
	// blobstore.DefaultRewriteAbove); one holding nothing else goes.
	RewriteAbove float64
	// Progress, if set, is told how far each phase got: "list" counts
	// the blobs listed (total unknown, -1), "sweep" the unmarked blobs
	// looked at out of total.
	Progress func(phase string, done, total int)
}

// SweepResult says what a sweep did.
type SweepResult struct {
	Listed     int    // blobs in the store
	Referenced int    // of them marked, kept whatever their age
	Recent     int    // unmarked, but written at or after the cutoff: kept
	Removed    []Item // deleted (or, under DryRun, to be), sorted by name
	Bytes      int64  // their stored size
	// Packs is what the sweep did to the packs of a store that keeps them.
	Packs *PackSweep
}

// PackSweep is what a sweep did to the packs of a store that keeps them.
type PackSweep struct {
	Deleted   int   `json:"deleted"`   // packs that held nothing referenced or recent
	Rewritten int   `json:"rewritten"` // packs rewritten without their unreferenced blobs
	Freed     int64 `json:"freed"`     // bytes of packs and loose files deleted, less those written
	// LeftBlobs and LeftBytes are the unreferenced old blobs left in packs
	// whose unreferenced share is below the threshold.
	LeftBlobs int   `json:"left_blobs"`
	LeftBytes int64 `json:"left_bytes"`
	// Damaged counts copies that did not read back intact: their packs
	// were left as they are (bs store verify names them).
	Damaged int `json:"damaged"`
}

// Sweep deletes the blobs of store that marks does not reference and that
// were last written before opt.Cutoff. Each is Stat-ed just before its
// Delete, after the listing, and kept if it became newer meanwhile (a
// writer re-used it) or is gone (another sweep). A store that is a
// blobstore.BatchDeleter deletes without a sync per blob and syncs once at
// the end. Failures to delete one blob do not stop the others; they are
// returned, joined, at the end.
//
// A store that keeps packs (a blobstore.Packer) is pruned by packs
// instead (see blobstore.PruneOptions): a pack holding nothing referenced
// or recent is deleted, one whose unreferenced share is above
// opt.RewriteAbove is rewritten without those blobs, and a packed copy is
// kept at least twice the store's grace period, whatever the cutoff.
func Sweep(ctx context.Context, store blobstore.Store, marks *Marks, opt SweepOptions) (SweepResult, error) {
	if pk, ok := store.(blobstore.Packer); ok {
		return sweepPacks(ctx, pk, marks, opt)
	}
	var res SweepResult
	workers := opt.Workers
	if workers < 1 {
		workers = 16
	}
	progress := opt.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	var unmarked []blobstore.Digest
	err := store.List(ctx, func(d blobstore.Digest) error {
		res.Listed++
		if marks.Blob(d) {
			res.Referenced++
		} else {
			unmarked = append(unmarked, d)
		}
		if res.Listed%4096 == 0 {
			progress("list", res.Listed, -1)
		}
		return nil
	})
	if err != nil {
		return res, err
	}
	// Each unmarked blob is looked at just before it is deleted: one
	// re-used (re-Put) since the mark began is newer than the cutoff.
	const (
		vanished = iota
		recent
		old
		removed
	)
	infos := make([]blobstore.Info, len(unmarked))
	state := make([]uint8, len(unmarked))
	del := store.Delete
	bd, batched := store.(blobstore.BatchDeleter)
	if batched {
		del = bd.DeleteUnsynced // one directory sync per shard, at the end
	}
	var done atomic.Int64
	var mu sync.Mutex
	var errs []error
	err = par.Each(ctx, len(unmarked), workers, func(i int) error {
		defer func() {
			if n := int(done.Add(1)); n%1024 == 0 {
				progress("sweep", n, len(unmarked))
			}
		}()
		info, err := store.Stat(ctx, unmarked[i])
		switch {
		case errors.Is(err, blobstore.ErrNotFound):
			return nil // gone since the listing
		case err != nil:
			return err
		case !info.ModTime.Before(opt.Cutoff):
			state[i] = recent
			return nil
		}
		infos[i], state[i] = info, old
		if opt.DryRun {
			return nil
		}
		err = del(ctx, unmarked[i])
		switch {
		case err == nil:
			state[i] = removed
		case errors.Is(err, blobstore.ErrNotFound):
			state[i] = vanished
		default:
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		}
		return nil
	})
	if batched && !opt.DryRun {
		if serr := bd.SyncDeletes(ctx); serr != nil {
			errs = append(errs, serr)
		}
	}
	progress("sweep", len(unmarked), len(unmarked))
	for i, d := range unmarked {
		switch {
		case state[i] == removed || opt.DryRun && state[i] == old:
			res.Removed = append(res.Removed, Item{Name: d.String(), Bytes: infos[i].Size})
			res.Bytes += infos[i].Size
		case state[i] == recent:
			res.Recent++
		}
	}
	slices.SortFunc(res.Removed, func(a, b Item) int { return strings.Compare(a.Name, b.Name) })
	if err != nil {
		errs = append([]error{err}, errs...)
	}
	return res, errors.Join(errs...)
}

// sweepPacks is Sweep over a store that keeps packs.
func sweepPacks(ctx context.Context, store blobstore.Packer, marks *Marks, opt SweepOptions) (SweepResult, error) {
	pr, err := store.Prune(ctx, blobstore.PruneOptions{Keep: marks.Blob, Cutoff: opt.Cutoff, RewriteAbove: opt.RewriteAbove, DryRun: opt.DryRun, Progress: opt.Progress})
	res := SweepResult{Listed: pr.Listed, Referenced: pr.Referenced, Recent: pr.Recent, Bytes: pr.Bytes,
		Packs: &PackSweep{Deleted: pr.PacksDeleted, Rewritten: pr.PacksRewritten, Freed: pr.Freed,
			LeftBlobs: pr.LeftDead, LeftBytes: pr.LeftDeadBytes, Damaged: len(pr.Damaged)}}
	for _, r := range pr.Removed {
		res.Removed = append(res.Removed, Item{Name: r.Digest.String(), Bytes: r.Bytes})
	}
	return res, err
}

// Holders deletes the holder files (<id>.jsonl, as bs archive --holders
// writes them) in dir whose id marks does not reference and that were last
// modified before cutoff. Only a file named exactly like a holder id is
// considered, and never one of sessions, the transcripts the mark read
// (dir may hold live sessions too). A missing dir holds nothing.
func Holders(dir string, marks *Marks, sessions []string, cutoff time.Time, dryRun bool) ([]Item, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var live []os.FileInfo
	for _, p := range sessions {
		if info, err := os.Stat(p); err == nil {
			live = append(live, info)
		}
	}
	var out []Item
	var errs []error
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".jsonl")
		if !ok || !isHolderID(id) || !de.Type().IsRegular() || marks.Holder(id) {
			continue
		}
		path := filepath.Join(dir, de.Name())
		info, err := os.Lstat(path)
		if err != nil || !info.Mode().IsRegular() || !info.ModTime().Before(cutoff) {
			continue
		}
		if slices.ContainsFunc(live, func(l os.FileInfo) bool { return os.SameFile(l, info) }) {
			continue // read as a live session
		}
		if !dryRun {
			if err := os.Remove(path); err != nil {
				if !errors.Is(err, fs.ErrNotExist) {
					errs = append(errs, err)
				}
				continue
			}
		}
		out = append(out, Item{Name: path, Bytes: info.Size()})
	}
	return out, errors.Join(errs...)
}

// holderIDLen is the length of a holder id: bs archive (filters/archive)
// names a holder by the first 8 bytes of a SHA-256, in lowercase hex.
const holderIDLen = 16

// isHolderID reports whether id is shaped like the id bs archive gives a
// holder: 16 lowercase hexadecimal digits.
func isHolderID(id string) bool {
	if len(id) != holderIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		if c := id[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Checkpoints deletes, for every session key of d, the checkpoints beyond
// the newest keep (keep 0 keeps all), as bs checkpoint --keep does after
// each write.
func Checkpoints(d checkpoint.Dir, keep int, dryRun bool) ([]Item, error) {
	if keep <= 0 {
		return nil, nil
	}
	keys, err := d.Keys()
	if err != nil {
		return nil, err
	}
	var out []Item
	var errs []error
	for _, key := range keys {
		// Each file's size is taken before it goes.
		items := func(es []checkpoint.Entry) []Item {
			var its []Item
			for _, e := range es {
				its = append(its, Item{Name: e.Path, Bytes: fileSize(e.Path)})
			}
			return its
		}
		var err error
		if dryRun {
			var excess []checkpoint.Entry
			excess, err = d.Excess(key, keep)
			out = append(out, items(excess)...)
		} else {
			err = d.Locked(key, func() error {
				excess, err := d.Excess(key, keep)
				if err != nil {
					return err
				}
				its := items(excess)
				removed, err := checkpoint.Remove(excess)
				for _, it := range its {
					if slices.ContainsFunc(removed, func(e checkpoint.Entry) bool { return e.Path == it.Name }) {
						out = append(out, it)
					}
				}
				return err
			})
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return out, errors.Join(errs...)
}

func fileSize(path string) int64 {
	info, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return info.Size()
}
