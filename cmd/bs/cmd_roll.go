package main

import (
	"cmp"
	"context"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/internal/searchqueue"
)

func rollCommand() *cli.Command {
	d := roll.Defaults()
	return &cli.Command{
		Name:      "roll",
		Usage:     "evict the oldest messages when the context is nearly full, without summarising",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.IntFlag{Name: "context-window", Usage: "the window in tokens (default: from the transcript's model, else 200000)"},
			&cli.Float64Flag{Name: "trigger", Value: d.Trigger, Usage: "roll when utilization is at or above this ratio"},
			&cli.Float64Flag{Name: "target", Value: d.Target, Usage: "evict until utilization is at most this ratio"},
			&cli.IntFlag{Name: "min-keep", Value: d.MinKeep, Usage: "never evict the last `N` messages"},
			&cli.BoolFlag{Name: "no-note", Usage: "leave the note's text empty (its line still records the eviction; Claude Code's summary, which the API takes as a user message, says only [Context rolled])"},
			&cli.BoolFlag{Name: "no-index", Usage: "do not add the evicted entries to the search index"},
			tokenizerFlag(),
		}, append(indexFlags(), commonFlags()...)...),
		Action: runRoll,
	}
}

func runRoll(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	opt := roll.Defaults()
	opt.Window = c.Int("context-window")
	opt.Trigger, opt.Target, opt.MinKeep = c.Float64("trigger"), c.Float64("target"), c.Int("min-keep")
	opt.NoNote = c.Bool("no-note")
	if opt.Estimator, err = estimatorFlag(c); err != nil {
		return err
	}
	if err := cmp.Or(aboveZero(c, "target", "trigger"), notNegative(c, "min-keep", "context-window")); err != nil {
		return err
	}
	if opt.Target > opt.Trigger {
		return usagef(msgRollTarget, opt.Target, opt.Trigger)
	}
	opt.Now, opt.Format, opt.Log, opt.OnBadLine, opt.Strict = cm.now, cm.Format, cm.log, cm.onBadLine, cm.strict
	if opt.Store, err = cm.openStore(); err != nil {
		return err
	}
	var ix *searchqueue.Writer
	if !c.Bool("no-index") {
		ix = openIndexWriter(c, cm)
		defer ix.Close()
	}
	warned := false
	return cm.Each(c.Context, func(ctx context.Context, name string, r io.Reader, w io.Writer) error {
		o := opt
		o.Session = sessionName(name)
		if ix != nil {
			var session searchqueue.Session
			session, r = cm.indexSession(name, r)
			o.Index = ix.ForRoll(session, opt.Store)
		}
		st, err := roll.Run(ctx, name, r, w, o)
		if st.Rolled && ix == nil && !warned {
			// Seed 004: rolling without recall falls back, with a warning.
			cm.ui.warnf(msgRollNoIndex)
			warned = true
		}
		if st.Rolled {
			cm.log.Info("rolled", "file", name, "messages", st.Messages, "lines", st.Lines, "evicted_tokens", st.EvictedTokens, "tokens_before", st.TokensBefore, "tokens_after", st.TokensAfter, "window", st.Window)
		} else if err == nil && st.Window > 0 && float64(st.TokensBefore) < o.Trigger*float64(st.Window) {
			cm.log.Info("under the trigger: passed through unchanged", "file", name, "tokens", st.TokensBefore, "window", st.Window,
				"ratio", fmt.Sprintf("%.2f", float64(st.TokensBefore)/float64(st.Window)), "trigger", o.Trigger)
		}
		return err
	})
}
