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

// SessionDirs: none; the flat format is the spec's, kept where its
// writer chooses.
func (brainSurgeon) SessionDirs() []string { return nil }

// LineType: the line's type (user_message, tool_call, …).
func (brainSurgeon) LineType(t *Tree) string { return t.Str(t.Get(0, "type")) }

// OuterType: the line's type, as LineType.
func (b brainSurgeon) OuterType(t *Tree) string { return b.LineType(t) }

// Envelope: a message member that holds the message's content.
func (brainSurgeon) Envelope(tokens []string) int { return wrappedIn("message", tokens) }

// WorkDir: none; the flat format names no directory.
func (brainSurgeon) WorkDir(*Tree) string { return "" }

var brainSurgeonTypes = map[string]bool{
	"user_message": true, "assistant_message": true, "tool_call": true, "tool_result": true, "thinking": true,
}

func (brainSurgeon) Claims(t *Tree) bool { return brainSurgeonTypes[t.Str(t.Get(0, "type"))] }

func (brainSurgeon) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.brainsurgeon()
}

// Speaker: the entry's role, from its type, unless a message member
// names its own.
func (brainSurgeon) Speaker(t *Tree, e *Entry, node int) string { return roleAbove(t, node, e.Role) }

// CallName: a tool_call entry's tool (toolName, else name), for all it
// holds.
func (brainSurgeon) CallName(t *Tree, node int) string {
	if t.Str(t.Get(0, "type")) != "tool_call" {
		return ""
	}
	return firstNonEmpty(t.Str(t.Get(0, "toolName")), t.Str(t.Get(0, "name")))
}

// AnsweredCall: none; calls carry no ids, and a tool_result names its
// tool (Entry.ToolName).
func (brainSurgeon) AnsweredCall(*Tree, int) string { return "" }

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

// Identity: the sessionId an entry carries.
func (brainSurgeon) Identity(t *Tree) (string, Stated) {
	if id := t.Str(t.Get(0, "sessionId")); id != "" {
		return id, Stamped
	}
	return "", NotStated
}

// Follow: entries name their session.
func (brainSurgeon) Follow(t *Tree, tail *Tail) {
	if s := t.Str(t.Get(0, "sessionId")); s != "" {
		tail.Session = s
	}
}

// ContextEntry is a system entry with a generated __id.
func (brainSurgeon) ContextEntry(tail *Tail, n ContextNote) []byte {
	return []byte(`{"__id":` + quote(GeneratedIDPrefix+n.hash(tail)[:16]) + `,"type":"system","timestamp":` + n.stamp() + `,"text":` + quote(n.Text) + `,` + n.tag() + "}\n")
}

func (brainSurgeon) ContextText(t *Tree) string { return t.Str(t.Get(0, "text")) }

// IsCompaction: the flat format has no compaction entry.
func (brainSurgeon) IsCompaction(*Tree) bool { return false }

// CompactedFrom: no compaction, no size before one.
func (brainSurgeon) CompactedFrom(*Tree) (int, bool) { return 0, false }

// NumbersEntries: no compaction keeps entries by number.
func (brainSurgeon) NumbersEntries(*Tree) bool { return false }

// KeptNumber: none; no compaction keeps entries by number.
func (brainSurgeon) KeptNumber(*Tree) int { return -1 }

// RollNote is a system entry carrying the note.
func (brainSurgeon) RollNote(n RollNote) [][]byte {
	return [][]byte{[]byte(`{"__id":` + quote(GeneratedIDPrefix+shortID(n.Hash("note"))) + `,"type":"system","timestamp":` + quote(n.Now) + `,"text":` + quote(n.Text) + `,` + quote(EvictedField) + `:` + n.Evicted(0) + `,` + n.Rolled(0) + "}\n")}
}

// RollTree is nil: RollNote writes the note.
func (brainSurgeon) RollTree() RollTree { return nil }

// Turn: the entry's type says it; calls carry no ids, so a result
// answers the call before it.
func (brainSurgeon) Turn(t *Tree, e *Entry) Turn {
	k := Turn{MaxTurns: maxTurnsStop(t)}
	switch t.Str(t.Get(0, "type")) {
	case "user_message":
		k.Prompt = true
	case "assistant_message", "thinking":
		k.Assistant = true
	case "tool_call":
		k.Assistant, k.Call = true, true
	case "tool_result":
		k.Result, k.ByOrder = true, true
	}
	s := t.Get(0, "success")
	k.Failed = s >= 0 && string(t.Raw(s)) == "false"
	return k
}

// FollowTurn keeps the line's time and the session a stand-in entry
// names.
func (brainSurgeon) FollowTurn(t *Tree, _ bool, s *StandIn) {
	s.Time = rawCopy(t, t.Get(0, "timestamp"))
	s.Envelope = s.Envelope[:0]
	if i := t.Get(0, "sessionId"); i >= 0 {
		s.Envelope = append(s.Envelope, Member{"sessionId", rawCopy(t, i)})
	}
}

// StandInEntry is an assistant_message with a generated __id.
func (brainSurgeon) StandInEntry(s *StandIn, n StandInNote) []byte {
	var o object
	o.member("__id", AppendQuote(nil, GeneratedIDPrefix+"archive-"+s.Key))
	for _, c := range s.Envelope {
		o.member(c.Name, c.Raw)
	}
	o.member("type", []byte(`"assistant_message"`))
	o.member("timestamp", s.stamp(n.Now))
	o.member("text", AppendQuote(nil, n.Text))
	return o.close(n)
}

// Inserted: none; the flat format inserts nothing.
func (brainSurgeon) Inserted(string) bool { return false }

// Converse reads line t into c.
func (brainSurgeon) Converse(t *Tree, c Conversation) {
	v := conversing{t: t, c: c}
	v.brainsurgeon()
}

func (v *conversing) brainsurgeon() {
	t, o := v.t, v.c
	when := v.str(0, "timestamp")
	if id := v.str(0, "sessionId"); id != "" {
		o.Session(id, false)
	}
	body := func() (string, int) {
		for _, f := range []string{"text", "content", "message", "output", "result"} {
			if n := t.Get(0, f); n >= 0 {
				if s, chars := v.text(n); chars > 0 {
					return s, chars
				}
			}
		}
		return "", 0
	}
	switch v.str(0, "type") {
	case "user_message":
		text, chars := body()
		v.user(text, chars, when)
	case "assistant_message":
		o.Said(body())
	case "tool_call":
		name := v.str(0, "toolName")
		if name == "" {
			name = v.str(0, "name")
		}
		args := t.Get(0, "arguments")
		if args < 0 {
			args = t.Get(0, "input")
		}
		id := v.str(0, "toolCallId")
		if args >= 0 && t.Nodes[args].Kind == '"' {
			o.CallJSON(name, id, t.Str(args))
		} else {
			o.Call(name, id, t, args)
		}
	case "tool_result":
		head, _ := body()
		o.Result(v.str(0, "toolName"), v.isTrue(0, "isError"), head, when)
	}
}

// Account: every message is in context; the flat format records no usage.
func (d brainSurgeon) Account(t *Tree) Account { return viewAccount(t, d) }

// Prune: the entry's type says what it is; a tool result's value is its
// output, content or result.
func (brainSurgeon) Prune(t *Tree, p *PruneView) {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	p.ID = firstID(t, "__id", "id")
	p.Time = str("timestamp")
	p.Model = str("model")
	switch str("type") {
	case "user_message":
		p.Kind = PruneUser
		p.Contents = append(p.Contents, t.Get(0, "text"), t.Get(0, "content"))
	case "assistant_message", "thinking":
		p.Kind, p.SideItem = PruneAssistant, true
		p.Contents = append(p.Contents, t.Get(0, "text"), t.Get(0, "content"))
	case "tool_call":
		p.Kind, p.SideItem = PruneAssistant, true
		p.Raws = append(p.Raws, t.Get(0, "input"), t.Get(0, "arguments"))
	case "tool_result":
		p.Kind = PruneResults
		tool := str("toolName")
		for _, name := range []string{"output", "content", "result"} {
			if v := t.Get(0, name); v >= 0 {
				p.Results = append(p.Results, PruneResult{v, "", tool, "text"})
				break
			}
		}
	}
}

// Threads: the flat format is linear.
func (brainSurgeon) Threads() Threading { return InOrder }

// Link: entries link to nothing.
func (brainSurgeon) Link(*Tree) Link { return Link{} }

// Unit: a tool result goes with the call before it.
func (brainSurgeon) Unit(t *Tree, lastMsgID string) Unit {
	return Unit{Join: t.Str(t.Get(0, "type")) == "tool_result"}
}

// StatesWindow: the lines state no context window.
func (brainSurgeon) StatesWindow() bool { return false }

// NotText: an entry's type and time.
func (brainSurgeon) NotText() []string {
	return []string{"type", "timestamp"}
}

// Blocks: none; the flat format's values are strings (content it holds
// in blocks is another runtime's).
func (brainSurgeon) Blocks() Blocks { return Blocks{} }

// Marks: the lines record no usage, compaction or model.
func (brainSurgeon) Marks() Marks { return Marks{} }
