// Package watch makes the passes of bs watch: each pass stats the session
// files under its roots and runs a filter in place on those that changed
// since the last pass (as a state file keeps them), then runs retention
// when it is due. Running a command and wording its refusals are the
// caller's: the watcher is given both as functions.
package watch

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/sessions"
)

// Watcher makes the passes.
type Watcher struct {
	Roots  []string // directories walked for *.jsonl, or globs
	Filter []string // the filter's command line, without "bs", -i and the file
	Log    Logger
	// Progress is where the progress of a pass is drawn (on a terminal
	// only), labelled Label, counting files in Unit.
	Progress     io.Writer
	Label, Unit  string
	StatePath    string        // the state file: each file's stamp, the last retention
	RetentionDue time.Duration // run retention this often (0: never)
	Retention    time.Duration // retention's --older-than
	// Run runs a bs command line (without "bs").
	Run func(ctx context.Context, args []string) error
	// Busy says whether an error of Run is a file that could not be
	// rewritten safely now, and why: it is tried again on the next pass.
	Busy func(err error) (why string, ok bool)
}

// Logger is the part of *slog.Logger the watcher uses.
type Logger interface {
	Info(msg string, args ...any)
	Warn(msg string, args ...any)
}

// FailedError is a single pass (once) in which the filter, or retention,
// failed on Runs of its runs: each was logged as it failed.
type FailedError struct{ Runs int }

func (e *FailedError) Error() string { return fmt.Sprintf("%d runs failed", e.Runs) }

// Watch makes a pass every interval until ctx is done (a clean end), or
// one pass only, whose failed runs are then a *FailedError (a watch that
// goes on logs them and goes on). A pass's error ends it: a bad glob among
// the roots (*sessions.GlobError), a damaged state file
// (*sessions.DamagedStateError), a state file that cannot be written.
func (w *Watcher) Watch(ctx context.Context, interval time.Duration, once bool) error {
	for {
		failed, err := w.pass(ctx)
		if err != nil && ctx.Err() == nil {
			return err
		}
		if once && failed > 0 && ctx.Err() == nil {
			return &FailedError{failed}
		}
		if once || ctx.Err() != nil {
			return nil
		}
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil // stopped by a signal: a clean end
		case <-t.C:
		}
	}
}

// pass runs the filter on every changed file, then retention when due,
// and counts the runs that failed.
func (w *Watcher) pass(ctx context.Context) (failed int, err error) {
	if err := os.MkdirAll(filepath.Dir(w.StatePath), 0o700); err != nil {
		return 0, err
	}
	unlock, err := lockedfile.MutexAt(w.StatePath + ".lock").Lock()
	if err != nil {
		return 0, err
	}
	defer unlock()
	st, err := sessions.ReadState(w.StatePath)
	if err != nil {
		return 0, err
	}
	files, err := sessions.Find(w.Roots, false)
	if err != nil {
		return 0, err
	}
	bar := progress.New(w.Progress, w.Label, int64(len(files)), false, w.Unit)
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
		args := append(slices.Clone(w.Filter), "-i", f)
		err = w.Run(ctx, args)
		after, serr := os.Stat(f)
		if why, busy := w.Busy(err); busy {
			w.Log.Info("busy, next pass", "file", f, "reason", why)
			continue
		}
		switch {
		case err != nil:
			if ctx.Err() == nil {
				w.Log.Warn("filter failed", "file", f, "filter", w.Filter[0], "err", err)
				failed++
			}
			continue
		case serr != nil:
			continue
		}
		freed := info.Size() - after.Size()
		w.Log.Info("pass", "file", f, "filter", w.Filter[0], "bytes_before", info.Size(), "bytes_after", after.Size(),
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
	if w.RetentionDue > 0 && time.Since(st.Retention) >= w.RetentionDue && ctx.Err() == nil {
		args := []string{"prune-retention", "--older-than", w.Retention.String()}
		for _, r := range w.Roots {
			args = append(args, "--sessions", r)
		}
		// Prune the store the filter writes to, read as the filter reads it.
		args = append(args, storeArgs(w.Filter[1:])...)
		if err := w.Run(ctx, args); err != nil {
			w.Log.Warn("retention failed", "err", err)
			failed++
		} else {
			st.Retention = time.Now().UTC()
		}
	}
	return failed, sessions.WriteState(w.StatePath, st)
}

// pruneStoreFlags are the store flags of a filter that prune-retention
// must be given too: which store, and how to read it.
var pruneStoreFlags = []string{"store", "identity", "cache", "cache-size"}

// storeArgs picks the flags that name and open the store out of a
// filter's arguments, given as --flag value, --flag=value or with one
// dash, each as --flag=value.
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
