package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/agent"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/rpcguard"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:   "mcp",
		Usage:  "serve the agent tools (purge_control, restore, search, checkpoint) over MCP on stdio",
		Flags:  agentFlags(),
		Action: runMCP,
	}
}

// agentFlags are the flags of bs mcp and bs tool.
func agentFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "act on this transcript `FILE`"},
		&cli.StringFlag{Name: "sessions-dir", Usage: "act on the transcripts inside `DIR`, named by each call's session argument"},
		&cli.BoolFlag{Name: "keep-restore-calls", Usage: "do not mark restore and purge_control tool calls _redacted"},
		checkpointDirFlag("checkpoint-dir"),
	}
	flags = append(flags, indexFlags()...)
	return append(flags, commonFlagsWhere(func(name string) bool {
		return slices.Contains([]string{"store", "format", "now", "log-level", "lock-timeout", "quiet-period", "force"}, name)
	})...)
}

// newAgent builds the tools' environment from the flags.
func newAgent(c *cli.Context) (*agent.Agent, *common, error) {
	cm, err := parseCommon(c)
	if err != nil {
		return nil, nil, err
	}
	cm.Files = nil
	if c.NArg() > 0 {
		return nil, nil, usagef(msgAgentArgs)
	}
	sessions := agent.Sessions{File: c.String("session"), Dir: c.String("sessions-dir")}
	if (sessions.File == "") == (sessions.Dir == "") {
		return nil, nil, usagef(msgAgentSession)
	}
	if sessions.File != "" {
		if info, err := os.Stat(sessions.File); err != nil || !info.Mode().IsRegular() {
			return nil, nil, usagef(msgAgentNoSession, sessions.File)
		}
	} else if info, err := os.Stat(sessions.Dir); err != nil || !info.IsDir() {
		return nil, nil, usagef(msgAgentNoDir, sessions.Dir)
	}
	store, err := cm.openStore()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now
	if c.String("now") != "" {
		fixed := cm.now
		now = func() time.Time { return fixed }
	}
	ip := cm.Rewrite
	cpDir := checkpointDirOf(c.String("checkpoint-dir"))
	env := agent.Env{
		Sessions:         sessions.Abs(),
		Store:            store,
		Format:           cm.Format,
		Now:              now,
		Log:              cm.log,
		KeepRestoreCalls: c.Bool("keep-restore-calls"),
		Rewrite: func(ctx context.Context, path string, edit agent.EditFunc) error {
			return rewriteWhenQuiet(ctx, ip, path, edit)
		},
		Search: searchIndex(indexPath(c)),
		Checkpoint: func(path string) (string, error) {
			key, err := checkpoint.KeyOfFile(path, cm.Format)
			if err != nil {
				return "", err
			}
			text, _, err := cpDir.LatestText(key)
			if errors.Is(err, checkpoint.ErrNone) {
				return "", fmt.Errorf(msgAgentNoCheckpoint, key)
			}
			return text, err
		},
	}
	return agent.New(env), cm, nil
}

// rewriteWhenQuiet is how the tools rewrite a transcript: in place,
// waiting for a busy file up to --lock-timeout, its refusals worded.
func rewriteWhenQuiet(ctx context.Context, ip inplace.Options, path string, edit agent.EditFunc) error {
	return worded(inplace.RewriteFileWhenQuiet(ctx, path, ip, func(src *os.File, n int64, w io.Writer) error { return edit(src, n, w) }))
}

// mcpRejection words the JSON-RPC error that answers a bad frame.
func mcpRejection(p rpcguard.Problem) string {
	switch p.Kind {
	case rpcguard.NotJSON:
		return msgMCPParse
	case rpcguard.Batch:
		return msgMCPBatch
	case rpcguard.NotObject:
		return msgMCPNotObject
	case rpcguard.BadID:
		return msgMCPBadID
	case rpcguard.BadVersion:
		return msgMCPVersion
	case rpcguard.TooLong:
		return fmt.Sprintf(msgMCPTooLong, p.Max)
	}
	return fmt.Sprintf(msgMCPInvalid, p.Err)
}

func runMCP(c *cli.Context) error {
	a, cm, err := newAgent(c)
	if err != nil {
		return err
	}
	cm.log.Info("serving MCP on stdio", "session", c.String("session"), "sessions_dir", c.String("sessions-dir"))
	guard := rpcguard.Options{Wait: time.Minute, Log: cm.log, Message: mcpRejection}
	return agent.ServeStdio(c.Context, a, c.String("sessions-dir") != "", c.App.Reader, c.App.Writer, guard)
}
