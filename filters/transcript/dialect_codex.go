package transcript

// Codex is Codex CLI's rollouts (FORMATS §4): every line a
// {timestamp,type,payload} envelope, after a session_meta line.
var Codex Dialect = codex{}

type codex struct{}

func (codex) String() string    { return "codex" }
func (codex) Aliases() []string { return nil }
func (codex) HelpName() string  { return "codex" }
func (codex) Title() string     { return "Codex" }

// IDFields: Codex lines carry no id of their own.
func (codex) IDFields() []string { return []string{"__id"} }

func (codex) Claims(t *Tree) bool {
	return t.Get(0, "payload") >= 0 && t.Str(t.Get(0, "type")) != ""
}

func (codex) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.codex()
}

// Spends: the token_count events, and the turn_context lines (cost
// reports price each count by the model of the turn before it).
func (codex) Spends(t *Tree) bool {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	return str("type") == "turn_context" || str("type") == "event_msg" && str("payload", "type") == "token_count"
}

// SpendRecord is the line as it was, marked: Codex never gives an event
// to the model, and a later turn_context replaces an earlier one.
func (codex) SpendRecord(t *Tree, by, id, parent string) []byte {
	tag := SpentTag(by)
	out, err := Splice(nil, t.Src, []Edit{t.InsertMember(0, SpentField, tag)})
	if err != nil {
		return nil
	}
	return out
}

func (v *viewer) codex() {
	t, e := v.t, v.e
	e.Time = v.str(0, "timestamp")
	p := t.Get(0, "payload")
	switch v.str(0, "type") {
	case "session_meta":
		e.SessionID = v.str(p, "id")
	case "response_item":
		e.Message = true
		v.codexItem(p)
	case "event_msg":
		switch v.str(p, "type") {
		case "exec_command_end", "patch_apply_end":
			v.call = v.str(p, "call_id")
			for _, f := range []string{"stdout", "stderr", "aggregated_output", "formatted_output"} {
				v.add(t.Get(p, f), ToolResult)
			}
			v.call = ""
		case "agent_reasoning", "agent_reasoning_raw_content":
			v.add(t.Get(p, "text"), Thinking)
		case "agent_message", "user_message":
			v.add(t.Get(p, "message"), Text)
		}
	}
}

func (v *viewer) codexItem(p int) {
	t, e := v.t, v.e
	e.Role = v.str(p, "role")
	switch v.str(p, "type") {
	case "message":
		v.codexContent(t.Get(p, "content"), Text)
	case "function_call", "custom_tool_call":
		e.Role = "assistant"
		v.tool(v.str(p, "name"), v.str(p, "call_id"))
		v.add(t.Get(p, "arguments"), ToolCall)
		v.add(t.Get(p, "input"), ToolCall)
	case "function_call_output", "custom_tool_call_output":
		e.Role = "tool"
		v.call = v.str(p, "call_id")
		v.answers(v.call)
		out := t.Get(p, "output")
		if out >= 0 && t.Nodes[out].Kind == '{' {
			out = t.Get(out, "content") // the {content, success} shape of some forks
		}
		v.codexContent(out, ToolResult)
	case "reasoning":
		e.Role = "assistant"
		for _, f := range []string{"summary", "content"} {
			t.Children(t.Get(p, f), func(b, _ int) { v.add(t.Get(b, "text"), Thinking) })
		}
	}
}

func (v *viewer) codexContent(content int, textKind Kind) {
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
		case "input_text", "output_text", "text":
			v.add(t.Get(b, "text"), textKind)
		case "input_image":
			v.addImage(b, t.Get(b, "image_url"), textKind, "input_text")
		}
	})
}

// Follow: session_meta names the session; lines carry no ids.
func (codex) Follow(t *Tree, tail *Tail) {
	if t.Str(t.Get(0, "type")) == "session_meta" {
		tail.Session = t.Str(t.Path(0, "payload", "id"))
	}
}

// ContextEntry is a user message item.
func (codex) ContextEntry(tail *Tail, n ContextNote) []byte {
	return []byte(`{"timestamp":` + n.stamp() + `,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":` + quote(n.Text) + `}]},` + n.tag() + "}\n")
}

func (codex) ContextText(t *Tree) string {
	c := t.Path(0, "payload", "content")
	if c < 0 || t.Nodes[c].Kind != '[' || t.Nodes[c].First < 0 {
		return ""
	}
	return t.Str(t.Get(t.Nodes[c].First, "text"))
}

func (codex) IsCompaction(t *Tree) bool { return t.Str(t.Get(0, "type")) == "compacted" }

// RollNote is a compacted item carrying the note.
func (codex) RollNote(n RollNote) [][]byte {
	return [][]byte{[]byte(`{"timestamp":` + quote(n.Now) + `,"type":"compacted","payload":{"message":` + quote(n.Text) + `},` + quote(EvictedField) + `:` + n.Evicted(0) + `,` + n.Rolled(0) + "}\n")}
}

// Turn: a user message item is a prompt, and so is a user_message event
// that does not echo one; reasoning and calls are the assistant's side.
func (codex) Turn(t *Tree, e *Entry) Turn {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	k := Turn{MaxTurns: maxTurnsStop(t)}
	p := t.Get(0, "payload")
	switch str(0, "type") {
	case "response_item":
		switch str(p, "type") {
		case "message":
			k.Prompt = str(p, "role") == "user"
			k.Assistant = str(p, "role") == "assistant"
		case "reasoning", "function_call", "custom_tool_call", "local_shell_call":
			k.Assistant = true
		}
	case "event_msg":
		k.Echo = str(p, "type") == "user_message"
	}
	switch str(p, "type") {
	case "function_call", "custom_tool_call", "local_shell_call":
		k.Issued = ids(k.Issued, str(p, "call_id"))
	case "function_call_output", "custom_tool_call_output":
		k.Answered = ids(k.Answered, str(p, "call_id"))
	}
	return k
}

// FollowTurn: a stand-in item repeats nothing of the lines before.
func (codex) FollowTurn(*Tree, bool, *StandIn) {}

// StandInEntry is an assistant message item.
func (codex) StandInEntry(s *StandIn, n StandInNote) []byte {
	var o object
	o.member("timestamp", s.stamp(n.Now))
	o.member("type", []byte(`"response_item"`))
	p := append(AppendQuote([]byte(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":`), n.Text), `}]}`...)
	o.member("payload", p)
	return o.close(n)
}
