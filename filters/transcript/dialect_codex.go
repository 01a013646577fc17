package transcript

import (
	"strconv"
	"strings"
)

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

// SessionDirs: rollouts under a folder per day.
func (codex) SessionDirs() []string { return []string{".codex/sessions"} }

// LineType: the envelope's type, and for a response item or an event
// the payload's type after a colon (response_item:function_call), which
// says what the line is.
func (codex) LineType(t *Tree) string {
	typ := t.Str(t.Get(0, "type"))
	if typ == "response_item" || typ == "event_msg" {
		typ += ":" + t.Str(t.Path(0, "payload", "type"))
	}
	return typ
}

// OuterType: the envelope's type alone (response_item, event_msg, …).
func (codex) OuterType(t *Tree) string { return t.Str(t.Get(0, "type")) }

// Envelope: the payload of an envelope line.
func (codex) Envelope(tokens []string) int { return wrappedIn("payload", tokens) }

// WorkDir: the cwd of session_meta's and turn_context's payload.
func (codex) WorkDir(t *Tree) string { return t.Str(t.Path(0, "payload", "cwd")) }

func (codex) Claims(t *Tree) bool {
	return t.Get(0, "payload") >= 0 && t.Str(t.Get(0, "type")) != ""
}

func (codex) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.codex()
}

// Speaker: the role of the payload (a message item's), else the entry's.
func (codex) Speaker(t *Tree, e *Entry, node int) string { return roleAbove(t, node, e.Role) }

// CallName: the name of a function_call or custom_tool_call item, for
// its arguments or input.
func (codex) CallName(t *Tree, node int) string {
	p := t.Get(0, "payload")
	switch t.Str(t.Get(p, "type")) {
	case "function_call", "custom_tool_call":
		if inside(t, p, node) {
			return t.Str(t.Get(p, "name"))
		}
	}
	return ""
}

// AnsweredCall: the call_id of a call's output item, or of the event
// that reports a command's or a patch's end, for what it holds.
func (codex) AnsweredCall(t *Tree, node int) string {
	p := t.Get(0, "payload")
	switch t.Str(t.Get(p, "type")) {
	case "function_call_output", "custom_tool_call_output", "exec_command_end", "patch_apply_end":
		if inside(t, p, node) {
			return t.Str(t.Get(p, "call_id"))
		}
	}
	return ""
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
		e.Instructions = instructionsRole(e.Role) // developer messages
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
		v.codexContent(codexOutput(t, p), ToolResult)
	case "reasoning":
		e.Role = "assistant"
		for _, f := range []string{"summary", "content"} {
			t.Children(t.Get(p, f), func(b, _ int) { v.add(t.Get(b, "text"), Thinking) })
		}
	}
}

func (v *viewer) codexContent(content int, textKind Kind) {
	t := v.t
	v.blocks(content, textKind, func(b int, typ string) {
		switch typ {
		case "input_text", "output_text", "text":
			v.add(t.Get(b, "text"), textKind)
		case "input_image":
			v.addImage(b, t.Get(b, "image_url"), textKind, "input_text")
		}
	})
}

// Identity: session_meta's id.
func (codex) Identity(t *Tree) (string, Stated) {
	if t.Str(t.Get(0, "type")) == "session_meta" {
		return t.Str(t.Path(0, "payload", "id")), Header
	}
	return "", NotStated
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

// NumbersEntries: a compacted item keeps no earlier entry.
func (codex) NumbersEntries(*Tree) bool { return false }

// KeptNumber: none; a compacted item keeps no earlier entry.
func (codex) KeptNumber(*Tree) int { return -1 }

// CompactedFrom: a compacted item records no context size.
func (codex) CompactedFrom(*Tree) (int, bool) { return 0, false }

// RollNote is a compacted item carrying the note.
func (codex) RollNote(n RollNote) [][]byte {
	return [][]byte{[]byte(`{"timestamp":` + quote(n.Now) + `,"type":"compacted","payload":{"message":` + quote(n.Text) + `},` + quote(EvictedField) + `:` + n.Evicted(0) + `,` + n.Rolled(0) + "}\n")}
}

// RollTree is nil: RollNote writes the note.
func (codex) RollTree() RollTree { return nil }

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

// FollowTurn keeps the line's time: a stand-in item repeats nothing
// else of the lines before.
func (codex) FollowTurn(t *Tree, _ bool, s *StandIn) { s.Time = rawCopy(t, t.Get(0, "timestamp")) }

// StandInEntry is an assistant message item.
func (codex) StandInEntry(s *StandIn, n StandInNote) []byte {
	var o object
	o.member("timestamp", s.stamp(n.Now))
	o.member("type", []byte(`"response_item"`))
	p := append(AppendQuote([]byte(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":`), n.Text), `}]}`...)
	o.member("payload", p)
	return o.close(n)
}

// Converse reads line t into c.
func (codex) Converse(t *Tree, c Conversation) {
	v := conversing{t: t, c: c, inserted: codex{}.Inserted}
	v.codex()
}

func (v *conversing) codex() {
	t, o := v.t, v.c
	p := t.Get(0, "payload")
	when := v.str(0, "timestamp")
	switch v.str(0, "type") {
	case "session_meta":
		o.Session(v.str(p, "id"), false)
	case "response_item":
		switch v.str(p, "type") {
		case "message":
			switch v.str(p, "role") {
			case "user":
				text, chars := v.text(t.Get(p, "content"))
				v.user(text, chars, when)
			case "assistant":
				o.Said(v.text(t.Get(p, "content")))
			}
		case "function_call":
			o.CallJSON(v.str(p, "name"), v.str(p, "call_id"), v.str(p, "arguments"))
		case "custom_tool_call":
			o.CallRaw(v.str(p, "name"), v.str(p, "call_id"), v.str(p, "input"))
		case "local_shell_call":
			o.Call("shell", v.str(p, "call_id"), t, t.Get(p, "action"))
		case "function_call_output", "custom_tool_call_output":
			head := v.head(codexOutput(t, p))
			o.Result(o.ToolOf(v.str(p, "call_id")), codexFailed(head), head, when)
		}
	}
}

// codexOutput is the output node of a function call output item p: a
// string or an array of content items, or the content of the
// {content, success} object some forks write instead (-1 if none).
func codexOutput(t *Tree, p int) int {
	out := t.Get(p, "output")
	if out >= 0 && t.Nodes[out].Kind == '{' {
		out = t.Get(out, "content")
	}
	return out
}

// codexFailed reads the exit status Codex writes at the top of a command's
// output ("Process exited with code N", or "Exit code: N"), or in the JSON
// {"output":…,"metadata":{"exit_code":N}} of older versions.
func codexFailed(out string) bool {
	head := out
	if len(head) > 400 {
		head = head[:400]
	}
	for _, p := range []string{"Process exited with code ", "Exit code: ", `"exit_code":`} {
		if i := strings.Index(head, p); i >= 0 {
			rest := strings.TrimSpace(head[i+len(p):])
			end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
			if end < 0 {
				end = len(rest)
			}
			n, err := strconv.Atoi(rest[:end])
			return err == nil && n != 0
		}
	}
	return false
}

// Account: items are in context; a token_count event carries the usage
// of the last request and the window; compacted replaces the context.
func (codex) Account(t *Tree) Account {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	p := t.Get(0, "payload")
	switch str(0, "type") {
	case "response_item":
		return content(p)
	case "compacted":
		a := content(t.Get(p, "replacement_history"))
		a.Role, a.Fallback, a.HasFallback = CompactionEntry, t.Get(p, "message"), true
		return a
	case "turn_context":
		a := noAccount
		a.Model = str(p, "model")
		return a
	case "event_msg":
		if str(p, "type") != "token_count" {
			return noAccount
		}
		info := t.Get(p, "info")
		a := noAccount
		a.Window = number(t, t.Get(info, "model_context_window"))
		last := t.Get(info, "last_token_usage")
		n := number(t, t.Get(last, "total_tokens"))
		if n == 0 {
			n = number(t, t.Get(last, "input_tokens")) + number(t, t.Get(last, "output_tokens"))
		}
		if n > 0 {
			a.Role, a.Tokens = UsageReport, n
		}
		return a
	}
	return noAccount
}

// Prune: one item per line, the assistant's side in several; the lines
// carry no id the pruner keys by.
func (codex) Prune(t *Tree, pv *PruneView) {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	pv.Time = str(0, "timestamp")
	p := t.Get(0, "payload")
	switch str(0, "type") {
	case "turn_context":
		pv.Model = str(p, "model")
	case "compacted":
		pv.Compaction = true
	case "event_msg":
		// Codex records each prompt the user types as this event, beside
		// (or, in a trimmed rollout, instead of) a user message item.
		pv.Prompt = str(p, "type") == "user_message"
	case "response_item":
		switch str(p, "type") {
		case "message":
			switch str(p, "role") {
			case "user":
				pv.Kind = PruneUser
				pv.Contents = append(pv.Contents, t.Get(p, "content"))
			case "assistant":
				pv.Kind, pv.SideItem = PruneAssistant, true
				pv.Contents = append(pv.Contents, t.Get(p, "content"))
			}
		case "reasoning":
			pv.Kind, pv.SideItem = PruneAssistant, true
			t.Children(t.Get(p, "summary"), func(b, _ int) { pv.Texts = append(pv.Texts, t.Get(b, "text")) })
		case "function_call", "custom_tool_call", "local_shell_call":
			pv.Kind, pv.SideItem = PruneAssistant, true
			pv.Texts = append(pv.Texts, t.Get(p, "arguments"), t.Get(p, "input"))
			pv.Calls = append(pv.Calls, PruneCall{str(p, "call_id"), str(p, "name")})
		case "function_call_output", "custom_tool_call_output":
			pv.Kind = PruneResults
			pv.Results = append(pv.Results, PruneResult{codexOutput(t, p), str(p, "call_id"), "", "input_text"})
		}
	}
}

// Threads: a rollout is linear.
func (codex) Threads() Threading { return InOrder }

// Link: rollout lines carry no ids.
func (codex) Link(*Tree) Link { return Link{} }

// Unit: a call's output goes with its call; events are bookkeeping.
func (codex) Unit(t *Tree, lastMsgID string) Unit {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	switch str(0, "type") {
	case "response_item":
		typ := str(0, "payload", "type")
		return Unit{Join: typ == "function_call_output" || typ == "custom_tool_call_output"}
	case "event_msg":
		return Unit{Join: true, Noise: true}
	case "turn_context":
		return Unit{SpendAgain: true}
	}
	return Unit{}
}

// StatesWindow: token_count events state the model's context window.
func (codex) StatesWindow() bool { return true }

// NotText: what names an item and its time, its status, ids and the call
// an output answers, encrypted reasoning, an image's URL (its data).
func (codex) NotText() []string {
	return []string{"role", "type", "timestamp", "status", "id", "call_id", "encrypted_content", "image_url"}
}

// Blocks: the Responses API's input and output text, a plain text block,
// and an input image.
func (codex) Blocks() Blocks {
	return Blocks{Text: []string{"input_text", "output_text", "text"}, Image: []string{"input_image"}}
}

// Marks: a token_count event (the usage and the window), a turn_context
// line (its payload names the model; cost reports price by it), a
// compacted line (compact, as the start of a value).
func (codex) Marks() Marks {
	count, turn := Mark{Text: `token_count"`}, Mark{Text: `turn_context"`}
	return Marks{
		Spend:   []Mark{count, turn},
		Usage:   []Mark{count},
		Reset:   []Mark{{Text: "compact"}},
		Model:   []Mark{turn, {Text: `model"`, Name: true}},
		WorkDir: []Mark{{Text: `cwd"`, Name: true}},
	}
}

// Inserted: a text that begins as one of codexInserted does.
func (codex) Inserted(text string) bool { return beginsAsOneOf(text, codexInserted) }

// codexInserted are how the texts Codex puts in a user message of its own
// accord begin: the environment, the user's and the project's
// instructions, an aborted turn, a command the user ran.
var codexInserted = []string{
	"<environment_context>", "<user_instructions>", "<INSTRUCTIONS>", "# AGENTS.md instructions", "<turn_aborted>",
	"<user_shell_command>",
}
