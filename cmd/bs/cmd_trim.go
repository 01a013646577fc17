package main

import (
	"context"
	"io"
	"os"
	"runtime"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/trim"
	"github.com/bstools/bs/internal/searchqueue"
)

func trimCommand() *cli.Command {
	d := trim.Defaults()
	return &cli.Command{
		Name:      "trim",
		Usage:     "prune old tool results the way OpenClaw's session pruning does: soft-trim, then hard-clear",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "keep-last-assistants", Value: d.KeepLastAssistants, Usage: "protect tool results after the last `N` assistant messages (0: none)"},
			&cli.Float64Flag{Name: "soft-trim-ratio", Value: d.SoftTrimRatio, Usage: "soft-trim when the context fills at least this share of the window"},
			&cli.Float64Flag{Name: "hard-clear-ratio", Value: d.HardClearRatio, Usage: "hard-clear while the context fills at least this share of the window"},
			&cli.IntFlag{Name: "min-prunable-chars", Value: d.MinPrunableChars, Usage: "hard-clear only when prunable tool results hold at least `N` characters"},
			&cli.IntFlag{Name: "soft-max", Value: d.SoftMax, Usage: "soft-trim tool results longer than `N` characters"},
			&cli.IntFlag{Name: "soft-head", Value: d.SoftHead, Usage: "characters a soft-trimmed result keeps from its start"},
			&cli.IntFlag{Name: "soft-tail", Value: d.SoftTail, Usage: "characters a soft-trimmed result keeps from its end"},
			&cli.StringFlag{Name: "placeholder", Value: d.Placeholder, Usage: "the text a hard-cleared result becomes"},
			&cli.BoolFlag{Name: "no-hard-clear", Usage: "never hard-clear, only soft-trim"},
			&cli.StringSliceFlag{Name: "allow", Usage: "prune only tools whose name matches `GLOB` (* wildcards, case-insensitive; repeatable)"},
			&cli.StringSliceFlag{Name: "deny", Usage: "never prune tools whose name matches `GLOB` (wins over --allow; repeatable)"},
			&cli.DurationFlag{Name: "ttl", Usage: "cache-ttl mode: prune only when the last assistant message is at least this old at --now"},
			&cli.IntFlag{Name: "context-window", Usage: "the window in tokens (default: from the transcript's model, else 200000)"},
			&cli.BoolFlag{Name: "lossy", Usage: "keep nothing: write OpenClaw's exact placeholders, without a store or ids"},
			&cli.BoolFlag{Name: "no-index", Usage: "do not add the removed results to the search index"},
		}, append(indexFlags(), commonFlags()...)...),
		Action: runTrim,
	}
}

func runTrim(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	opt := trim.Defaults()
	opt.KeepLastAssistants = c.Int("keep-last-assistants")
	opt.SoftTrimRatio, opt.HardClearRatio = c.Float64("soft-trim-ratio"), c.Float64("hard-clear-ratio")
	opt.MinPrunableChars = c.Int("min-prunable-chars")
	opt.SoftMax, opt.SoftHead, opt.SoftTail = c.Int("soft-max"), c.Int("soft-head"), c.Int("soft-tail")
	opt.Placeholder = c.String("placeholder")
	opt.HardClear = !c.Bool("no-hard-clear")
	opt.Allow, opt.Deny = c.StringSlice("allow"), c.StringSlice("deny")
	opt.TTL = c.Duration("ttl")
	opt.Window = c.Int("context-window")
	if err := notNegative(c, "keep-last-assistants", "min-prunable-chars", "soft-max", "soft-head", "soft-tail", "context-window", "ttl"); err != nil {
		return err
	}
	switch {
	case opt.SoftTrimRatio < 0 || opt.SoftTrimRatio > 1 || opt.HardClearRatio < 0 || opt.HardClearRatio > 1:
		return usagef(msgTrimRatio)
	case opt.Placeholder == "":
		return usagef(msgTrimPlaceholder)
	}
	lossy := c.Bool("lossy") // wins over --store and BS_STORE
	opt.Now, opt.Format, opt.Log, opt.OnBadLine = cm.now, cm.Format, cm.log, cm.onBadLine
	opt.Workers = 4 * runtime.GOMAXPROCS(0)
	if !lossy {
		// The store is on when named, or when the default one exists.
		if _, serr := os.Stat(cm.storeDir); c.String("store") != "" || serr == nil {
			if opt.Store, err = cm.openStore(); err != nil {
				return err
			}
		} else {
			cm.ui.warnf(msgTrimNoStore, cm.storeDir)
		}
	}
	var ix *searchqueue.Writer
	if opt.Store != nil && !c.Bool("no-index") {
		ix = openIndexWriter(c, cm)
		defer ix.Close()
	}
	return cm.Each(c.Context, func(ctx context.Context, name string, r io.Reader, w io.Writer) error {
		o := opt
		o.Session = sessionName(name)
		if ix != nil {
			var session searchqueue.Session
			session, r = cm.indexSession(name, r)
			moved := ix.Moved(session, opt.Store)
			o.OnMoved = func(m trim.Moved, text []byte) {
				moved(extract.Moved{Line: m.Line, EntryID: m.EntryID, Pointer: m.Pointer, Kind: "tool_result", Bytes: m.Bytes, Blob: m.Blob, Tool: m.Tool}, text)
			}
		}
		st, err := trim.Run(ctx, name, r, w, o)
		cm.log.Info("trim done", "file", name, "trimmed", st.Trimmed, "cleared", st.Cleared, "chars_before", st.CharsBefore, "chars_after", st.CharsAfter, "window", st.Window, "skipped", st.Skipped, "bad_lines", st.BadLines)
		return err
	})
}
