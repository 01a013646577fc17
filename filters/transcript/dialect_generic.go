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

// SessionDirs: none; chat lines are no runtime's own sessions.
func (generic) SessionDirs() []string { return nil }

// LineType: the line's type, where a chat line carries one.
func (generic) LineType(t *Tree) string { return t.Str(t.Get(0, "type")) }

// OuterType: the line's type, as LineType.
func (g generic) OuterType(t *Tree) string { return g.LineType(t) }

// Envelope: a message of a line of messages, by its index; a line that
// is one message wraps it in nothing.
func (generic) Envelope(tokens []string) int {
	if len(tokens) > 2 && tokens[0] == "messages" && isIndex(tokens[1]) {
		return 2
	}
	return 0
}

// WorkDir: none; chat lines name no directory.
func (generic) WorkDir(*Tree) string { return "" }

func (generic) Claims(t *Tree) bool { return t.Get(0, "role") >= 0 || t.Get(0, "messages") >= 0 }

func (generic) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.generic()
}

// Speaker: the role of the chat message holding the text (a line of
// messages holds several).
func (generic) Speaker(t *Tree, e *Entry, node int) string { return roleAbove(t, node, e.Role) }

// chatMessageOf is the chat message of line t that holds node: one of
// its messages, or the line itself; -1 for none.
func chatMessageOf(t *Tree, node int) int {
	if msgs := t.Get(0, "messages"); msgs >= 0 {
		return blockOf(t, msgs, node)
	}
	if t.Get(0, "role") >= 0 {
		return 0
	}
	return -1
}

// CallName: the function name of the entry of a message's tool_calls
// whose arguments hold node, or the name of a tool_use block of its
// content.
func (generic) CallName(t *Tree, node int) string {
	m := chatMessageOf(t, node)
	if m < 0 {
		return ""
	}
	if c := blockOf(t, t.Get(m, "tool_calls"), node); c >= 0 {
		return t.Str(t.Path(c, "function", "name"))
	}
	return anthropicCall(t, t.Get(m, "content"), node)
}

// AnsweredCall: the tool_use_id of a tool_result block holding node, else
// the tool_call_id of a tool message.
func (generic) AnsweredCall(t *Tree, node int) string {
	m := chatMessageOf(t, node)
	if m < 0 {
		return ""
	}
	content := t.Get(m, "content")
	if id := anthropicAnswer(t, content, node); id != "" {
		return id
	}
	switch t.Str(t.Get(m, "role")) {
	case "tool", "function":
		if inside(t, content, node) {
			return t.Str(t.Get(m, "tool_call_id"))
		}
	}
	return ""
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
		e.Instructions = instructionsRole(e.Role)
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

// Identity: chat lines name no session.
func (generic) Identity(*Tree) (string, Stated) { return "", NotStated }

// Follow: chat lines name no session and carry no ids.
func (generic) Follow(*Tree, *Tail) {}

// ContextEntry is a system message.
func (generic) ContextEntry(tail *Tail, n ContextNote) []byte {
	return []byte(`{"role":"system","content":` + quote(n.Text) + `,` + n.tag() + "}\n")
}

func (generic) ContextText(t *Tree) string { return t.Str(t.Get(0, "content")) }

// IsCompaction: chat has no compaction entry.
func (generic) IsCompaction(*Tree) bool { return false }

// CompactedFrom: no compaction, no size before one.
func (generic) CompactedFrom(*Tree) (int, bool) { return 0, false }

// NumbersEntries: no compaction keeps entries by number.
func (generic) NumbersEntries(*Tree) bool { return false }

// KeptNumber: none; no compaction keeps entries by number.
func (generic) KeptNumber(*Tree) int { return -1 }

// RollNote is a system message carrying the note.
func (generic) RollNote(n RollNote) [][]byte {
	return [][]byte{[]byte(`{"role":"system","content":` + quote(n.Text) + `,` + quote(EvictedField) + `:` + n.Evicted(0) + `,` + n.Rolled(0) + "}\n")}
}

// RollTree is nil: RollNote writes the note.
func (generic) RollTree() RollTree { return nil }

// Turn: the role says it; calls are tool_calls, answered by a tool
// message's tool_call_id.
func (generic) Turn(t *Tree, e *Entry) Turn {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	k := Turn{MaxTurns: maxTurnsStop(t)}
	switch str(0, "role") {
	case "user":
		k.Prompt = e.Message
	case "assistant":
		k.Assistant = e.Message
	case "tool", "function":
		k.Result = true
	}
	t.Children(t.Get(0, "tool_calls"), func(c, _ int) { k.Issued = ids(k.Issued, str(c, "id")) })
	k.Answered = ids(k.Answered, str(0, "tool_call_id"))
	return k
}

// FollowTurn: a stand-in message repeats nothing of the lines before,
// not even their time.
func (generic) FollowTurn(*Tree, bool, *StandIn) {}

// StandInEntry is an assistant message.
func (generic) StandInEntry(s *StandIn, n StandInNote) []byte {
	var o object
	o.member("role", []byte(`"assistant"`))
	o.member("content", AppendQuote(nil, n.Text))
	return o.close(n)
}

// Inserted: none; a chat line is what its writer wrote.
func (generic) Inserted(string) bool { return false }

// Converse reads line t into c.
func (generic) Converse(t *Tree, c Conversation) {
	v := conversing{t: t, c: c}
	v.generic()
}

func (v *conversing) generic() {
	t := v.t
	if msgs := t.Get(0, "messages"); msgs >= 0 {
		t.Children(msgs, func(m, _ int) { v.chat(m) })
		return
	}
	if t.Get(0, "role") >= 0 {
		v.chat(0)
	}
}

func (v *conversing) chat(m int) {
	t, o := v.t, v.c
	when := v.str(0, "timestamp")
	content := t.Get(m, "content")
	switch v.str(m, "role") {
	case "user":
		v.anthropic(content, when, true)
	case "assistant":
		v.anthropic(content, when, false)
		t.Children(t.Get(m, "tool_calls"), func(c, _ int) {
			args := t.Path(c, "function", "arguments")
			name, id := v.str(c, "function", "name"), v.str(c, "id")
			if args >= 0 && t.Nodes[args].Kind == '"' {
				o.CallJSON(name, id, t.Str(args))
			} else {
				o.Call(name, id, t, args)
			}
		})
	case "tool", "function":
		name := v.str(m, "name")
		if name == "" {
			name = o.ToolOf(v.str(m, "tool_call_id"))
		}
		head := v.head(content)
		o.Result(name, false, head, when)
	}
}

// Account: every message is in context; chat records no usage.
func (d generic) Account(t *Tree) Account { return viewAccount(t, d) }

// Prune: the role says what a message is; an assistant's tool calls
// count their arguments.
func (generic) Prune(t *Tree, p *PruneView) {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	p.ID = firstID(t, "__id")
	content := t.Get(0, "content")
	switch str(0, "role") {
	case "user":
		p.Kind = PruneUser
		p.Contents = append(p.Contents, content)
	case "assistant":
		p.Kind = PruneAssistant
		p.Contents = append(p.Contents, content)
		p.Model = str(0, "model")
		t.Children(t.Get(0, "tool_calls"), func(x, _ int) {
			p.Texts = append(p.Texts, t.Path(x, "function", "arguments"))
			p.Calls = append(p.Calls, PruneCall{str(x, "id"), str(x, "function", "name")})
		})
	case "tool", "function":
		p.Kind = PruneResults
		p.Results = append(p.Results, PruneResult{content, str(0, "tool_call_id"), str(0, "name"), "text"})
	}
}

// Threads: chat is linear.
func (generic) Threads() Threading { return InOrder }

// Link: chat lines link to nothing.
func (generic) Link(*Tree) Link { return Link{} }

// Unit: a tool message goes with the call before it.
func (generic) Unit(t *Tree, lastMsgID string) Unit {
	r := t.Str(t.Get(0, "role"))
	return Unit{Join: r == "tool" || r == "function"}
}

// StatesWindow: the lines state no context window.
func (generic) StatesWindow() bool { return false }

// NotText: a message's role, a call's id and type.
func (generic) NotText() []string {
	return []string{"role", "type", "id"}
}

// Blocks: the Messages API's text and image blocks, which chat content
// is read as.
func (generic) Blocks() Blocks { return Blocks{Text: []string{"text"}, Image: []string{"image"}} }

// Marks: the lines record no usage, compaction or model.
func (generic) Marks() Marks { return Marks{} }
