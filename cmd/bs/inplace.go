package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/xdg"
)

// inPlaceFlags configure -i/--in-place.
func inPlaceFlags() []cli.Flag {
	return []cli.Flag{
		&cli.DurationFlag{Name: "lock-timeout", Value: 10 * time.Second, EnvVars: []string{"BS_LOCK_TIMEOUT"}, Usage: "in place: how long to wait for the runtime's <file>.lock and for other writers to close the file"},
		&cli.DurationFlag{Name: "quiet-period", Value: 2 * time.Second, EnvVars: []string{"BS_QUIET_PERIOD"}, Usage: "in place: refuse a file changed this recently (the agent may be writing it)"},
		&cli.BoolFlag{Name: "force", Usage: "in place: rewrite even a file changed within --quiet-period"},
		&cli.IntFlag{Name: "min-savings", EnvVars: []string{"BS_MIN_SAVINGS"}, Usage: "in place: rewrite only when the pass takes at least `TOKENS` out of the context (as bs gauge counts it), so a warm prompt cache is not invalidated for crumbs"},
		&cli.DurationFlag{Name: "idle", EnvVars: []string{"BS_IDLE"}, Usage: "in place: only touch files idle (unmodified) for longer than this, e.g. the provider's prompt-cache TTL (5m, 1h)"},
	}
}

// isInPlaceFlag is whether name is one of inPlaceFlags.
func isInPlaceFlag(name string) bool { return slices.Contains(inPlaceNames(), name) }

// inPlaceNames are the names of inPlaceFlags, read once: urfave/cli
// reads a flag's names with a regular expression.
var inPlaceNames = sync.OnceValue(func() []string {
	var names []string
	for _, f := range inPlaceFlags() {
		names = append(names, f.Names()[0])
	}
	return names
})

// parseInPlace reads the -i flags of the command cmd; the progress of a
// wait for the runtime's lock shows on standard error.
func parseInPlace(c *cli.Context) (inplace.Options, error) {
	ip := inPlaceOptions(c.Duration("lock-timeout"), c.Bool("force"), c.App.ErrWriter)
	ip.Quiet, ip.Idle, ip.MinSavings = c.Duration("quiet-period"), c.Duration("idle"), int64(c.Int("min-savings"))
	if err := notNegative(c, "lock-timeout", "quiet-period", "idle", "min-savings"); err != nil {
		return ip, err
	}
	return ip, nil
}

// inPlaceOptions are the options of a rewrite that waits up to lockTimeout
// for the runtime's lock, showing the wait on progress.
func inPlaceOptions(lockTimeout time.Duration, force bool, progress io.Writer) inplace.Options {
	return inplace.Options{
		LockTimeout: lockTimeout,
		Force:       force,
		StateDir:    xdg.State(),
		Measure:     measureTokens,
		Progress:    progress,
		WaitLabel: func(lock, holder string) (string, string) {
			return fmt.Sprintf(prgWaitLock, lock, holder), unitSeconds
		},
	}
}

// measureTokens counts a transcript's context as bs gauge does, for
// --min-savings.
func measureTokens(f *os.File) (int, error) {
	res, err := gauge.MeasureFile(f, gauge.Options{})
	return res.Tokens, err
}

// skipped is a file an in-place run left alone on purpose: not an error.
type skipped struct{ reason string }

func (s *skipped) Error() string { return s.reason }

// busyError is a file that could not be rewritten safely now: another
// process holds the runtime's lock or has the file open for writing, or it
// changed within the quiet period. Retrying later may work.
type busyError struct {
	path, why string
}

func (e *busyError) Error() string { return e.path + ": " + e.why }

// worded turns the refusals of a rewrite into what bs says of them.
func worded(err error) error {
	var (
		skip     *inplace.SkippedError
		notIdle  *inplace.NotIdleError
		little   *inplace.TooLittleError
		busy     *inplace.BusyError
		quiet    *inplace.QuietError
		held     *inplace.HeldOpenError
		locked   *inplace.LockedError
		replaced *inplace.ReplacedError
	)
	switch {
	case errors.As(err, &skip) && errors.As(skip.Reason, &notIdle):
		return &skipped{fmt.Sprintf(msgNotIdle, notIdle.Age.Round(time.Second), notIdle.Idle)}
	case errors.As(err, &skip) && errors.As(skip.Reason, &little):
		return &skipped{fmt.Sprintf(msgMinSavings, little.Freed, little.Min)}
	case errors.As(err, &busy) && errors.As(busy.Reason, &quiet):
		return &busyError{busy.Path, fmt.Sprintf(msgQuietPeriod, quiet.Age.Round(time.Millisecond), quiet.Quiet)}
	case errors.As(err, &busy) && errors.As(busy.Reason, &held):
		return &busyError{busy.Path, fmt.Sprintf(msgHeldOpen, strings.Join(held.Writers, ", "))}
	case errors.As(err, &busy) && errors.As(busy.Reason, &locked):
		return &busyError{busy.Path, fmt.Sprintf(msgRuntimeLocked, locked.Lock, locked.Holder, locked.Timeout)}
	case errors.As(err, &replaced):
		return fmt.Errorf(msgReplacedMeanwhile, replaced.Path)
	}
	return err
}
