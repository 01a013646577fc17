package main

import (
	"encoding/json"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/stats"
	"github.com/bstools/bs/internal/progress"
)

// statsPlanFlags are the flags stats shares with extract: the
// configuration file's extract settings apply to them too, so that "would
// free" is what 'bs extract' would do.
var statsPlanFlags = []string{"keep-recent", "min-length", "types", "rule", "keep-after-restore"}

func statsCommand() *cli.Command {
	d := extract.Defaults()
	return &cli.Command{
		Name:      "stats",
		Usage:     "show where a transcript's tokens go: by kind, by tool, live versus extracted, the largest entries",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per transcript (its fields: man bs-stats)"},
			&cli.BoolFlag{Name: "chart", Usage: "draw bar charts even when standard output is not a terminal"},
			&cli.BoolFlag{Name: "exact", Usage: "count extracted values' tokens from their blobs in the store (default: estimate them from their bytes)"},
			tokenizerFlag(),
			&cli.IntFlag{Name: "keep-recent", Value: d.KeepRecent, Usage: "as bs extract: leave the last `N` messages untouched"},
			&cli.IntFlag{Name: "min-length", Value: d.MinLength, Usage: "as bs extract: move only values longer than `N` characters"},
			&cli.StringFlag{Name: "types", Value: d.Types.String(), Usage: "as bs extract: kinds of values to move"},
			&cli.StringSliceFlag{Name: "rule", Usage: "as bs extract: jq predicate deciding _extractable (repeatable)"},
			&cli.DurationFlag{Name: "keep-after-restore", Value: d.KeepAfterRestore, Usage: "as bs extract: protect a restored entry for this long"},
		}, commonFlagsWhere(func(name string) bool { return name != "in-place" && !isInPlaceFlag(name) })...),
		Before: applyStatsConfig,
		Action: runStats,
	}
}

// applyStatsConfig applies the file's stats settings, then its extract
// settings to the flags the two share.
func applyStatsConfig(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	if err := applyConfigOf(cfg, c, c.Command.Name, nil); err != nil {
		return err
	}
	return applyConfigOf(cfg, c, "extract", statsPlanFlags)
}

func runStats(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	opt := stats.Options{Format: cm.Format, OnBadLine: cm.onBadLineSaying(msgStatsBadLine)}
	if opt.Estimator, err = estimatorFlag(c); err != nil {
		return err
	}
	if c.Bool("exact") {
		if opt.Store, err = cm.openReading(); err != nil {
			return err
		}
		opt.OnBlobError = func(line int, id, _ string, err error) {
			cm.ui.warnf(msgStatsBlob, line, id, err)
		}
	}
	x, err := extractPlan(c)
	if err != nil {
		return err
	}
	x.Now, x.Log, x.Workers = cm.now, cm.log, 1
	opt.Plan = &stats.Plan{Extract: x, Rules: c.StringSlice("rule")}

	text := stats.TextOptions{Chart: c.Bool("chart") || progress.IsTerminal(cm.Stdout)}
	text.Color = text.Chart && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	enc := json.NewEncoder(cm.Stdout)
	enc.SetEscapeHTML(false)
	first := true
	return cm.Read(func(path string, r io.Reader) error {
		rep, err := stats.Run(c.Context, path, r, opt)
		if err != nil {
			return err
		}
		if c.Bool("json") {
			return enc.Encode(rep)
		}
		if !first {
			cm.Stdout.Write([]byte("\n"))
		}
		first = false
		return stats.WriteText(cm.Stdout, rep, text)
	})
}
