package main

import (
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

	"github.com/rogpeppe/go-internal/lockedfile"
	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/sessions"
)

func watchCommand() *cli.Command {
	return &cli.Command{
		Name:      "watch",
		Usage:     "run a filter in place on every session file that changed, every --interval",
		ArgsUsage: "DIR|GLOB... -- FILTER [FLAGS]",
		Description: "The periodic scan of a sessions directory, made safe: each pass stats the session files (*.jsonl under each DIR, " +
			"or those a GLOB names) and runs 'bs FILTER FLAGS -i FILE' on those whose size, mtime or inode " +
			"changed since the last pass, as kept in $XDG_STATE_HOME/bs/watch.json; an unchanged file is not " +
			"read at all. Each rewrite has the safety of -i (the runtime's lock, the quiet period, writers that " +
			"hold the file open); a file that is busy is tried again on the next pass. With --retention-interval, " +
			"'bs prune-retention --older-than RETENTION' runs on its own schedule over the same sessions. " +
			"One log line per rewritten file says the bytes and tokens (bytes/4) freed. SIGINT or SIGTERM " +
			"stops it cleanly, after the file in hand.",
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
	if f := misplacedFlag(c, roots); f != "" {
		return usagef(msgFlagAfterArgs, f)
	}
	if !slices.ContainsFunc(filterCommands(), func(name string) bool { return name == filter[0] }) {
		return usagef(msgWatchFilter, filter[0], strings.Join(filterCommands(), ", "))
	}
	// The filter runs as bs itself would run it, with the same --config.
	bs := []string{"bs"}
	if cfg := c.String("config"); cfg != "" {
		bs = append(bs, "--config", cfg)
	}
	// The filter's flags and rules are checked once, here: a mistake is a
	// usage error or a bad rule now, not a warning on every file. The check
	// does none of the filter's work.
	if err := checkingApp().RunContext(c.Context, append(slices.Clone(bs), filter...)); err != nil {
		return err
	}
	interval := c.Duration("interval")
	if interval <= 0 || c.Duration("retention-interval") < 0 || c.Duration("retention") < 0 {
		return usagef(msgWatchFlags)
	}
	cm, err := parseLogLevel(c)
	if err != nil {
		return err
	}
	w := &watcher{roots: roots, filter: filter, ui: cm.ui, log: cm.log, stderr: c.App.ErrWriter,
		statePath: c.String("state"), retentionEvery: c.Duration("retention-interval"), retention: c.Duration("retention")}
	if w.statePath == "" {
		w.statePath = filepath.Join(stateDir(), "watch.json")
	}
	w.run = func(ctx context.Context, args []string) error {
		return newApp(strings.NewReader(""), io.Discard, w.stderr).RunContext(ctx, append(slices.Clone(bs), args...))
	}
	for _, r := range roots {
		if _, err := os.Stat(r); errors.Is(err, fs.ErrNotExist) && !sessions.HasGlob(r) {
			cm.ui.warnf(msgWatchNoRoot, r)
		}
	}
	ctx := c.Context
	for {
		if err := w.pass(ctx); err != nil && ctx.Err() == nil {
			return err
		}
		if c.Bool("once") || ctx.Err() != nil {
			return nil
		}
		if sleep(ctx, interval) != nil {
			return nil // stopped by a signal: a clean end
		}
	}
}

// watcher makes the passes of bs watch.
type watcher struct {
	roots, filter  []string
	ui             ui
	log            logger
	stderr         io.Writer
	statePath      string
	retentionEvery time.Duration
	retention      time.Duration
	// run runs a bs command line (without "bs"); tests replace it.
	run func(ctx context.Context, args []string) error
}

// logger is the part of *slog.Logger watch uses.
type logger interface {
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
}

// pass runs the filter on every changed file, then retention when due.
func (w *watcher) pass(ctx context.Context) error {
	if err := os.MkdirAll(filepath.Dir(w.statePath), 0o700); err != nil {
		return err
	}
	unlock, err := lockedfile.MutexAt(w.statePath + ".lock").Lock()
	if err != nil {
		return err
	}
	defer unlock()
	st, err := readWatchState(w.statePath)
	if err != nil {
		return err
	}
	files, err := sessionFiles(w.roots)
	if err != nil {
		return err
	}
	bar := progress.New(w.stderr, prgWatch, int64(len(files)), false, unitFiles)
	defer bar.Done()
	for i, f := range files {
		if ctx.Err() != nil {
			break
		}
		bar.Set(int64(i + 1))
		info, err := os.Stat(f)
		if err != nil {
			continue // gone since the listing
		}
		if old, ok := st.Files[f]; ok && old == sessions.StampOf(info) {
			continue // unchanged: not read at all
		}
		start := time.Now()
		args := append(slices.Clone(w.filter), "-i", f)
		err = w.run(ctx, args)
		after, serr := os.Stat(f)
		var busy *busyError
		switch {
		case errors.As(err, &busy):
			w.log.Info("busy, next pass", "file", f, "reason", busy.why)
			continue
		case err != nil:
			if ctx.Err() == nil {
				w.log.Warn("filter failed", "file", f, "filter", w.filter[0], "err", err)
			}
			continue
		case serr != nil:
			continue
		}
		freed := info.Size() - after.Size()
		w.log.Info("pass", "file", f, "filter", w.filter[0], "bytes_before", info.Size(), "bytes_after", after.Size(),
			"bytes_freed", freed, "tokens_freed", freed/4, "took", time.Since(start).Round(time.Millisecond))
		st.Files[f] = sessions.StampOf(after)
	}
	bar.Done()
	// Forget files that are gone.
	for f := range st.Files {
		if !slices.Contains(files, f) {
			delete(st.Files, f)
		}
	}
	if w.retentionEvery > 0 && time.Since(st.Retention) >= w.retentionEvery && ctx.Err() == nil {
		args := []string{"prune-retention", "--older-than", w.retention.String()}
		for _, r := range w.roots {
			args = append(args, "--sessions", r)
		}
		// Prune the store the filter writes to, read as the filter reads it.
		args = append(args, storeArgs(w.filter[1:])...)
		if err := w.run(ctx, args); err != nil {
			w.log.Warn("retention failed", "err", err)
		} else {
			st.Retention = time.Now().UTC()
		}
	}
	return sessions.WriteState(w.statePath, st)
}

// pruneStoreFlags are the store flags of a filter that prune-retention
// must be given too: which store, and how to read it (see storeFlags).
var pruneStoreFlags = []string{"store", "identity", "cache", "cache-size"}

// storeArgs picks pruneStoreFlags out of a filter's arguments, given as
// --flag value, --flag=value or with one dash, each as --flag=value.
func storeArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		if !slices.Contains(pruneStoreFlags, name) {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		out = append(out, "--"+name+"="+value)
	}
	return out
}

// sessionFiles lists the *.jsonl files under each directory root and the
// files each glob root names (sessions.Find), a bad pattern being a usage
// error.
func sessionFiles(roots []string) ([]string, error) { return findSessions(roots, false) }

// findSessions is sessions.Find with its errors worded.
func findSessions(roots []string, strict bool) ([]string, error) {
	files, err := sessions.Find(roots, strict)
	var (
		glob    *sessions.GlobError
		nomatch *sessions.NoMatchError
	)
	switch {
	case errors.As(err, &glob):
		return nil, usagef(msgWatchGlob, glob.Pattern, glob.Err)
	case errors.As(err, &nomatch):
		return nil, fmt.Errorf(msgPruneNoMatch, nomatch.Root)
	}
	return files, err
}

// readWatchState is sessions.ReadState with its errors worded.
func readWatchState(path string) (*sessions.State, error) {
	st, err := sessions.ReadState(path)
	var damaged *sessions.DamagedStateError
	if errors.As(err, &damaged) {
		return nil, fmt.Errorf(msgWatchState, damaged.Path, damaged.Err)
	}
	return st, err
}

// sleep waits d, or until ctx is done (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// filterCommands are the commands watch can run in place.
func filterCommands() []string {
	return []string{"extract", "restore", "roll", "trim", "archive"}
}
