package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/retention"
	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/searchqueue"
)

func pruneCommand() *cli.Command {
	return &cli.Command{
		Name:  "prune-retention",
		Usage: "delete stored blobs, checkpoints and holder files that nothing live references",
		Flags: append([]cli.Flag{
			&cli.StringSliceFlag{Name: "sessions", Usage: "the live transcripts: a `DIR` walked for *.jsonl, or a GLOB (repeatable; required)"},
			&cli.DurationFlag{Name: "older-than", Value: 24 * time.Hour, Usage: "delete unreferenced blobs and holders last written longer ago than this"},
			&cli.IntFlag{Name: "keep", Value: checkpoint.Defaults().Keep, Usage: "keep the newest `N` checkpoints of each session key (0 keeps all)"},
			checkpointDirFlag("checkpoint-dir"),
			&cli.StringFlag{Name: "holders", Usage: "also delete unreferenced holder files `DIR`/<id>.jsonl (named like a holder id, as bs archive --holders writes them)"},
			&cli.Float64Flag{Name: "rewrite-above", Value: blobstore.DefaultRewriteAbove, Usage: "rewrite a pack once more than this share of its bytes is unreferenced and past the retention"},
			&cli.BoolFlag{Name: "dry-run", Usage: "list what would be deleted and change nothing"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object (with --dry-run, the items too)"},
			nowFlag(),
			logLevelFlag(),
		}, append(indexFlags(), storeFlags()...)...),
		Action: runPrune,
	}
}

// remotePruneFloor is the least --older-than on a store reached by URL. A
// remote store (blobstore.Cloud) refreshes an object's time on a re-Put
// only when it is older than blobstore.DefaultRefreshAfter (one hour): a
// blob re-used by a writer within that window keeps its old time, so a
// shorter --older-than could delete it. Twice the window leaves a margin.
const remotePruneFloor = 2 * blobstore.DefaultRefreshAfter

func runPrune(c *cli.Context) error {
	roots := c.StringSlice("sessions")
	if c.NArg() > 0 {
		return usagef(msgPruneArgs, c.Args().First())
	}
	if len(roots) == 0 {
		return usagef(msgPruneNoSessions)
	}
	olderThan, keep := c.Duration("older-than"), c.Int("keep")
	if err := notNegative(c, "older-than", "keep"); err != nil {
		return err
	}
	rewrite := c.Float64("rewrite-above")
	if rewrite <= 0 || rewrite > 1 {
		return usagef(msgPruneRewrite, rewrite)
	}
	cm, err := parseLogLevel(c)
	if err != nil {
		return err
	}
	// The mark starts now: the earlier of --now and the clock, so that a
	// --now ahead of the clock cannot reach blobs written during the run.
	start := time.Now()
	if s := c.String("now"); s != "" {
		now, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return usagef(msgBadNow, s)
		}
		if now.Before(start) {
			start = now
		}
	}
	cutoff := start.Add(-olderThan)
	if err = cm.readStoreFlags(c); err != nil {
		return err
	}
	if blobstore.IsURL(cm.storeDir) && olderThan < remotePruneFloor {
		return usagef(msgPruneRemoteFloor, olderThan, remotePruneFloor, blobstore.DefaultRefreshAfter)
	}
	// A store that is not there is an error, not a new empty store in
	// which nothing was found to prune.
	store, err := openExisting(cm, msgPruneNoStore)
	if err != nil {
		return err
	}
	files, err := findSessions(roots, true)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		// Every blob would look unreferenced.
		return fmt.Errorf(msgPruneNoTranscripts, strings.Join(roots, ", "))
	}
	ctx := c.Context
	stderr := c.App.ErrWriter
	dryRun := c.Bool("dry-run")
	// A bar for the mark (transcripts), then one for each phase of the
	// sweep: listing the store (a count), sweeping what is unreferenced
	// (of a total).
	bar := progress.New(stderr, prgMark, int64(len(files)), false, unitTranscrip)
	sweep := &progress.Phases{W: stderr, Label: func(ph string) string { return fmt.Sprintf(prgSweep, ph) }, Unit: unitBlobs}
	opt := retention.Options{
		SweepOptions: retention.SweepOptions{Cutoff: cutoff, DryRun: dryRun, RewriteAbove: rewrite,
			Progress: func(ph string, done, total int) {
				bar.Done()
				sweep.Set(ph, int64(done), int64(total))
			}},
		Keep: keep, Checkpoints: checkpointDirOf(c.String("checkpoint-dir")), Holders: c.String("holders"),
		Marked: func(i int, path string, sc retention.Scan) {
			if sc.BadLines > 0 {
				cm.ui.warnf(msgPruneBadLines, path, sc.BadLines)
			}
			cm.log.Debug("marked", "file", path, "lines", sc.Lines, "refs", sc.Refs, "nested_blobs", sc.Nested)
			bar.Set(int64(i + 1))
		},
	}
	res, err := retention.Prune(ctx, store, files, opt)
	bar.Done()
	sweep.Done()
	var unmarked *retention.MarkError
	switch {
	case errors.As(err, &unmarked):
		return pruneMarkError(ctx, cm, unmarked.Path, unmarked.Err)
	case err != nil && ctx.Err() != nil:
		return err
	}
	if !dryRun {
		for _, it := range res.Items {
			cm.log.Info("deleted", "item", it.Name, "bytes", it.Bytes)
		}
		if blobs := res.Blobs(); len(blobs) > 0 {
			res.Report.IndexRows = forgetIndexRows(c, cm, blobs)
		}
	}
	res.Report.Write(c.App.Writer, res.Items, c.Bool("json"))
	if err != nil {
		cm.ui.errorf(cm.cmd, msgPruneFailed, err)
		return &reported{code: exitFailure}
	}
	return nil
}

// pruneMarkError shows why the mark failed: nothing is deleted after it.
func pruneMarkError(ctx context.Context, cm *common, path string, err error) error {
	var ue *retention.UnreadableError
	var de *retention.DamagedError
	switch {
	case ctx.Err() != nil:
		return err
	case errors.As(err, &ue):
		cm.ui.errorf(cm.cmd, msgPruneUnreadable, ue.Name, ue.Line, ue.Kind, ue.Blob, ue.Err)
		if errors.Is(err, blobstore.ErrNotFound) {
			cm.ui.hintf(hintPruneStore)
		}
	case errors.As(err, &de):
		cm.ui.errorf(cm.cmd, msgPruneDamaged, de.Name, de.Line, de.Err)
		cm.ui.hintf(hintPruneRestore)
	default:
		cm.ui.errorf(cm.cmd, msgPruneSession, path, err)
	}
	return &reported{code: exitFailure}
}

// forgetIndexRows removes the search-index rows that name deleted blobs, so
// no hit names a blob that is gone (searchqueue.Forget). The index is a
// convenience over the store: a failure warns and does not fail the run.
func forgetIndexRows(c *cli.Context, cm *common, removed []retention.Item) int {
	gone := make(map[string]bool, len(removed))
	for _, it := range removed {
		gone[it.Name] = true
	}
	path := indexPath(c)
	n, err := searchqueue.Forget(c.Context, path, gone, indexOpenOptions(cm.ui))
	if err != nil {
		cm.ui.warnf(msgPruneIndex, path, err)
		cm.ui.hintf(hintIndex)
	}
	return n
}
