package main

import (
	"bytes"
	"encoding/json"
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

// toolCall is seed 000's tool call.
type toolCall struct {
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

func runTool(c *cli.Context) error {
	a, _, err := newAgent(c)
	if err != nil {
		return err
	}
	var res any
	isErr := true
	in, err := io.ReadAll(c.App.Reader)
	var call toolCall
	switch {
	case err != nil:
		return fmt.Errorf(msgToolInput, err)
	case len(bytes.TrimSpace(in)) == 0:
		res = agent.ErrorResult{Error: `no tool call on standard input: want {"type":"tool_call","name":"restore","arguments":{...}}`}
	case json.Unmarshal(in, &call) != nil:
		res = agent.ErrorResult{Error: `the tool call is not a JSON object {"type":"tool_call","name":...,"arguments":{...}}`}
	case call.Type != "" && call.Type != "tool_call":
		res = agent.ErrorResult{Error: fmt.Sprintf(`type %q: want "tool_call"`, call.Type)}
	case call.Name == "":
		res = agent.ErrorResult{Error: "the tool call has no name"}
	default:
		res, isErr = a.Call(c.Context, call.Name, call.Arguments)
	}
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
