package transcript

// Generic is chat-message JSONL (FORMATS §5): {"role","content"} per line,
// or {"messages":[…]} per line. It is the fallback: a transcript whose
// first lines no dialect claims is read as chat.
var Generic Dialect = generic{}

type generic struct{}

func (generic) String() string    { return "generic" }
func (generic) Aliases() []string { return []string{"chat"} }
func (generic) HelpName() string  { return "generic" }
func (generic) Title() string     { return "chat" }

// IDFields: chat lines carry no id of their own.
func (generic) IDFields() []string { return []string{"__id"} }

func (generic) Claims(t *Tree) bool { return t.Get(0, "role") >= 0 || t.Get(0, "messages") >= 0 }

func (generic) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.generic()
}

// Spends: chat lines record no usage.
func (generic) Spends(*Tree) bool                                { return false }
func (generic) SpendRecord(*Tree, string, string, string) []byte { return nil }

func (v *viewer) generic() {
	t, e := v.t, v.e
	if msgs := t.Get(0, "messages"); msgs >= 0 {
		e.Message = true
		t.Children(msgs, func(m, _ int) { v.chatMessage(m) })
		return
	}
	if t.Get(0, "role") >= 0 {
		e.Message = true
		e.Role = v.str(0, "role")
		e.Time = v.str(0, "timestamp") // when the line carries one
		v.chatMessage(0)
	}
}

func (v *viewer) chatMessage(m int) {
	t := v.t
	role := v.str(m, "role")
	kind := Text
	outer := v.call
	if role == "tool" || role == "function" {
		kind = ToolResult
		v.call = v.str(m, "tool_call_id")
		v.answers(v.call)
	}
	v.anthropicContent(t.Get(m, "content"), kind)
	v.call = outer
	t.Children(t.Get(m, "tool_calls"), func(c, _ int) {
		v.tool(v.str(c, "function", "name"), v.str(c, "id"))
		v.add(t.Path(c, "function", "arguments"), ToolCall)
	})
}
