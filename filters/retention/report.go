package retention

import (
	"encoding/json"
	"fmt"
	"io"
)

// Report is what a prune-retention run did (or, dry, would do): its
// report line, and --json's object.
type Report struct {
	DryRun      bool       `json:"dry_run"`
	Sessions    int        `json:"sessions"`
	Blobs       BlobCounts `json:"blobs"`
	Checkpoints FileCounts `json:"checkpoints"`
	Holders     FileCounts `json:"holders"`
	Packs       *PackSweep `json:"packs,omitempty"`
	IndexRows   int        `json:"index_rows"` // search-index rows of deleted blobs, removed
	Items       []Item     `json:"items,omitempty"`
}

// BlobCounts are the blobs a sweep listed, kept and deleted.
type BlobCounts struct {
	Listed     int   `json:"listed"`
	Referenced int   `json:"referenced"`
	Recent     int   `json:"recent"`
	Deleted    int   `json:"deleted"`
	Bytes      int64 `json:"bytes"`
}

// FileCounts are the files deleted and their bytes.
type FileCounts struct {
	Deleted int   `json:"deleted"`
	Bytes   int64 `json:"bytes"`
}

// NewReport is the report of a run over sessions transcripts whose sweep
// came to res and which deleted the checkpoints cps and the holder files
// holders.
func NewReport(dryRun bool, sessions int, res SweepResult, cps, holders []Item) Report {
	return Report{DryRun: dryRun, Sessions: sessions,
		Blobs:       BlobCounts{Listed: res.Listed, Referenced: res.Referenced, Recent: res.Recent, Deleted: len(res.Removed), Bytes: res.Bytes},
		Checkpoints: filesOf(cps), Holders: filesOf(holders), Packs: res.Packs}
}

func filesOf(items []Item) FileCounts {
	f := FileCounts{Deleted: len(items)}
	for _, it := range items {
		f.Bytes += it.Bytes
	}
	return f
}

// Write prints the report as bs prune-retention does: with asJSON one
// object (holding the items a dry run lists), else the items of a dry run
// one a line, then the report line and, when anything happened to
// packs, a line for them.
func (r Report) Write(w io.Writer, items []Item, asJSON bool) {
	if asJSON {
		if r.DryRun {
			r.Items = items
		}
		b, _ := json.Marshal(r)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	if r.DryRun {
		for _, it := range items {
			fmt.Fprintf(w, "%s %d\n", it.Name, it.Bytes)
		}
	}
	verb := "deleted"
	if r.DryRun {
		verb = "would delete"
	}
	fmt.Fprintf(w, "%s: blobs %d (%d bytes), checkpoints %d (%d bytes), holders %d (%d bytes); kept: blobs %d referenced, %d recent (of %d); sessions read: %d\n",
		verb, r.Blobs.Deleted, r.Blobs.Bytes, r.Checkpoints.Deleted, r.Checkpoints.Bytes, r.Holders.Deleted, r.Holders.Bytes,
		r.Blobs.Referenced, r.Blobs.Recent, r.Blobs.Listed, r.Sessions)
	if p := r.Packs; p != nil && p.Deleted+p.Rewritten+p.LeftBlobs+p.Damaged > 0 {
		format := "packs: %d deleted, %d rewritten, %d bytes freed; %d unreferenced blobs (%d bytes) left in packs below --rewrite-above"
		if r.DryRun {
			format = "packs: %d to delete, %d to rewrite, %d bytes to free; %d unreferenced blobs (%d bytes) to leave in packs below --rewrite-above"
		}
		fmt.Fprintf(w, format, p.Deleted, p.Rewritten, p.Freed, p.LeftBlobs, p.LeftBytes)
		if p.Damaged > 0 {
			fmt.Fprintf(w, "; %d damaged copies left where they are (bs store verify)", p.Damaged)
		}
		fmt.Fprintln(w)
	}
}
