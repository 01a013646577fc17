package agent

import (
	"context"
	"testing"
)

// TestCallJSON: what is not a tool call is an ErrorResult saying why; a
// tool call goes to Call.
func TestCallJSON(t *testing.T) {
	a := New(Env{})
	for _, c := range []struct{ in, err string }{
		{" \n", `no tool call on standard input: want {"type":"tool_call","name":"restore","arguments":{...}}`},
		{`[1]`, `the tool call is not a JSON object {"type":"tool_call","name":...,"arguments":{...}}`},
		{`{"type":"call","name":"restore"}`, `type "call": want "tool_call"`},
		{`{"type":"tool_call","arguments":{}}`, "the tool call has no name"},
		{`{"name":"nope"}`, `unknown tool "nope": want purge_control, restore, search, checkpoint`},
		{`{"type":"tool_call","name":"search","arguments":{"query":"q"}}`, "no search index"},
	} {
		res, isErr := a.CallJSON(context.Background(), []byte(c.in))
		if e, ok := res.(ErrorResult); !isErr || !ok || e.Error != c.err {
			t.Errorf("%s = %#v, %v; want error %q", c.in, res, isErr, c.err)
		}
	}
}
