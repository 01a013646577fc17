package checkpoint

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// The triggers of meta.trigger besides auto-NNpct.
const (
	TriggerCompaction = "compaction"
	TriggerSessionEnd = "session-end"
	triggerManual     = "manual"
)

// dedupRatio is the least relative change of input tokens since the last
// checkpoint for which an automatic checkpoint is written again (§5.2).
const dedupRatio = 0.05

// Options configure a checkpoint run.
type Options struct {
	Dir         Dir
	SessionKey  string // "" means the session header's id, else the file name
	SessionFile string // recorded in meta.session_file; "" means the input's name
	Threshold   float64
	Force       bool   // write whatever the utilization
	Trigger     string // compaction or session-end: write, and say why
	Keep        int    // checkpoints kept per key (0: all)
	Learnings   []string
	Now         time.Time
	Format      transcript.Dialect
	Gauge       gauge.Options
	OnBadLine   func(*transcript.BadLineError) error
	// NoticeFrom is the utilization from which the agent is told of its
	// context (notice); Inject appends that notice to the transcript, in
	// the shape its runtime takes injected context in.
	NoticeFrom float64
	Inject     bool
}

// Defaults are the defaults of seed 003.
func Defaults() Options {
	return Options{Threshold: 0.8, Keep: 5, NoticeFrom: NoticeFrom, Inject: true}
}

// Outcome says what a run did.
type Outcome struct {
	Key     string
	Gauge   gauge.Result
	Written *Checkpoint // nil when no checkpoint was written
	Path    string
	Skipped string // why none was written
	// Saved says that a checkpoint of this context is on disk: written
	// now, or the last one, from which the tokens moved too little to
	// write another.
	Saved bool
	// Notice is what the agent is told of its context (notice), "" for
	// nothing; Injected says that it was appended to the transcript.
	Notice   string
	Injected bool
}

// Error is a checkpoint that could not be taken. The stream has been passed
// through in full when Run returns it.
type Error struct {
	Key string
	Err error
}

func (e *Error) Error() string { return fmt.Sprintf("checkpoint for %s: %v", e.Key, e.Err) }
func (e *Error) Unwrap() error { return e.Err }

// ErrNoKey is returned when the session key cannot be known: standard input
// with no session header and no --session-key.
var ErrNoKey = errors.New("no session key: the transcript names no session and comes from standard input")

// Run passes the transcript r to w unchanged and, when the gauge reads at or
// above the threshold (or the run is forced or triggered), writes a
// checkpoint of it. From opt.NoticeFrom on, with opt.Inject, it then
// appends the agent's notice of its context (Outcome.Notice) to w, unless
// the last notice it appended there said the same. Errors writing w are
// returned as they are; errors taking the checkpoint as *Error, after
// everything was passed through.
func Run(name string, r io.Reader, w io.Writer, opt Options) (Outcome, error) {
	out, obs, err := run(name, r, w, opt)
	var cpErr *Error
	if err != nil && !errors.As(err, &cpErr) {
		return out, err
	}
	out.Notice = notice(out.Gauge, opt.NoticeFrom, opt.Threshold, out.Saved)
	if opt.Inject && obs != nil && w != nil {
		var werr error
		if out.Injected, werr = appendNotice(w, obs, out.Notice, opt.Now); werr != nil {
			return out, werr
		}
	}
	return out, err
}

func run(name string, r io.Reader, w io.Writer, opt Options) (Outcome, *observer, error) {
	var out Outcome
	var bad error
	onBad := func(e *transcript.BadLineError) error {
		if opt.OnBadLine != nil {
			if err := opt.OnBadLine(e); err != nil && bad == nil {
				bad = err // --strict: still pass everything through
			}
		}
		return nil
	}
	obs, g, err := observeAndGauge(name, r, w, opt, onBad)
	if err != nil {
		return out, nil, err
	}
	if bad != nil {
		return out, nil, bad
	}
	out.Gauge = g
	out.Key = opt.SessionKey
	if out.Key == "" {
		out.Key = SessionKeyFor(name, obs.sessionID())
	}
	if out.Key == "" {
		return out, obs, &Error{Key: "-", Err: ErrNoKey}
	}
	trigger := opt.Trigger
	switch {
	case trigger != "":
	case opt.Force:
		trigger = triggerManual
	case out.Gauge.Ratio >= opt.Threshold:
		trigger = fmt.Sprintf("auto-%dpct", int(math.Round(opt.Threshold*100)))
	default:
		out.Skipped = fmt.Sprintf("utilization %.2f is below the threshold %.2f", out.Gauge.Ratio, opt.Threshold)
		return out, obs, nil
	}
	automatic := opt.Trigger == "" && !opt.Force
	file := opt.SessionFile
	if file == "" {
		file = name
	}
	err = opt.Dir.Locked(out.Key, func() error {
		prev, _, err := opt.Dir.Latest(out.Key)
		if err != nil && !errors.Is(err, ErrNone) {
			return err
		}
		if automatic && prev != nil && !moved(prev.Meta.TokenUsage.InputTokens, out.Gauge.Tokens) {
			out.Skipped = fmt.Sprintf("input tokens moved less than %.0f%% since %s", dedupRatio*100, prev.Meta.CheckpointID)
			out.Saved = true // that one is still this context's
			return nil
		}
		id, err := opt.Dir.next(out.Key)
		if err != nil {
			return err
		}
		cp := buildCheckpoint(obs, prev, input{ID: id, SessionKey: out.Key, SessionFile: file,
			CreatedAt: opt.Now.UTC().Format(time.RFC3339), Trigger: trigger, Gauge: out.Gauge, Learnings: opt.Learnings})
		path, err := opt.Dir.write(cp, opt.Keep)
		if path != "" {
			out.Written, out.Path, out.Saved = cp, path, true
		}
		return err
	})
	if err != nil {
		return out, obs, &Error{Key: out.Key, Err: err}
	}
	return out, obs, nil
}

// moved reports whether tokens differ from prev by at least dedupRatio.
func moved(prev, tokens int) bool {
	if prev <= 0 {
		return true
	}
	return math.Abs(float64(tokens-prev)) >= dedupRatio*float64(prev)
}

// observeAndGauge passes r to w while observing it, and gauges it the
// cheapest way: a regular file from its end once observed (the gauge needs
// only the lines after the last usage), a pipe by gauge.Measure on a second
// goroutine, which parses only the lines that can reset the accounting.
func observeAndGauge(name string, r io.Reader, w io.Writer, opt Options, onBad func(*transcript.BadLineError) error) (*observer, gauge.Result, error) {
	gopt := opt.Gauge
	gopt.Format = opt.Format
	gopt.OnBadLine = func(*transcript.BadLineError) error { return nil } // observe reports them
	if f, ok := r.(*os.File); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			obs, err := observe(name, f, w, opt.Format, onBad)
			if err != nil {
				return nil, gauge.Result{}, err
			}
			g, err := gauge.MeasureFile(f, gopt)
			return obs, g, err
		}
	}
	pr, pw := io.Pipe()
	var g gauge.Result
	var gerr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		g, gerr = gauge.Measure(name, r, pw, gopt)
		pw.CloseWithError(gerr)
	}()
	obs, err := observe(name, pr, w, opt.Format, onBad)
	pr.CloseWithError(io.ErrClosedPipe) // unblocks the gauge if observe stopped early
	<-done
	if err != nil {
		return nil, gauge.Result{}, err
	}
	return obs, g, gerr
}

// observe passes r to w (when w is not nil) line by line, unchanged, and
// returns what an observer saw of it.
func observe(name string, r io.Reader, w io.Writer, format transcript.Dialect, onBad func(*transcript.BadLineError) error) (*observer, error) {
	obs := newObserver()
	src := transcript.NewSource(name, r, format, onBad)
	var bw *bufio.Writer
	if w != nil {
		bw = bufio.NewWriterSize(w, 256<<10)
	}
	for {
		line, t, err := src.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if bw != nil {
			if _, err := bw.Write(line.Body); err != nil {
				return nil, err
			}
			if line.Newline {
				if err := bw.WriteByte('\n'); err != nil {
					return nil, err
				}
			}
		}
		if t != nil {
			obs.add(t, src.Dialect())
		}
		obs.endsLine = line.Newline || len(line.Body) == 0
	}
	obs.dialect = src.Dialect()
	if bw != nil {
		if err := bw.Flush(); err != nil {
			return nil, err
		}
	}
	return obs, nil
}

// SessionKeyFor is the key of a transcript with no --session-key: the id
// its header names, else its file name without .jsonl ("" for standard
// input).
func SessionKeyFor(name, sessionID string) string {
	if sessionID != "" {
		return sessionID
	}
	if name == "-" || name == "" {
		return ""
	}
	return strings.TrimSuffix(filepath.Base(name), ".jsonl")
}

// KeyOfFile is the session key of a transcript file with no --session-key:
// the session its first lines name, else its file name.
func KeyOfFile(path string, format transcript.Dialect) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	obs := newObserver()
	src := transcript.NewSource(path, f, format, func(*transcript.BadLineError) error { return nil })
	for i := 0; i < transcript.DetectLines && obs.SessionID == ""; i++ {
		_, t, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", err
		}
		if t != nil {
			obs.add(t, src.Dialect())
		}
	}
	return SessionKeyFor(path, obs.sessionID()), nil
}
