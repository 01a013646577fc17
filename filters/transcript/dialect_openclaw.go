package transcript

// OpenClaw is OpenClaw's and pi's sessions (FORMATS §1): v1 (legacy, no
// entry ids) and v2–v3 (a tree of entries by id and parentId), after a
// {"type":"session"} header.
var OpenClaw Dialect = openClaw{}

type openClaw struct{}

func (openClaw) String() string     { return "openclaw" }
func (openClaw) Aliases() []string  { return []string{"pi"} }
func (openClaw) HelpName() string   { return "openclaw (pi)" }
func (openClaw) Title() string      { return "OpenClaw/pi" }
func (openClaw) IDFields() []string { return []string{"id", "__id"} }

func (openClaw) Claims(t *Tree) bool {
	switch typ := t.Str(t.Get(0, "type")); typ {
	case "session", "model_change", "thinking_level_change", "compaction", "custom_message", "branch_summary":
		return true
	case "message":
		return t.Get(t.Get(0, "message"), "role") >= 0
	}
	return false
}

func (openClaw) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.openclaw()
}

func (openClaw) Spends(t *Tree) bool {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	return str("type") == "message" && str("message", "role") == "assistant" && t.Path(0, "message", "usage") >= 0
}

// SpendRecord is an assistant message with no content that stopped
// "aborted", which pi never sends to a model.
func (openClaw) SpendRecord(t *Tree, by, id, parent string) []byte {
	r := &record{t: t, b: []byte{'{'}}
	r.member("type", []byte(`"message"`))
	if id != "" {
		r.member("id", AppendQuote(nil, id))
		if parent == "" {
			r.member("parentId", []byte("null"))
		} else {
			r.member("parentId", AppendQuote(nil, parent))
		}
	}
	if ts := t.Get(0, "timestamp"); ts >= 0 {
		r.member("timestamp", t.Raw(ts))
	}
	m := &record{t: t, b: []byte{'{'}}
	m.member("role", []byte(`"assistant"`))
	m.member("content", []byte(`[]`))
	t.Children(t.Get(0, "message"), func(c, _ int) {
		switch k := t.Key(c); k {
		case "provider", "model", "usage", "timestamp":
			m.member(k, t.Raw(c))
		}
	})
	m.member("stopReason", []byte(`"aborted"`))
	r.member("message", append(m.b, '}'))
	return r.close(by)
}

func (v *viewer) openclaw() {
	t, e := v.t, v.e
	e.Time = v.str(0, "timestamp")
	switch v.str(0, "type") {
	case "session":
		e.SessionID = v.str(0, "id")
	case "message":
		msg := t.Get(0, "message")
		e.Message = true
		e.Role = v.str(msg, "role")
		v.piMessage(msg, e.Role)
	case "custom_message":
		e.Message = true
		e.Role = "custom"
		v.piContent(t.Get(0, "content"), Text)
	}
}

func (v *viewer) piMessage(msg int, role string) {
	t, e := v.t, v.e
	content := t.Get(msg, "content")
	switch role {
	case "toolResult":
		e.ToolName = v.str(msg, "toolName")
		v.answers(v.str(msg, "toolCallId"))
		v.piContent(content, ToolResult)
		v.leaves(t.Get(msg, "details"), ToolResult)
	case "bashExecution":
		e.ToolName = "bash"
		v.add(t.Get(msg, "output"), ToolResult)
	default:
		v.piContent(content, Text)
	}
}

// piContent handles pi content: a string or an array of text, thinking,
// toolCall and image blocks. textKind is what a text block counts as.
func (v *viewer) piContent(content int, textKind Kind) {
	t := v.t
	if content < 0 {
		return
	}
	if t.Nodes[content].Kind == '"' {
		v.add(content, textKind)
		return
	}
	t.Children(content, func(b, _ int) {
		switch v.str(b, "type") {
		case "text":
			v.add(t.Get(b, "text"), textKind)
		case "thinking":
			v.addBlock(b, t.Get(b, "thinking"), Thinking, "text")
		case "toolCall":
			v.tool(v.str(b, "name"), v.str(b, "id"))
			v.leaves(t.Get(b, "arguments"), ToolCall)
		case "image":
			v.addImage(b, t.Get(b, "data"), textKind, "text")
		}
	})
}
