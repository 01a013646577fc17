package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
)

// toolCall is seed 000's tool call, as agents send it and bs tool reads
// it: {"type":"tool_call","name":"restore","arguments":{...}}.
type toolCall struct {
	Type      string          `json:"type"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// CallJSON runs the tool call in, a toolCall's JSON, as Call runs one: in
// that is no tool call is an ErrorResult saying why.
func (a *Agent) CallJSON(ctx context.Context, in []byte) (result any, isError bool) {
	var call toolCall
	switch {
	case len(bytes.TrimSpace(in)) == 0:
		return ErrorResult{Error: `no tool call on standard input: want {"type":"tool_call","name":"restore","arguments":{...}}`}, true
	case json.Unmarshal(in, &call) != nil:
		return ErrorResult{Error: `the tool call is not a JSON object {"type":"tool_call","name":...,"arguments":{...}}`}, true
	case call.Type != "" && call.Type != "tool_call":
		return ErrorResult{Error: fmt.Sprintf(`type %q: want "tool_call"`, call.Type)}, true
	case call.Name == "":
		return ErrorResult{Error: "the tool call has no name"}, true
	}
	return a.Call(ctx, call.Name, call.Arguments)
}
