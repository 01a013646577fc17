package transcript

import "strings"

// BrainSurgeon is the flat format of the BrainSurgeon spec and its dev
// fixtures (FORMATS §2): one {"__id","type":"user_message"|…} per line.
var BrainSurgeon Dialect = brainSurgeon{}

type brainSurgeon struct{}

func (brainSurgeon) String() string     { return "brainsurgeon" }
func (brainSurgeon) Aliases() []string  { return nil }
func (brainSurgeon) HelpName() string   { return "brainsurgeon" }
func (brainSurgeon) Title() string      { return "BrainSurgeon" }
func (brainSurgeon) IDFields() []string { return []string{"__id", "id"} }

var brainSurgeonTypes = map[string]bool{
	"user_message": true, "assistant_message": true, "tool_call": true, "tool_result": true, "thinking": true,
}

func (brainSurgeon) Claims(t *Tree) bool { return brainSurgeonTypes[t.Str(t.Get(0, "type"))] }

func (brainSurgeon) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.brainsurgeon()
}

// Spends: the flat format records no usage.
func (brainSurgeon) Spends(*Tree) bool                                { return false }
func (brainSurgeon) SpendRecord(*Tree, string, string, string) []byte { return nil }

var brainSurgeonKinds = map[string]Kind{
	"tool_result": ToolResult, "tool_call": ToolCall, "thinking": Thinking,
	"user_message": Text, "assistant_message": Text,
}

func (v *viewer) brainsurgeon() {
	t, e := v.t, v.e
	e.Time = v.str(0, "timestamp")
	typ := v.str(0, "type")
	kind, ok := brainSurgeonKinds[typ]
	if !ok {
		return
	}
	e.Message = true
	e.Role = strings.TrimSuffix(typ, "_message")
	if typ == "tool_call" {
		v.tool(firstNonEmpty(v.str(0, "toolName"), v.str(0, "name")), "")
	}
	if typ == "tool_result" {
		e.ToolName = v.str(0, "toolName")
	}
	// The value-bearing members the BrainSurgeon trigger detector checks.
	for _, f := range []string{"content", "text", "output", "result", "data", "thinking", "input", "arguments"} {
		v.leaves(t.Get(0, f), kind)
	}
	if msg := t.Get(0, "message"); msg >= 0 {
		if t.Nodes[msg].Kind == '"' {
			v.add(msg, kind)
		} else {
			v.leaves(t.Get(msg, "content"), kind)
		}
	}
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
