package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/xdg"
)

func checkpointCommand() *cli.Command {
	d := checkpoint.Defaults()
	// The flags that checkpoint and some of its subcommands take alike.
	threshold := func() cli.Flag {
		return &cli.Float64Flag{Name: "threshold", Value: d.Threshold, Usage: "write when utilization is at or above this ratio"}
	}
	format := func() cli.Flag {
		return &cli.StringFlag{Name: "format", Value: "auto", Usage: "transcript dialect: " + strings.Join(transcript.DialectList(), ", ")}
	}
	createdAt := func() cli.Flag {
		return &cli.StringFlag{Name: "now", EnvVars: []string{"BS_NOW"}, Usage: "the current time (RFC 3339), for created_at"}
	}
	logLevel := func() cli.Flag {
		return &cli.StringFlag{Name: "log-level", Value: "warn", Usage: "debug, info, warn or error"}
	}
	return &cli.Command{
		Name:      "checkpoint",
		Usage:     "pass the transcript through and write a structured checkpoint when the context is nearly full",
		ArgsUsage: "[FILE...]",
		Flags: append(append(checkpointFlags(), checkpointInPlaceFlags()...),
			threshold(),
			&cli.BoolFlag{Name: "force", Usage: "write whatever the utilization (and even if little changed since the last checkpoint)"},
			&cli.StringFlag{Name: "trigger", Usage: "write now and record why: compaction or session-end"},
			&cli.IntFlag{Name: "keep", Value: d.Keep, Usage: "keep the last `N` checkpoints per session key (0 keeps all)"},
			&cli.StringSliceFlag{Name: "learning", Usage: "add a learning to the checkpoint (repeatable)"},
			&cli.IntFlag{Name: "context-window", Usage: "the window in tokens (default: from the transcript's model, else 200000)"},
			tokenizerFlag(),
			noticeFromFlag(),
			&cli.BoolFlag{Name: "notice", Usage: "append the agent's notice of its context to the transcript (the OpenClaw hook does)"},
			format(),
			createdAt(),
			&cli.BoolFlag{Name: "strict", Usage: "exit 4 on a line that is not valid JSON (after passing everything through)"},
			logLevel(),
			&cli.BoolFlag{Name: "in-place", Aliases: []string{"i"}, Usage: "rewrite the named files safely, to append a notice, instead of writing standard output"},
		),
		Action: runCheckpoint,
		Subcommands: withUsageErrors(
			&cli.Command{
				Name:      "render",
				Usage:     "print the text to put in the context after a compaction (at most 700 tokens)",
				ArgsUsage: "[--session-key KEY | FILE]",
				Flags: append(checkpointFlags(),
					&cli.StringFlag{Name: "tokenizer", Value: checkpoint.RenderTokenizer, Usage: "count the budget with the offline o200k or cl100k tokenizer, or chars4 (characters/4)"}),
				Action: runCheckpointRender,
			},
			&cli.Command{
				Name:      "inject",
				Usage:     "pass the transcript through and append the latest checkpoint's text as injected context",
				ArgsUsage: "[FILE]",
				Flags: append(checkpointFlags(),
					format(),
					&cli.StringFlag{Name: "now", EnvVars: []string{"BS_NOW"}, Usage: "the current time (RFC 3339), for the entry's timestamp"},
				),
				Action: runCheckpointInject,
			},
			&cli.Command{
				Name:      "list",
				Usage:     "list the checkpoints of a session key, or the session keys",
				ArgsUsage: "[--session-key KEY | FILE]",
				Flags: append(checkpointFlags(),
					&cli.BoolFlag{Name: "json", Usage: "print one JSON object per line"}),
				Action: runCheckpointList,
			},
			&cli.Command{
				Name:      "show",
				Usage:     "print a checkpoint file (the latest unless an ID is given)",
				ArgsUsage: "[--session-key KEY | FILE] [ID]",
				Flags:     checkpointFlags(),
				Action:    runCheckpointShow,
			},
			&cli.Command{
				Name:  "hook",
				Usage: "act on a Claude Code hook event read as JSON from standard input",
				Flags: append(checkpointFlags(),
					threshold(),
					noticeFromFlag(),
					&cli.IntFlag{Name: "keep", Value: d.Keep, Usage: "keep the last `N` checkpoints per session key"},
					createdAt(),
					logLevel(),
				),
				Action: runCheckpointHook,
			},
		),
	}
}

// checkpointInPlaceFlags are the -i flags that mean something to a run
// that only ever appends: not --min-savings, and --force is the
// checkpoint's own.
func checkpointInPlaceFlags() []cli.Flag {
	var flags []cli.Flag
	for _, f := range inPlaceFlags() {
		if n := f.Names()[0]; n != "force" && n != "min-savings" {
			flags = append(flags, f)
		}
	}
	return flags
}

// noticeFromFlag sets the utilization from which the agent is told of its
// context.
func noticeFromFlag() cli.Flag {
	return &cli.Float64Flag{Name: "notice-from", Value: checkpoint.NoticeFrom, Usage: "tell the agent its gauge from this utilization on"}
}

// checkpointDirFlag is the flag named name that sets the checkpoint
// directory (checkpointDirOf).
func checkpointDirFlag(name string) cli.Flag {
	return &cli.StringFlag{Name: name, EnvVars: []string{"BS_CHECKPOINT_DIR"}, Usage: "the checkpoint directory (default: $XDG_STATE_HOME/bs/checkpoints)"}
}

// checkpointFlags are the flags every checkpoint command takes.
func checkpointFlags() []cli.Flag {
	return []cli.Flag{
		checkpointDirFlag("dir"),
		&cli.StringFlag{Name: "session-key", Usage: "the session key (default: the session the transcript names, else its file name)"},
	}
}

func checkpointDir(c *cli.Context) checkpoint.Dir { return checkpointDirOf(c.String("dir")) }

// checkpointDirOf is the checkpoint directory dir, by default
// $XDG_STATE_HOME/bs/checkpoints.
func checkpointDirOf(dir string) checkpoint.Dir {
	if dir == "" {
		dir = filepath.Join(xdg.State(), "checkpoints")
	}
	return checkpoint.Dir{Root: dir}
}

func runCheckpoint(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	cm.Rewrite.Force = false // --force forces the checkpoint, not the rewrite
	opt := checkpoint.Defaults()
	opt.Dir, opt.SessionKey = checkpointDir(c), c.String("session-key")
	opt.Threshold, opt.Force, opt.Trigger, opt.Keep = c.Float64("threshold"), c.Bool("force"), c.String("trigger"), c.Int("keep")
	opt.Learnings, opt.Now, opt.Format, opt.OnBadLine = c.StringSlice("learning"), cm.now, cm.Format, cm.onBadLine
	opt.NoticeFrom, opt.Inject = c.Float64("notice-from"), c.Bool("notice")
	opt.Gauge = gauge.Options{Window: c.Int("context-window"), Format: cm.Format}
	if opt.Gauge.Estimator, err = estimatorFlag(c); err != nil {
		return err
	}
	if opt.Trigger != "" && opt.Trigger != checkpoint.TriggerCompaction && opt.Trigger != checkpoint.TriggerSessionEnd {
		return usagef(msgCheckpointTrigger, opt.Trigger)
	}
	if err := checkpointBounds(c); err != nil {
		return err
	}
	failed := false
	err = cm.Each(c.Context, func(ctx context.Context, name string, r io.Reader, w io.Writer) error {
		out, err := checkpoint.Run(name, r, w, opt)
		var cpErr *checkpoint.Error
		switch {
		case errors.As(err, &cpErr):
			cm.ui.warnf(msgCheckpointFailed, cpErr.Key, cpErr.Err)
			failed = true
		case err != nil:
			return err
		case out.Written != nil:
			cm.log.Info("checkpoint written", "file", name, "key", out.Key, "id", out.Written.Meta.CheckpointID, "path", out.Path,
				"trigger", out.Written.Meta.Trigger, "tokens", out.Gauge.Tokens, "ratio", out.Gauge.Ratio)
		default:
			cm.log.Info("no checkpoint", "file", name, "key", out.Key, "reason", out.Skipped)
		}
		if out.Injected {
			cm.log.Info("notice appended", "file", name, "notice", out.Notice)
		} else if cm.InPlace {
			return &skipped{msgCheckpointNoNotice} // only a notice changes the file
		}
		return nil
	})
	if err != nil {
		return err
	}
	if failed {
		return &reported{code: exitFailure}
	}
	return nil
}

// checkpointBounds refuses the first of checkpoint's and hook's flags
// that is out of its bounds.
func checkpointBounds(c *cli.Context) error {
	return cmp.Or(aboveZero(c, "threshold", "notice-from"), notNegative(c, "keep", "context-window"))
}

// loadCheckpoint reads the checkpoint the arguments name
// (checkpoint.Dir.Find): a .yaml file, or the latest (or the given ID) of
// the session key.
func loadCheckpoint(c *cli.Context) (*checkpoint.Checkpoint, string, error) {
	if err := flagAfterFile(c, c.Args().Slice()); err != nil {
		return nil, "", err
	}
	dir := checkpointDir(c)
	cp, path, err := dir.Find(c.String("session-key"), c.Args().Slice())
	return cp, path, checkpointWorded(err, dir)
}

// checkpointWorded words the errors of finding a checkpoint in dir.
func checkpointWorded(err error, dir checkpoint.Dir) error {
	var missing *checkpoint.NotFoundError
	switch {
	case errors.Is(err, checkpoint.ErrNoKey):
		return usagef(msgCheckpointNoKey)
	case errors.Is(err, checkpoint.ErrKeyAndFile):
		return usagef(msgCheckpointKeyAndFile)
	case errors.Is(err, checkpoint.ErrArgs):
		return usagef(msgCheckpointArgs)
	case errors.As(err, &missing) && missing.ID != "":
		return fmt.Errorf(msgCheckpointNoID, missing.ID, missing.Key)
	case errors.As(err, &missing):
		return fmt.Errorf(msgCheckpointNone, missing.Key, dir.Root)
	}
	return err
}

func runCheckpointRender(c *cli.Context) error {
	est, err := estimatorFlag(c)
	if err != nil {
		return err
	}
	cp, _, err := loadCheckpoint(c)
	if err != nil {
		return err
	}
	_, err = io.WriteString(c.App.Writer, checkpoint.RenderWith(cp, est))
	return err
}

func runCheckpointShow(c *cli.Context) error {
	_, path, err := loadCheckpoint(c)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	_, err = c.App.Writer.Write(data)
	return err
}

func runCheckpointList(c *cli.Context) error {
	dir := checkpointDir(c)
	if c.String("session-key") == "" && c.NArg() == 0 {
		return dir.WriteKeys(c.App.Writer, c.Bool("json"))
	}
	if err := flagAfterFile(c, c.Args().Slice()); err != nil {
		return err
	}
	if c.NArg() > 1 {
		return usagef(msgCheckpointArgs)
	}
	key, err := checkpoint.SessionKey(c.String("session-key"), c.Args().First())
	if err != nil {
		return checkpointWorded(err, dir)
	}
	return dir.WriteList(c.App.Writer, key, c.Bool("json"), func(err error) { ui{c.App.ErrWriter}.warnf("%v", err) })
}

func runCheckpointInject(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	if c.NArg() > 1 {
		return usagef(msgCheckpointArgs)
	}
	dir := checkpointDir(c)
	return cm.Each(c.Context, func(ctx context.Context, name string, r io.Reader, w io.Writer) error {
		err := checkpoint.Inject(name, r, w, cm.Format, cm.onBadLine, cm.now, func(session string) (string, string, error) {
			key := c.String("session-key")
			if key == "" {
				key = checkpoint.SessionKeyFor(name, session)
			}
			if key == "" {
				return "", "", checkpoint.ErrNoKey
			}
			text, id, err := dir.LatestText(key)
			if errors.Is(err, checkpoint.ErrNone) {
				cm.ui.warnf(msgCheckpointNoneInject, key)
			}
			return text, id, err
		})
		if errors.Is(err, checkpoint.ErrNone) {
			return nil
		}
		return err
	})
}

func runCheckpointHook(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	h, err := checkpoint.ReadHook(c.App.Reader)
	if err != nil {
		return usagef(msgHookInput, err)
	}
	if h.HookEventName == "" {
		return usagef(msgHookInput, errors.New("no hook_event_name"))
	}
	key := c.String("session-key")
	if key == "" {
		key = h.SessionID
	}
	opt := checkpoint.Defaults()
	opt.Dir, opt.SessionKey, opt.Now, opt.Keep, opt.Threshold = checkpointDir(c), key, cm.now, c.Int("keep"), c.Float64("threshold")
	opt.NoticeFrom, opt.Inject = c.Float64("notice-from"), false // the notice goes to Claude Code, not into the file
	opt.OnBadLine = cm.onBadLine
	if err := checkpointBounds(c); err != nil {
		return err
	}
	res, err := h.Handle(opt)
	if out := res.Ran; out != nil && out.Written != nil {
		cm.log.Info("checkpoint written", "key", out.Key, "id", out.Written.Meta.CheckpointID, "path", out.Path)
	} else if out != nil {
		cm.log.Info("no checkpoint", "key", out.Key, "reason", out.Skipped)
	}
	if res.Failed != nil {
		cm.ui.warnf(msgCheckpointFailed, res.Failed.Key, res.Failed.Err)
	}
	switch {
	case errors.Is(err, checkpoint.ErrHookNoSession):
		return usagef(msgHookNoSession)
	case errors.Is(err, checkpoint.ErrHookNoTranscript):
		return usagef(msgHookNoTranscript, h.HookEventName)
	case err != nil:
		return err
	}
	return checkpoint.WriteHookContext(c.App.Writer, h.HookEventName, res.Context)
}
