package main

import (
	"context"
	"encoding/json"
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

	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/progress"
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

// watchState is watch.json: what each file looked like after its last
// pass, and when retention last ran.
type watchState struct {
	Files     map[string]fileStamp `json:"files"`
	Retention time.Time            `json:"retention,omitzero"`
}

// fileStamp identifies a version of a file without reading it.
type fileStamp struct {
	Size  int64     `json:"size"`
	Mtime time.Time `json:"mtime"`
	Inode uint64    `json:"inode"`
}

func stampOf(info os.FileInfo) fileStamp {
	_, ino := inplace.FileID(info)
	return fileStamp{Size: info.Size(), Mtime: info.ModTime().UTC(), Inode: ino}
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
		if _, err := os.Stat(r); errors.Is(err, fs.ErrNotExist) && !hasGlob(r) {
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
		if old, ok := st.Files[f]; ok && old == stampOf(info) {
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
		st.Files[f] = stampOf(after)
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
	return writeWatchState(w.statePath, st)
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
// files each glob root names, sorted, without duplicates.
func sessionFiles(roots []string) ([]string, error) { return findSessions(roots, false) }

// findSessions is sessionFiles; when strict, a directory that cannot be
// read or a root that names nothing is an error instead of being skipped.
// Symbolic links are followed: a linked root, linked directories inside
// it (each real directory walked once, so a loop ends) and linked *.jsonl
// files. A glob match that is a directory is walked like a root.
func findSessions(roots []string, strict bool) ([]string, error) {
	var files []string
	seen := map[string]bool{} // real directories walked
	var walk func(dir string) error
	walk = func(dir string) error {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			if strict {
				return err
			}
			return nil
		}
		if seen[real] {
			return nil
		}
		seen[real] = true
		des, err := os.ReadDir(dir)
		if err != nil {
			if strict {
				return err
			}
			return nil // unreadable corners are skipped, not fatal
		}
		for _, d := range des {
			p := filepath.Join(dir, d.Name())
			mode := d.Type()
			if mode&fs.ModeSymlink != 0 {
				info, err := os.Stat(p)
				if err != nil {
					continue // a dangling link names nothing
				}
				mode = info.Mode().Type()
			}
			switch {
			case mode.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case mode.IsRegular() && strings.HasSuffix(p, ".jsonl") && !strings.HasPrefix(d.Name(), "."):
				files = append(files, p)
			}
		}
		return nil
	}
	for _, r := range roots {
		info, err := os.Stat(r)
		if err == nil && info.IsDir() {
			if err := walk(r); err != nil {
				return nil, err
			}
			continue
		}
		matches, err := filepath.Glob(r)
		if err != nil {
			return nil, usagef(msgWatchGlob, r, err)
		}
		if strict && len(matches) == 0 {
			return nil, fmt.Errorf(msgPruneNoMatch, r)
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			switch {
			case err != nil:
			case info.IsDir():
				if err := walk(m); err != nil {
					return nil, err
				}
			case info.Mode().IsRegular():
				files = append(files, m)
			}
		}
	}
	for i, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			files[i] = abs
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

func readWatchState(path string) (*watchState, error) {
	st := &watchState{Files: map[string]fileStamp{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, fmt.Errorf(msgWatchState, path, err)
	}
	if st.Files == nil {
		st.Files = map[string]fileStamp{}
	}
	return st, nil
}

// writeWatchState replaces the state file atomically.
func writeWatchState(path string, st *watchState) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".watch-*.json")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
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

// hasGlob reports whether a root is a pattern (filepath.Match's
// metacharacters) rather than a name.
func hasGlob(root string) bool { return strings.ContainsAny(root, `*?[\`) }
