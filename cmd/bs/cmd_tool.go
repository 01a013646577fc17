package main

import (
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/agent"
)

func toolCommand() *cli.Command {
	return &cli.Command{
		Name:   "tool",
		Usage:  "run one agent tool call read as JSON on standard input, for runtimes without MCP",
		Flags:  agentFlags(),
		Action: runTool,
	}
}

func runTool(c *cli.Context) error {
	a, _, err := newAgent(c)
	if err != nil {
		return err
	}
	in, err := io.ReadAll(c.App.Reader)
	if err != nil {
		return fmt.Errorf(msgToolInput, err)
	}
	res, isErr := a.CallJSON(c.Context, in)
	b, err := agent.MarshalResult(res)
	if err != nil {
		return err
	}
	if _, err := c.App.Writer.Write(append(b, '\n')); err != nil {
		return err
	}
	if isErr {
		return &reported{code: exitFailure}
	}
	return nil
}
