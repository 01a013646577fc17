package retention

import (
	"context"
	"errors"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
)

// Options say what Prune deletes, and whom it tells how far it got.
type Options struct {
	// SweepOptions are the blobs' (Cutoff, DryRun, RewriteAbove and the
	// sweep's Progress); Cutoff and DryRun hold for holder files and
	// checkpoints too.
	SweepOptions
	Keep        int            // the newest checkpoints kept of each session key; 0 keeps all
	Checkpoints checkpoint.Dir // where the checkpoints are
	Holders     string         // the directory of archive holder files; "" leaves them
	// Marked, if set, is told of each transcript once it is marked.
	Marked func(i int, path string, sc Scan)
}

// Result is what Prune did, or under DryRun would do.
type Result struct {
	Report Report
	Items  []Item // everything deleted: the blobs, then checkpoints, then holder files
}

// Blobs are the blobs of r.Items.
func (r Result) Blobs() []Item { return r.Items[:r.Report.Blobs.Deleted] }

// MarkError is a transcript Prune could not mark (Path, "" when the run
// was stopped first): it deleted nothing.
type MarkError struct {
	Path string
	Err  error
}

func (e *MarkError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *MarkError) Unwrap() error { return e.Err }

// Prune deletes what the live transcripts files leave unreferenced: the
// blobs of store last written before the cutoff, the checkpoints beyond
// the newest Keep of each key, and the holder files nothing names. It
// marks every transcript first, and deletes nothing when one cannot be
// marked (a *MarkError): a reference it could not read may name anything.
// A sweep that fails does not stop the others; their errors come back
// joined, beside the Result of what was done. A ctx done during the
// blobs' sweep stops the run there.
func Prune(ctx context.Context, store blobstore.Store, files []string, opt Options) (Result, error) {
	marks := NewMarks(store)
	if path, err := marks.Files(ctx, files, opt.Marked); err != nil {
		return Result{}, &MarkError{Path: path, Err: err}
	}
	swept, sweepErr := Sweep(ctx, store, marks, opt.SweepOptions)
	if sweepErr != nil && ctx.Err() != nil {
		return Result{}, sweepErr
	}
	cps, cpErr := Checkpoints(opt.Checkpoints, opt.Keep, opt.DryRun)
	var holders []Item
	var hErr error
	if opt.Holders != "" {
		holders, hErr = Holders(opt.Holders, marks, files, opt.Cutoff, opt.DryRun)
	}
	res := Result{
		Report: NewReport(opt.DryRun, len(files), swept, cps, holders),
		Items:  append(append(append([]Item{}, swept.Removed...), cps...), holders...),
	}
	return res, errors.Join(sweepErr, cpErr, hErr)
}
