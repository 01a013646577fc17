package main

import (
	"context"
	"io"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/rules"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/searchqueue"
)

func extractCommand() *cli.Command {
	d := extract.Defaults()
	return &cli.Command{
		Name:      "extract",
		Usage:     "move large old values to the blob store, leaving [[extracted-ID]] placeholders",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "keep-recent", Value: d.KeepRecent, Usage: "leave the last `N` messages untouched"},
			&cli.IntFlag{Name: "min-length", Value: d.MinLength, Usage: "move only values longer than `N` characters"},
			&cli.StringFlag{Name: "types", Value: d.Types.String(), Usage: "kinds of values to move: tool_call, tool_result (with the images a tool returned), thinking, text, image (also those the user sent), bookkeeping (what a runtime writes for itself and never sends to the model: Claude Code's progress lines)"},
			&cli.StringSliceFlag{Name: "rule", Usage: "jq predicate deciding _extractable for entries without one (repeatable; first non-null wins)"},
			&cli.DurationFlag{Name: "keep-after-restore", Value: d.KeepAfterRestore, Usage: "protect a restored entry for this long"},
			&cli.BoolFlag{Name: "dry-run", Usage: "print a JSON report of what would move and change nothing"},
			&cli.BoolFlag{Name: "no-index", Usage: "do not add the moved values to the search index"},
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: runtime.NumCPU(), DefaultText: "the number of CPUs; 16 for a remote store", Usage: "compress and write blobs on `N` workers, on at most N cores (the output is the same for every N)"},
		}, append(indexFlags(), commonFlags()...)...),
		Action: runExtract,
	}
}

// extractOptions reads and checks extract's own flags: what runExtract
// runs with, and what bs watch checks once before its first pass.
func extractOptions(c *cli.Context) (extract.Options, error) {
	opt, err := extractPlan(c)
	if err != nil {
		return opt, err
	}
	opt.DryRun = c.Bool("dry-run")
	if opt.Workers = c.Int("jobs"); opt.Workers < 1 {
		return opt, usagef(msgJobs)
	}
	return opt, nil
}

// extractPlan reads and checks the flags that say what extract would
// move, which bs stats takes too.
func extractPlan(c *cli.Context) (extract.Options, error) {
	opt := extract.Defaults()
	opt.KeepRecent = c.Int("keep-recent")
	opt.MinLength = c.Int("min-length")
	opt.KeepAfterRestore = c.Duration("keep-after-restore")
	if err := notNegative(c, "keep-recent", "min-length"); err != nil {
		return opt, err
	}
	var err error
	if opt.Types, err = transcript.ParseKinds(c.String("types")); err != nil {
		return opt, usagef(msgBadTypes, err)
	}
	if opt.Rules, err = rules.Compile(c.StringSlice("rule")); err != nil {
		return opt, err
	}
	return opt, nil
}

func runExtract(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	opt, err := extractOptions(c)
	if err != nil {
		return err
	}
	cm.ShowReading = true
	opt.Now, opt.Format, opt.Log, opt.OnBadLine = cm.now, cm.Format, cm.log, cm.onBadLine
	if opt.DryRun {
		// What a pass over the files would move, reported on standard
		// output: nothing is rewritten, so the files are only read.
		cm.InPlace = false
	}
	if c.IsSet("jobs") {
		// As for ripgrep, -j N is how many cores the run may take, the
		// reading and parsing of lines included: -j 1 is one core. (The
		// workers of a remote store mostly wait, so more of them than
		// cores still helps.)
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(min(opt.Workers, runtime.GOMAXPROCS(0))))
	}
	if !opt.DryRun {
		if opt.Store, err = cm.openStore(); err != nil {
			return err
		}
		// A remote store's Puts wait on the network more than on the
		// CPUs: keep more of them in flight unless -j says otherwise.
		if blobstore.IsRemote(opt.Store) && !c.IsSet("jobs") {
			opt.Workers = max(opt.Workers, remoteJobs)
		}
	}
	var ix *searchqueue.Writer
	if !opt.DryRun && !c.Bool("no-index") {
		ix = openIndexWriter(c, cm)
		defer ix.Close()
	}
	var res *inplace.Resume
	if cm.InPlace && !opt.DryRun {
		// In place, a run can resume where the last one's output became
		// final, for the same options (see internal/inplace).
		res = &inplace.Resume{Known: knownDialect, Key: opt.ResumeKey()}
	}
	return cm.EachResuming(c.Context, res, func(ctx context.Context, name string, start inplace.Start, r io.Reader, w io.Writer) (inplace.Final, error) {
		o := opt
		o.Session = sessionName(name)
		if ix != nil {
			var session searchqueue.Session
			session, r = cm.indexSession(name, r)
			o.OnMoved = ix.Moved(session, opt.Store)
		}
		if start.From > 0 {
			o.Format, _ = transcript.ParseDialect(start.Format)
			o.LinesBefore = start.Lines
			o.Before = io.NewSectionReader(start.Before, 0, start.From)
			cm.log.Info("resuming", "file", name, "from_offset", start.From)
		}
		st, err := extract.Run(ctx, name, r, w, o)
		cm.log.Info("extract done", "file", name, "values", st.Values, "entries", st.Entries, "bytes_in", st.BytesIn, "bytes_out", st.BytesOut, "bad_lines", st.BadLines)
		final := inplace.Final{Offset: st.Final}
		if st.Dialect != transcript.Unknown { // a run that stopped before it knew is not resumed
			final.Format = st.Dialect.String()
		}
		return final, err
	})
}

// knownDialect is whether a watermark's format names a dialect this bs
// reads.
func knownDialect(name string) bool {
	d, err := transcript.ParseDialect(name)
	return err == nil && d != transcript.Unknown
}
