package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/internal/searchqueue"
)

func archiveCommand() *cli.Command {
	d := archive.Defaults()
	return &cli.Command{
		Name:      "archive",
		Usage:     "collapse finished turns into holder transcripts, leaving a summary and the holder's id",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "token-threshold", Value: d.TokenThreshold, Usage: "archive a turn of more than `N` estimated tokens (0: never for its size)"},
			&cli.IntFlag{Name: "tool-call-threshold", Value: d.ToolCallThreshold, Usage: "archive a turn with at least `N` tool-use pairs (0: never for its calls)"},
			&cli.BoolFlag{Name: "on-max-turns", Value: d.OnMaxTurns, Usage: "archive a turn that stopped at a max-turns limit (--on-max-turns=false: never for that)"},
			&cli.IntFlag{Name: "depth-cap", Value: d.DepthCap, Usage: "never archive a turn holding a holder at depth `N` (holders nest when archived turns are archived again)"},
			&cli.IntFlag{Name: "keep-recent", Value: d.KeepRecent, Usage: "never archive the last `N` turns (0: the last turn too, once it is finished)"},
			&cli.StringFlag{Name: "summary-style", Value: d.Style, Usage: "the mechanical summary: structured (JSON) or paragraph"},
			&cli.StringFlag{Name: "summarize-cmd", Usage: "summarize with this shell `COMMAND`: the holder transcript on its standard input, the summary on its standard output"},
			&cli.DurationFlag{Name: "summarize-timeout", Value: d.SummarizeTimeout, Usage: "give up on --summarize-cmd after this long and use the mechanical summary"},
			&cli.StringFlag{Name: "holders", Usage: "also write each holder transcript as `DIR`/<id>.jsonl"},
			&cli.BoolFlag{Name: "no-index", Usage: "do not add the archived entries to the search index"},
			tokenizerFlag(),
		}, append(indexFlags(), commonFlags()...)...),
		Action: runArchive,
		Subcommands: withUsageErrors(
			&cli.Command{
				Name:      "list",
				Usage:     "print the live holders of a transcript as a 'Live Subagents' block",
				ArgsUsage: "[FILE...]",
				Flags: append([]cli.Flag{
					&cli.BoolFlag{Name: "json", Usage: "print one JSON object per holder"},
				}, archiveReadFlags()...),
				Action: runArchiveList,
			},
			&cli.Command{
				Name:      "show",
				Usage:     "print a holder transcript, byte for byte",
				ArgsUsage: "ID [FILE...]",
				Flags: append([]cli.Flag{
					&cli.StringFlag{Name: "holders", Usage: "read the holder from `DIR`/<id>.jsonl (when no FILE is given)"},
				}, archiveReadFlags()...),
				Action: runArchiveShow,
			},
		),
	}
}

// archiveReadFlags are the flags of the archive subcommands that read.
func archiveReadFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Usage: "blob store directory (default $XDG_DATA_HOME/bs, ~/.local/share/bs)", EnvVars: []string{"BS_STORE"}},
		formatFlag(),
		&cli.BoolFlag{Name: "strict", Usage: "treat a line that is not valid JSON as an error (exit 4)"},
		logLevelFlag(),
	}
}

func runArchive(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	opt := archive.Defaults()
	opt.TokenThreshold, opt.ToolCallThreshold = c.Int("token-threshold"), c.Int("tool-call-threshold")
	opt.OnMaxTurns, opt.DepthCap, opt.KeepRecent = c.Bool("on-max-turns"), c.Int("depth-cap"), c.Int("keep-recent")
	opt.Style, opt.SummarizeCmd, opt.SummarizeTimeout = c.String("summary-style"), c.String("summarize-cmd"), c.Duration("summarize-timeout")
	opt.HoldersDir = c.String("holders")
	if opt.Style != archive.Structured && opt.Style != archive.Paragraph {
		return usagef(msgArchiveStyle, opt.Style)
	}
	if err := cmp.Or(notNegative(c, "token-threshold", "tool-call-threshold", "depth-cap", "keep-recent"), aboveZero(c, "summarize-timeout")); err != nil {
		return err
	}
	if opt.Estimator, err = estimatorFlag(c); err != nil {
		return err
	}
	opt.Now, opt.Format, opt.Log, opt.OnBadLine = cm.now, cm.Format, cm.log, cm.onBadLine
	if opt.Store, err = cm.openStore(); err != nil {
		return err
	}
	var ix *searchqueue.Writer
	if !c.Bool("no-index") {
		ix = openIndexWriter(c, cm)
		defer ix.Close()
	}
	return cm.Each(c.Context, func(ctx context.Context, name string, r io.Reader, w io.Writer) error {
		o := opt
		if ix != nil {
			var session searchqueue.Session
			session, r = cm.indexSession(name, r)
			o.OnIndex = ix.Archived(session)
		}
		o.OnSummaryFailed = func(id string, err error) { cm.ui.warnf(msgArchiveSummarize, name, id, err) }
		st, err := archive.Run(ctx, name, r, w, o)
		cm.log.Info("archive", "file", name, "turns", st.Turns, "archived", st.Archived, "refused", st.Skipped, "bytes", st.Bytes, "tokens", st.Tokens)
		return err
	})
}

// eachMarker calls fn for every archive marker in the transcripts the
// command names (or standard input).
func eachMarker(cm *common, fn func(name string, line int, m archive.Marker) error) error {
	return cm.Read(func(name string, r io.Reader) error {
		damaged := func(line int, err error) { cm.ui.warnf(msgArchiveBadMarker, name, line, err) }
		return archive.Markers(name, r, cm.Format, cm.onBadLine, damaged, func(line int, m archive.Marker) error { return fn(name, line, m) })
	})
}

func runArchiveList(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	var holders []archive.Holder
	err = eachMarker(cm, func(name string, line int, m archive.Marker) error {
		holders = append(holders, archive.HolderOf(name, line, m))
		return nil
	})
	if err != nil {
		return err
	}
	return archive.WriteHolders(c.App.Writer, holders, c.Bool("json"))
}

func runArchiveShow(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	if len(cm.Files) == 0 {
		return usagef(msgArchiveShowArgs)
	}
	id := cm.Files[0]
	cm.Files = cm.Files[1:]
	if id == "" {
		return usagef(msgArchiveBadID, id)
	}
	out := c.App.Writer
	if dir := c.String("holders"); dir != "" && len(cm.Files) == 0 {
		path, err := archive.HolderFile(dir, id)
		if err != nil {
			return usagef(msgArchiveBadID, id)
		}
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			cm.ui.errorf("archive show", msgArchiveNotFound, id, dir)
			cm.ui.hintf(hintArchiveList)
			return &reported{code: exitFailure}
		}
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(out, f)
		return err
	}
	store, err := cm.openReading()
	if err != nil {
		return err
	}
	found := false
	err = eachMarker(cm, func(name string, _ int, m archive.Marker) error {
		if found {
			return nil
		}
		var buf bytes.Buffer
		ok, err := archive.FindHolder(c.Context, store, m, id, &buf)
		if err != nil {
			return err
		}
		if ok {
			found = true
			_, err = out.Write(buf.Bytes())
		}
		return err
	})
	if err != nil {
		return err
	}
	if !found {
		where := "standard input"
		if len(cm.Files) > 0 {
			where = strings.Join(cm.Files, ", ")
		}
		cm.ui.errorf("archive show", msgArchiveNotFound, id, where)
		cm.ui.hintf(hintArchiveList)
		return &reported{code: exitFailure}
	}
	return nil
}
