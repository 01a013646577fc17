package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/docs"
	"github.com/bstools/bs/filters/agent"
	"github.com/bstools/bs/filters/rules"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/clidoc"
	"github.com/bstools/bs/internal/inputs"
	"github.com/bstools/bs/internal/linecheck"
	"github.com/bstools/bs/internal/logvoice"
	"github.com/bstools/bs/internal/output"
)

// Exit codes, the contract of DESIGN §5.
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitBadRule     = 3
	exitBadInput    = 4
	exitAbove       = 5 // bs gauge --fail-above: the context is above the ratio
	exitInterrupted = 130
)

// usageError is a mistake in how bs was called; help is the command whose
// --help the hint names, when not the one that ran (the filter bs watch
// checks).
type usageError struct{ msg, help string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// hinted is an error shown with a hint on the line after it.
type hinted struct {
	error
	hint string
}

func (e *hinted) Unwrap() error { return e.error }

// reported marks an error whose message has already been shown.
type reported struct{ code int }

func (e *reported) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run is main without os.Exit, so tests can call it.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := output.New(stdout)
	app := newApp(stdin, out, stderr)
	app.Metadata = map[string]any{argsKey: args}
	// The command named for messages, read before the run, which adds
	// urfave's help command to the list.
	cmd := clidoc.CommandOf(args, app.Commands)
	err := app.RunContext(ctx, args)
	if out.Err() != nil {
		// Output that could not be written is the failure, whatever the
		// command made of it (or whether it looked).
		err = out.Err()
	}
	return exitCode(ctx, ui{stderr}, cmd, err)
}

// exitCode maps an error to its exit code and shows it: the one place that
// does either.
func exitCode(ctx context.Context, u ui, cmd string, err error) int {
	if err == nil {
		// A filter that a signal stopped while it waited for input on a
		// pipe sees the input end and finishes without an error, but its
		// output may be cut short: say so, as when it stops mid-file.
		// bs watch, whose work is to run until stopped, ends cleanly.
		if ctx.Err() != nil && cmd != "watch" && cmd != "ui" {
			u.errorf(cmd, msgInterrupted)
			return exitInterrupted
		}
		return exitOK
	}
	var (
		rep   *reported
		write *output.WriteError
		usage *usageError
		bad   *transcript.BadLineError
		rule  *rules.CompileError
	)
	switch {
	case errors.As(err, &write):
		u.errorf(cmd, "%v", write)
		return exitFailure
	case errors.As(err, &rep):
		return rep.code
	case ctx.Err() != nil && errors.Is(err, context.Canceled):
		u.errorf(cmd, msgInterrupted)
		return exitInterrupted
	case errors.As(err, &usage):
		u.errorf(cmd, "%s", usage.msg)
		if help := cmp.Or(usage.help, cmd); help != "" {
			u.hintf(hintHelp, help)
		}
		return exitUsage
	case errors.As(err, &rule):
		u.errorf(cmd, msgBadRule, rule.Rule, rule.Err)
		u.hintf(hintRule)
		return exitBadRule
	case errors.As(err, &bad):
		u.errorf(cmd, msgBadLineStrict, bad.Name, bad.Line, bad.Err)
		u.hintf(hintStrict)
		return exitBadInput
	}
	show := func(err error) {
		if disk, ok := output.DiskError(err); ok {
			// The full disk, not the blob it was writing.
			if disk.Store != "" {
				u.errorf(cmd, msgStoreDisk, disk.Store, disk.Err)
			} else {
				u.errorf(cmd, "%s: %v", disk.Path, disk.Err)
			}
			return
		}
		u.errorf(cmd, "%v", err)
	}
	var files inputs.FileErrors
	if errors.As(err, &files) {
		// Each file's failure on a line of its own.
		for _, e := range files {
			show(e)
		}
	} else {
		show(err)
	}
	var h *hinted
	if errors.As(err, &h) {
		u.hintf("%s", h.hint)
	}
	if errors.Is(err, blobstore.ErrNoIdentity) {
		u.hintf(hintNoIdentity)
	}
	return exitFailure
}

// misplacedFlag is clidoc.MisplacedFlag of c's flags: the first of args
// that names one, or "".
func misplacedFlag(c *cli.Context, args []string) string {
	return clidoc.MisplacedFlag(c.Command.Flags, commandLine(c), args)
}

// argsKey holds the command line in the app's Metadata.
const argsKey = "args"

// commandLine is the command line bs was run with.
func commandLine(c *cli.Context) []string {
	line, _ := c.App.Metadata[argsKey].([]string)
	return line
}

// checkLine runs the command line line with commands that only check
// their arguments (checkArgs) and then stop, doing none of their work: for
// bs watch to check the filter it is given once rather than fail on every
// file.
func checkLine(ctx context.Context, line []string) error {
	app := newApp(strings.NewReader(""), io.Discard, io.Discard)
	clidoc.CheckOnly(app, checkArgs) // after withUsageErrors' checks
	return app.RunContext(ctx, line)
}

// runLine runs the command line line in this process as bs would run it,
// for bs watch's passes and bs ui's actions; its error is neither shown
// nor mapped to an exit code yet (exitCode).
func runLine(ctx context.Context, line []string, stdout, stderr io.Writer) error {
	app := newApp(strings.NewReader(""), stdout, stderr)
	app.Metadata = map[string]any{argsKey: line}
	return app.RunContext(ctx, line)
}

// selfLine is how a command line that runs bs as it runs now begins:
// "bs", and --config FILE when given.
func selfLine(c *cli.Context) []string {
	if cfg := c.String("config"); cfg != "" {
		return []string{"bs", "--config", cfg}
	}
	return []string{"bs"}
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "bs",
		Usage:   "keep agent session transcripts lean without losing a byte",
		Version: clidoc.Version(),
		Description: docs.BsDescription + "\n\n" + exitStatusLine() + "\n\n" +
			"'bs --version' (or -v) names the build.",
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "config", EnvVars: []string{"BS_CONFIG"}, Usage: "the configuration file (default: $XDG_CONFIG_HOME/bs/config.yaml; see 'bs config')"},
		},
		ExitErrHandler: func(*cli.Context, error) {}, // exit codes are mapped in run, not inside urfave
		// A repeatable flag takes each value whole: a jq rule, a
		// learning or a glob may hold commas. Lists that are documented
		// as comma-separated (BS_ENCRYPT_TO) are split where they are read.
		DisableSliceFlagSeparator: true,
		OnUsageError: func(c *cli.Context, err error, _ bool) error {
			return flagError(c, c.App.Flags, err)
		},
		Action: func(c *cli.Context) error {
			if c.NArg() == 0 {
				return cli.ShowAppHelp(c)
			}
			return usagef(msgUnknownCommand, c.Args().First())
		},
		Commands: withUsageErrors(
			extractCommand(),
			restoreCommand(),
			gaugeCommand(),
			rollCommand(),
			searchCommand(),
			indexCommand(),
			trimCommand(),
			checkpointCommand(),
			archiveCommand(),
			watchCommand(),
			configCommand(),
			statsCommand(),
			mcpCommand(),
			toolCommand(),
			skillCommand(),
			storeCommand(),
			pruneCommand(),
			uiCommand(),
			completionCommand(),
		),
	}
	for _, c := range app.Commands {
		clidoc.WithDocs(c, c.Name, docs.Descriptions, docs.Examples)
	}
	return app
}

// withUsageErrors makes a command's flag errors usage errors (exit 2, one
// line on stderr) instead of urfave's help text on standard output, where
// a transcript belongs.
func withUsageErrors(cmds ...*cli.Command) []*cli.Command {
	for _, c := range cmds {
		clidoc.Tidy(c)
		c.OnUsageError = func(ctx *cli.Context, err error, _ bool) error {
			return flagError(ctx, c.Flags, err)
		}
		before := c.Before
		if before == nil {
			before = applyConfig
		}
		c.Before = func(c *cli.Context) error {
			if err := before(c); err != nil {
				return err
			}
			return finiteFlags(c)
		}
	}
	return cmds
}

// finiteFlags refuses a ratio flag given NaN or an infinity, which
// strconv takes for numbers: every comparison with NaN is false, so a
// --trigger NaN would roll always and a --fail-above NaN never fail.
func finiteFlags(c *cli.Context) error {
	if name, v, ok := clidoc.NotFinite(c); ok {
		return usagef(msgNotFinite, clidoc.Dashed(name), v)
	}
	return nil
}

// flagError is the usage error of a flag urfave/cli refused. An unknown
// flag is named as the user typed it, with the nearest of flags when one
// is near: "unknown flag --formt (did you mean --format?)".
func flagError(c *cli.Context, flags []cli.Flag, err error) error {
	var line []string
	if c != nil {
		line = commandLine(c)
	}
	if name, value, missing, ok := clidoc.BadValue(err); ok {
		if missing {
			return usagef(msgNoValue, clidoc.Dashed(name))
		}
		if want := wantKind[clidoc.FlagKind(flags, name)]; want != "" {
			return usagef(msgBadValue, clidoc.Dashed(name), value, want)
		}
	}
	name, typed, ok := clidoc.UnknownFlag(err, line)
	if !ok {
		return &usageError{msg: err.Error()}
	}
	msg := fmt.Sprintf(msgUnknownFlag, typed)
	if near := clidoc.NearestFlag(name, flags); near != "" {
		msg += fmt.Sprintf(msgDidYouMean, near)
	}
	return &usageError{msg: msg}
}

// notNegative refuses the first of c's flags named (integers, numbers or
// durations) that is below 0; aboveZero the first that is not above 0. A
// flag the command lacks reads as 0.
func notNegative(c *cli.Context, names ...string) error {
	return firstOut(c, msgNegative, func(v float64) bool { return v < 0 }, names)
}

func aboveZero(c *cli.Context, names ...string) error {
	return firstOut(c, msgAboveZero, func(v float64) bool { return v <= 0 }, names)
}

func firstOut(c *cli.Context, msg string, out func(float64) bool, names []string) error {
	for _, name := range names {
		var v float64
		switch x := c.Value(name).(type) {
		case int:
			v = float64(x)
		case float64:
			v = x
		case time.Duration:
			v = float64(x)
		}
		if out(v) {
			return usagef(msg, clidoc.Dashed(name), c.Value(name))
		}
	}
	return nil
}

// checkArgs is what a command checks of its arguments before it runs,
// for bs watch to check the filter it is given once rather than fail on
// every file: its flags (urfave/cli has parsed them by now), the common
// ones' values, and extract's own options as runExtract reads them. A
// value only another command's action checks is still found per file.
func checkArgs(c *cli.Context) error {
	if _, err := parseCommon(c); err != nil {
		var usage *usageError
		// -i without a file is what watch gives a filter before it adds
		// the file; anything else the common flags refuse is an error.
		if !errors.As(err, &usage) || usage.msg != msgInPlaceStdin {
			return err
		}
	}
	if c.Command.Name == "extract" {
		// Watch runs it in place.
		if _, err := extractOptions(c); err != nil {
			return err
		}
	}
	return nil
}

// commonFlags are accepted by every filter.
func commonFlags() []cli.Flag {
	return append(append(append(storeFlags(), readFlags()...),
		&cli.BoolFlag{Name: "in-place", Aliases: []string{"i"}, Usage: "rewrite the named files safely instead of writing standard output"},
	), inPlaceFlags()...)
}

// commonFlagsWhere returns the common flags whose name keep takes.
func commonFlagsWhere(keep func(name string) bool) []cli.Flag {
	var flags []cli.Flag
	for _, f := range commonFlags() {
		if keep(f.Names()[0]) {
			flags = append(flags, f)
		}
	}
	return flags
}

// readFlags are the common flags of a command that only reads
// transcripts (gauge): no store, nothing to rewrite in place.
func readFlags() []cli.Flag {
	return []cli.Flag{
		formatFlag(),
		nowFlag(),
		&cli.BoolFlag{Name: "strict", Usage: "treat a line that is not valid JSON as an error (exit 4) instead of passing it through"},
		logLevelFlag(),
	}
}

// formatFlag is --format, the transcript dialect, auto by default.
func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "auto", Usage: "transcript dialect: " + transcript.DialectNames()}
}

// nowFlag is --now, the time to act at.
func nowFlag() cli.Flag {
	return &cli.StringFlag{Name: "now", Usage: "the time to act at, RFC 3339 (default: the clock)", EnvVars: []string{"BS_NOW"}}
}

// logLevelFlag is --log-level, warn by default.
func logLevelFlag() cli.Flag {
	return &cli.StringFlag{Name: "log-level", Value: "warn", Usage: "log records on stderr at this level and above: debug, info, warn, error"}
}

// common holds the parsed common flags, and the inputs they say how to
// go over (Each, Read).
type common struct {
	inputs.Inputs
	ui       ui
	cmd      string
	now      time.Time
	strict   bool
	log      *slog.Logger
	storeDir string
	storeOpt blobstore.OpenOptions // --cache, --encrypt-to, --identity
}

func parseCommon(c *cli.Context) (*common, error) {
	errw := c.App.ErrWriter
	cm := &common{ui: ui{errw}, cmd: c.Command.Name, strict: c.Bool("strict")}
	cm.Files, cm.Stdin, cm.Stdout, cm.InPlace = c.Args().Slice(), c.App.Reader, c.App.Writer, c.Bool("in-place")
	cm.Progress, cm.Checked, cm.Refused = errw, cm.checked, cm.refused
	cm.ReadLabel = func(path string) string { return fmt.Sprintf(prgRead, cm.cmd, path) }
	if err := flagAfterFile(c, cm.Files); err != nil {
		return nil, err
	}
	var err error
	if cm.Format, err = transcript.ParseDialect(c.String("format")); err != nil {
		return nil, usagef("%v", err)
	}
	cm.now = time.Now()
	if s := c.String("now"); s != "" {
		if cm.now, err = time.Parse(time.RFC3339, s); err != nil {
			return nil, usagef(msgBadNow, s)
		}
	}
	if cm.log, err = newLogger(c); err != nil {
		return nil, err
	}
	if err = cm.readStoreFlags(c); err != nil {
		return nil, err
	}
	if cm.InPlace && len(cm.Files) == 0 {
		return nil, usagef(msgInPlaceStdin)
	}
	if cm.InPlace && slices.Contains(cm.Files, "-") {
		return nil, usagef(msgInPlaceDash)
	}
	if cm.Rewrite, err = parseInPlace(c); err != nil {
		return nil, err
	}
	return cm, nil
}

// flagAfterFile refuses an argument among files, a command's last
// arguments, that looks like a flag: urfave/cli stops reading flags at the
// first argument.
func flagAfterFile(c *cli.Context, files []string) error {
	for _, f := range clidoc.FlagLike(commandLine(c), files) {
		if strings.HasPrefix(f, "-") && f != "-" {
			return usagef(msgFlagAfterFile, f)
		}
	}
	return nil
}

// newLogger is the slog logger on stderr at --log-level.
func newLogger(c *cli.Context) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.String("log-level"))); err != nil {
		return nil, usagef(msgBadLogLevel, c.String("log-level"))
	}
	u := ui{c.App.ErrWriter}
	return slog.New(logvoice.New(c.App.ErrWriter, level, func(line string) { u.warnf("%s", line) })), nil
}

// parseLogLevel gives a command that reads no transcript its ui and logger.
func parseLogLevel(c *cli.Context) (*common, error) {
	log, err := newLogger(c)
	if err != nil {
		return nil, err
	}
	return &common{ui: ui{c.App.ErrWriter}, cmd: c.Command.Name, log: log}, nil
}

// openStore opens --store: a directory or a URL (see blobstore.Open).
func (cm *common) openStore() (blobstore.Store, error) {
	s, err := blobstore.Open(context.Background(), cm.storeDir, cm.storeOpt)
	if err != nil {
		return nil, fmt.Errorf(msgStoreOpen, cm.storeDir, err)
	}
	if !blobstore.IsURL(cm.storeDir) {
		output.NoteStore(cm.storeDir)
	}
	return s, nil
}

// openReading opens --store for a command that only reads blobs from it
// (restore, stats --exact, archive show): a local store that is not there
// reads as an empty one, each blob not found, and is not created.
func (cm *common) openReading() (blobstore.Store, error) {
	s, err := cm.openMustExist()
	if errors.Is(err, blobstore.ErrNoStore) {
		return &blobstore.Mem{}, nil
	}
	return s, err
}

// openMustExist opens --store creating nothing: a local store that is not
// there is blobstore.ErrNoStore, for the caller to word.
func (cm *common) openMustExist() (blobstore.Store, error) {
	opt := cm.storeOpt
	opt.MustExist = true
	s, err := blobstore.Open(context.Background(), cm.storeDir, opt)
	if err != nil && !errors.Is(err, blobstore.ErrNoStore) {
		return nil, fmt.Errorf(msgStoreOpen, cm.storeDir, err)
	}
	return s, err
}

// onBadLine warns about a line that is not valid JSON, or stops the run
// under --strict.
func (cm *common) onBadLine(e *transcript.BadLineError) error {
	return cm.onBadLineSaying(msgBadLine)(e)
}

// onBadLineSaying is onBadLine with another warning, of the same
// arguments: the file, the line and what is wrong with it. Each file
// names its first few bad lines; the rest are counted (checked).
func (cm *common) onBadLineSaying(warning string) func(*transcript.BadLineError) error {
	return func(e *transcript.BadLineError) error {
		if cm.strict {
			return e
		}
		if cm.BadLines.Warn(e) {
			cm.ui.warnf(warning, e.Name, e.Line, e.Err)
		}
		return nil
	}
}

// sessionName names a transcript for log records: "agent/session" for an
// OpenClaw layout (<agent>/sessions/<id>.jsonl), else the file's base name.
func sessionName(path string) string {
	if path == "-" {
		return ""
	}
	return agent.SessionName(path)
}

// checked words what an input held besides the bad lines already warned
// about (inputs.Inputs.Checked): the rest of them, and a forced --format
// that matches none of its entries; one that held no valid JSON line at
// all is no transcript, an error.
func (cm *common) checked(name string, chk linecheck.Check) error {
	if chk.Detected != transcript.Unknown {
		cm.ui.warnf(msgFormatNoMatch, name, cm.Format, chk.Detected)
	}
	if chk.Unwarned > 0 {
		cm.ui.warnf(msgMoreBadLines, name, chk.Unwarned)
	}
	if chk.NoTranscript {
		return fmt.Errorf(msgNotTranscript, name, chk.Lines)
	}
	return nil
}

// refused words the refusal of an in-place rewrite (inputs.Inputs.Refused);
// a file left alone on purpose is logged, not an error.
func (cm *common) refused(path string, err error) error {
	err = worded(err)
	var skip *skipped
	if errors.As(err, &skip) {
		cm.log.Info("left unchanged", "file", path, "reason", skip.reason)
		return nil
	}
	return err
}
