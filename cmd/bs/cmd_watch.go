package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/internal/sessions"
	"github.com/bstools/bs/internal/watch"
	"github.com/bstools/bs/internal/xdg"
)

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "run a filter in place on every session file that changed, every --interval",
		ArgsUsage: "DIR|GLOB... -- FILTER [FLAGS]",
		Flags: []cli.Flag{
			&cli.DurationFlag{Name: "interval", Value: 30 * time.Second, Usage: "time between passes"},
			&cli.BoolFlag{Name: "once", Usage: "make one pass and exit (for cron and tests)"},
			&cli.DurationFlag{Name: "retention-interval", Usage: "also run prune-retention this often (0: never)"},
			&cli.DurationFlag{Name: "retention", Value: 24 * time.Hour, Usage: "prune-retention's --older-than"},
			&cli.StringFlag{Name: "state", Usage: "the state file (default: $XDG_STATE_HOME/bs/watch.json)"},
			&cli.StringFlag{Name: "log-level", Value: "info", Usage: "log records on stderr at this level and above: debug, info, warn, error"},
		},
		Action: runWatch,
	}
}

func runWatch(c *cli.Context) error {
	args := c.Args().Slice()
	dash := slices.Index(args, "--")
	if dash < 1 || dash == len(args)-1 {
		return usagef(msgWatchArgs)
	}
	roots, filter := args[:dash], args[dash+1:]
	// The whole of args, which ends the command line as misplacedFlag
	// needs: the filter's flags, after the "--", are not counted.
	if f := misplacedFlag(c, args); f != "" {
		return usagef(msgFlagAfterArgs, f)
	}
	if !slices.ContainsFunc(filterCommands(), func(name string) bool { return name == filter[0] }) {
		return usagef(msgWatchFilter, filter[0], strings.Join(filterCommands(), ", "))
	}
	// The filter runs as bs itself would run it, with the same --config.
	// Its flags and rules are checked once, here: a mistake is a usage
	// error or a bad rule now, not a warning on every file. The check does
	// none of the filter's work.
	bs := selfLine(c)
	if err := checkLine(c.Context, append(slices.Clone(bs), filter...)); err != nil {
		var usage *usageError
		if errors.As(err, &usage) {
			usage.help = filter[0]
		}
		return err
	}
	interval := c.Duration("interval")
	if err := cmp.Or(aboveZero(c, "interval"), notNegative(c, "retention-interval", "retention")); err != nil {
		return err
	}
	cm, err := parseLogLevel(c)
	if err != nil {
		return err
	}
	w := &watch.Watcher{Roots: roots, Filter: filter, Log: cm.log, Progress: c.App.ErrWriter, Label: prgWatch, Unit: unitFiles,
		StatePath: c.String("state"), RetentionDue: c.Duration("retention-interval"), Retention: c.Duration("retention")}
	if w.StatePath == "" {
		w.StatePath = filepath.Join(xdg.State(), "watch.json")
	}
	w.Run = func(ctx context.Context, args []string) error {
		return runLine(ctx, append(slices.Clone(bs), args...), io.Discard, c.App.ErrWriter)
	}
	w.Busy = func(err error) (string, bool) {
		var busy *busyError
		if errors.As(err, &busy) {
			return busy.why, true
		}
		return "", false
	}
	for _, r := range roots {
		if _, err := os.Stat(r); errors.Is(err, fs.ErrNotExist) && !sessions.HasGlob(r) {
			cm.ui.warnf(msgWatchNoRoot, r)
		}
	}
	err = w.Watch(c.Context, interval, c.Bool("once"))
	var failed *watch.FailedError
	if errors.As(err, &failed) {
		return fmt.Errorf(msgWatchFailed, failed.Runs)
	}
	return sessionsWorded(err)
}

// findSessions is sessions.Find with its errors worded.
func findSessions(roots []string, strict bool) ([]string, error) {
	files, err := sessions.Find(roots, strict)
	return files, sessionsWorded(err)
}

// sessionsWorded words the errors of finding session files and of the
// watch state: a bad pattern is a usage error.
func sessionsWorded(err error) error {
	var (
		glob    *sessions.GlobError
		nomatch *sessions.NoMatchError
		damaged *sessions.DamagedStateError
		link    *sessions.DanglingError
	)
	switch {
	case errors.As(err, &glob):
		return usagef(msgWatchGlob, glob.Pattern, glob.Err)
	case errors.As(err, &nomatch):
		return fmt.Errorf(msgPruneNoMatch, nomatch.Root)
	case errors.As(err, &link):
		return fmt.Errorf(msgPruneDangling, link.Path)
	case errors.As(err, &damaged):
		return fmt.Errorf(msgWatchState, damaged.Path, damaged.Err)
	}
	return err
}

// filterCommands are the commands watch can run in place.
func filterCommands() []string {
	return []string{"extract", "restore", "roll", "trim", "archive"}
}
