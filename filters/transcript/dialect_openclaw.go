package transcript

import "strconv"

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

// SessionDirs: OpenClaw's agents (each keeps its sessions under it), and
// pi's own sessions.
func (openClaw) SessionDirs() []string { return []string{".openclaw/agents", ".pi/agent/sessions"} }

// LineType: the entry's type (message, compaction, session, …).
func (openClaw) LineType(t *Tree) string { return t.Str(t.Get(0, "type")) }

// OuterType: the entry's type, as LineType (pi's entries wrap nothing).
func (o openClaw) OuterType(t *Tree) string { return o.LineType(t) }

// Envelope: the message of a message entry.
func (openClaw) Envelope(tokens []string) int { return wrappedIn("message", tokens) }

// WorkDir: the cwd of the session header.
func (openClaw) WorkDir(t *Tree) string { return t.Str(t.Get(0, "cwd")) }

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

// Speaker: the role of the message (message.role); a custom_message's is
// the entry's.
func (openClaw) Speaker(t *Tree, e *Entry, node int) string { return roleAbove(t, node, e.Role) }

// CallName: the name of the toolCall block of the message's content
// whose arguments hold node.
func (openClaw) CallName(t *Tree, node int) string {
	return t.Str(t.Get(blockAbove(t, t.Path(0, "message", "content"), node, "toolCall"), "name"))
}

// AnsweredCall: a toolResult message's toolCallId, for what the message
// holds.
func (openClaw) AnsweredCall(t *Tree, node int) string {
	msg := t.Get(0, "message")
	if t.Str(t.Get(msg, "role")) != "toolResult" || !inside(t, msg, node) {
		return ""
	}
	return t.Str(t.Get(msg, "toolCallId"))
}

func (openClaw) Spends(t *Tree) bool {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	return str("type") == "message" && str("message", "role") == "assistant" && t.Path(0, "message", "usage") >= 0
}

// SpendRecord is an assistant message with no content that stopped
// "aborted", which pi never sends to a model; in a tree (v2+) off the
// path, hung from parent, an entry before the lines taken out.
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
		e.Instructions = instructionsRole(e.Role) // pi writes neither role today; roll always kept them
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
	v.blocks(content, textKind, func(b int, typ string) {
		switch typ {
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

// Identity: the header's id (the id of an entry names the entry).
func (openClaw) Identity(t *Tree) (string, Stated) {
	if t.Str(t.Get(0, "type")) == "session" {
		return t.Str(t.Get(0, "id")), Header
	}
	return "", NotStated
}

// Follow: the header names the session; entries with ids make a tree
// (v2+), as does a header of a version after 1.
func (openClaw) Follow(t *Tree, tail *Tail) {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	if str("type") == "session" {
		tail.Session = str("id")
	}
	if id := str("id"); id != "" && str("type") != "session" {
		tail.LastID, tail.Tree = id, true
	} else if str("type") == "session" && t.Get(0, "version") >= 0 && string(t.Raw(t.Get(0, "version"))) != "1" {
		tail.Tree = true
	}
}

// ContextEntry is a custom_message pi gives the model as a user message,
// hung from the last entry in a tree.
func (openClaw) ContextEntry(tail *Tail, n ContextNote) []byte {
	ids := ""
	if tail.Tree {
		ids = `,"id":` + quote(n.hash(tail)[:8]) + `,"parentId":` + nullOr(tail.LastID)
	}
	return []byte(`{"type":"custom_message","customType":` + quote(n.Kind) + `,"content":` + quote(n.Text) + `,"display":false` + ids + `,"timestamp":` + n.stamp() + `,` + n.tag() + "}\n")
}

func (openClaw) ContextText(t *Tree) string { return t.Str(t.Get(0, "content")) }

func (openClaw) IsCompaction(t *Tree) bool { return t.Str(t.Get(0, "type")) == "compaction" }

// NumbersEntries: a v1 session, whose header states no version, has no
// entry ids; its compactions name their first kept entry by
// firstKeptEntryIndex, counting the lines pi parses, the header first.
func (openClaw) NumbersEntries(first *Tree) bool {
	return first.Str(first.Get(0, "type")) == "session" && first.Get(0, "version") < 0
}

// KeptNumber: a compaction's firstKeptEntryIndex.
func (o openClaw) KeptNumber(t *Tree) int {
	if !o.IsCompaction(t) {
		return -1
	}
	return t.Get(0, "firstKeptEntryIndex")
}

// CompactedFrom: a compaction's tokensBefore.
func (o openClaw) CompactedFrom(t *Tree) (int, bool) {
	if !o.IsCompaction(t) {
		return 0, false
	}
	return integer(t, t.Get(0, "tokensBefore"))
}

// RollNote is nil: pi's context is the path to a compaction appended
// last that names the first entry it keeps, so bs roll writes a marker
// where the range was and a compaction at the end (RollTree).
func (openClaw) RollNote(RollNote) [][]byte { return nil }

// RollTree: pi's (piRoll).
func (openClaw) RollTree() RollTree { return piRoll{} }

// piRoll spells bs roll's note in pi's entries. Its marker and bridges
// are custom entries, which pi keeps out of the context, but for the
// marker of a tree: a custom_message, given to the model as a user
// message where a path leaves the compaction (a user gone back to a kept
// entry), and out of it on the path through the compaction, which keeps
// from after it.
type piRoll struct{}

func (piRoll) Marker(m RollMarker) []byte {
	ev := quote(EvictedField) + ":" + m.Evicted
	if m.ID == "" { // v1: no tree, and the compaction's summary is in context
		return []byte(`{"type":"custom","customType":"bs:evicted","data":{"note":` + quote(m.Text) + `},"timestamp":` + quote(m.Now) + `,` + ev + `,` + m.Tag + "}\n")
	}
	return []byte(`{"type":"custom_message","customType":"bs:evicted","content":` + quote(RollNote{Text: m.Text}.messageText()) + `,"display":false,"id":` + quote(m.ID) + `,"parentId":` + nullOr(m.Parent) + `,"timestamp":` + quote(m.Now) + `,` + ev + `,` + m.Tag + "}\n")
}

// Compaction keeps from firstKeptEntryId in a tree, from
// firstKeptEntryIndex in v1.
func (piRoll) Compaction(c RollCompaction) []byte {
	if c.ID == "" {
		return []byte(`{"type":"compaction","timestamp":` + quote(c.Now) + `,"summary":` + quote(c.Summary) + `,"firstKeptEntryIndex":` + strconv.Itoa(c.KeptIndex) + `,"tokensBefore":` + c.TokensBefore + `,` + c.Tag + "}\n")
	}
	return []byte(`{"type":"compaction","id":` + quote(c.ID) + `,"parentId":` + nullOr(c.Parent) + `,"timestamp":` + quote(c.Now) + `,"summary":` + quote(c.Summary) + `,"firstKeptEntryId":` + quote(c.KeptID) + `,"tokensBefore":` + c.TokensBefore + `,` + c.Tag + "}\n")
}

func (piRoll) ModelChange(id, parent, now, provider, model, tag string) []byte {
	return []byte(`{"type":"model_change","id":` + quote(id) + `,"parentId":` + quote(parent) + `,"timestamp":` + quote(now) + `,"provider":` + quote(provider) + `,"modelId":` + quote(model) + `,` + tag + "}\n")
}

func (piRoll) Bridge(id, parent, now, tag string) []byte {
	return []byte(`{"type":"custom","customType":"bs:bridge","data":{},"id":` + quote(id) + `,"parentId":` + quote(parent) + `,"timestamp":` + quote(now) + `,` + tag + "}\n")
}

// Reparent rewrites the parentId in place, the rest of the line intact.
func (piRoll) Reparent(t *Tree, body []byte, parent string) ([]byte, bool) {
	k := t.Get(0, "parentId")
	if k < 0 {
		return nil, false
	}
	nd := t.Nodes[k]
	return append(append(append([]byte{}, body[:nd.Start]...), quote(parent)...), body[nd.End:]...), true
}

// Provider: an answer's message names it; a model_change or a v1 header
// on the line itself.
func (piRoll) Provider(t *Tree) string {
	if p := t.Str(t.Path(0, "message", "provider")); p != "" {
		return p
	}
	return t.Str(t.Get(0, "provider"))
}

func (piRoll) Summary(t *Tree) (summary, tokensBefore string) {
	if k := t.Get(0, "tokensBefore"); k >= 0 {
		tokensBefore = string(t.Raw(k))
	}
	return t.Str(t.Get(0, "summary")), tokensBefore
}

func (piRoll) ReadRolled(t *Tree) RolledLine {
	switch t.Str(t.Get(0, "type")) {
	case "model_change":
		return RolledLine{Model: t.Str(t.Get(0, "modelId"))}
	case "custom_message":
		if t.Get(0, EvictedField) >= 0 {
			return RolledLine{Marker: true, ID: t.Str(t.Get(0, "id")), Content: t.Get(0, "content")}
		}
	}
	return RolledLine{}
}

// Turn: the message's role says prompt, answer or result; the tool
// calls are toolCall blocks, answered by a toolResult's toolCallId.
func (openClaw) Turn(t *Tree, e *Entry) Turn {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	msg := t.Get(0, "message")
	role := str(msg, "role")
	k := Turn{Prompt: e.Message && role == "user", Assistant: e.Message && role == "assistant", Result: role == "toolResult", MaxTurns: maxTurnsStop(t)}
	k.Failed = string(t.Raw(max(t.Path(0, "message", "isError"), 0))) == "true"
	t.Children(t.Get(msg, "content"), func(b, _ int) {
		if str(b, "type") == "toolCall" {
			k.Issued = ids(k.Issued, str(b, "id"))
		}
	})
	if role == "toolResult" {
		k.Answered = ids(k.Answered, str(msg, "toolCallId"))
	}
	return k
}

// FollowTurn keeps the line's time, the message's own timestamp, and of
// an answer the api, provider and model a stand-in answer repeats.
func (openClaw) FollowTurn(t *Tree, answer bool, s *StandIn) {
	s.Time = rawCopy(t, t.Get(0, "timestamp"))
	msg := t.Get(0, "message")
	s.MsgTime = rawCopy(t, t.Get(msg, "timestamp"))
	if answer {
		s.API, s.Provider, s.Model = rawCopy(t, t.Get(msg, "api")), rawCopy(t, t.Get(msg, "provider")), rawCopy(t, t.Get(msg, "model"))
	}
}

// StandInEntry is an assistant message with zero usage (which the
// gauges skip), taking the id of the turn's last entry in a tree.
func (openClaw) StandInEntry(s *StandIn, n StandInNote) []byte {
	var o object
	o.member("type", []byte(`"message"`))
	if s.ID != "" {
		o.member("id", AppendQuote(nil, s.ID))
		parent := []byte("null")
		if s.Parent != "" {
			parent = AppendQuote(nil, s.Parent)
		}
		o.member("parentId", parent)
	}
	o.member("timestamp", s.stamp(n.Now))
	msg := []byte(`{"role":"assistant","content":[{"type":"text","text":`)
	msg = AppendQuote(msg, n.Text)
	msg = append(msg, `}],"api":`...)
	msg = append(msg, rawOr(s.API, []byte(`"bs"`))...)
	msg = append(msg, `,"provider":`...)
	msg = append(msg, rawOr(s.Provider, []byte(`"bs"`))...)
	msg = append(msg, `,"model":`...)
	msg = append(msg, rawOr(s.Model, []byte(`"bs-archive"`))...)
	msg = append(msg, `,"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":`...)
	msg = append(msg, rawOr(s.MsgTime, []byte(strconv.FormatInt(n.Now.UnixMilli(), 10)))...)
	o.member("message", append(msg, '}'))
	return o.close(n)
}

// Inserted: none known; every text of a user message is taken as the
// user's.
func (openClaw) Inserted(string) bool { return false }

// Converse reads line t into c.
func (openClaw) Converse(t *Tree, c Conversation) {
	v := conversing{t: t, c: c}
	v.openclaw()
}

func (v *conversing) openclaw() {
	t, o := v.t, v.c
	when := v.str(0, "timestamp")
	switch v.str(0, "type") {
	case "session":
		o.Session(v.str(0, "id"), true)
	case "message":
		msg := t.Get(0, "message")
		content := t.Get(msg, "content")
		switch v.str(msg, "role") {
		case "user":
			text, chars := v.text(content)
			v.user(text, chars, when)
		case "assistant":
			v.piAssistant(content, when)
		case "toolResult":
			head := v.head(content)
			o.Result(v.str(msg, "toolName"), v.isTrue(msg, "isError"), head, when)
		case "bashExecution": // a command the user ran with !
			code := v.raw(t.Get(msg, "exitCode"))
			o.Ran("bash", code != "" && code != "0" && code != "null", t.StrPrefix(t.Get(msg, "output"), headBytes), when)
		}
	}
}

func (v *conversing) piAssistant(content int, when string) {
	t, o := v.t, v.c
	if content < 0 {
		return
	}
	if t.Nodes[content].Kind == '"' {
		o.Said(v.text(content))
		return
	}
	t.Children(content, func(b, _ int) {
		switch v.str(b, "type") {
		case "text":
			o.Said(v.text(t.Get(b, "text")))
		case "toolCall":
			o.Call(v.str(b, "name"), v.str(b, "id"), t, t.Get(b, "arguments"))
		}
	})
}

// Account: an assistant message carries the usage the provider saw;
// compactions keep the entries from the one they name.
func (o openClaw) Account(t *Tree) Account {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	switch str(0, "type") {
	case "message":
		msg := t.Get(0, "message")
		if str(msg, "role") == "assistant" {
			if n, ok := piUsage(t, msg); ok {
				return Account{Role: UsageReport, Tokens: n, Text: true, Content: msg, Fallback: -1, Model: str(msg, "model")}
			}
		}
		a := content(msg)
		if str(msg, "role") == "assistant" {
			a.Model = str(msg, "model")
		}
		return a
	case "custom_message", "branch_summary":
		return content(0)
	case "compaction":
		a := content(t.Get(0, "summary"))
		a.Role = CompactionEntry
		a.KeptID, a.KeptIndex = str(0, "firstKeptEntryId"), number(t, o.KeptNumber(t))
		a.Parent = str(0, "parentId")
		return a
	case "model_change", "session":
		a := noAccount
		a.Model = str(0, "modelId")
		return a
	}
	return noAccount
}

// piUsage reads an OpenClaw/pi assistant message's usage. Messages that
// ended in an error or were aborted, and all-zero usage (gateway-injected
// and mirrored messages), carry no context size.
func piUsage(t *Tree, msg int) (int, bool) {
	switch t.Str(t.Get(msg, "stopReason")) {
	case "error", "aborted":
		return 0, false
	}
	u := t.Get(msg, "usage")
	if u < 0 {
		return 0, false
	}
	n := number(t, t.Get(u, "input")) + number(t, t.Get(u, "cacheRead")) + number(t, t.Get(u, "cacheWrite")) + number(t, t.Get(u, "output"))
	if n == 0 {
		n = number(t, t.Get(u, "totalTokens"))
	}
	return n, n > 0
}

// Prune: pi's messages by role; compactions keep from the entry they
// name; an assistant message counts its text, thinking and arguments.
func (o openClaw) Prune(t *Tree, p *PruneView) {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	p.ID, p.Keepable = firstID(t, "id", "__id"), true
	p.Time = str(0, "timestamp")
	switch str(0, "type") {
	case "session", "model_change":
		p.Model = str(0, "modelId")
	case "compaction":
		p.Kind, p.Compaction = PruneOther, true
		p.KeptID, p.KeptByID = str(0, "firstKeptEntryId"), t.Get(0, "firstKeptEntryId") >= 0
		if n, ok := integer(t, o.KeptNumber(t)); ok {
			p.KeptIndex = n
		}
	case "branch_summary", "custom_message":
		p.Kind = PruneOther
	case "message":
		msg := t.Get(0, "message")
		content := t.Get(msg, "content")
		switch str(msg, "role") {
		case "user":
			p.Kind = PruneUser
			p.Contents = append(p.Contents, content)
		case "assistant":
			p.Kind = PruneAssistant
			p.Model = str(msg, "model")
			if ts := t.Get(msg, "timestamp"); ts >= 0 && t.Nodes[ts].Kind == '0' {
				p.TimeMs, _ = strconv.ParseInt(string(t.Raw(ts)), 10, 64)
			}
			t.Children(content, func(b, _ int) {
				switch str(b, "type") {
				case "text":
					p.Texts = append(p.Texts, t.Get(b, "text"))
				case "thinking":
					p.Texts = append(p.Texts, t.Get(b, "thinking"))
				case "toolCall":
					if a := t.Get(b, "arguments"); a >= 0 {
						p.Raws = append(p.Raws, a)
					} else {
						p.EmptyArgs++
					}
					p.Calls = append(p.Calls, PruneCall{str(b, "id"), str(b, "name")})
				}
			})
		case "toolResult":
			p.Kind = PruneResults
			p.Results = append(p.Results, PruneResult{content, str(msg, "toolCallId"), str(msg, "toolName"), "text"})
		default:
			p.Kind = PruneOther
		}
	}
}

// Threads: pi's entries make a tree; the context is the path to the last.
func (openClaw) Threads() Threading { return ParentTree }

// Link is an entry's id and parentId; the header's id names the session,
// not an entry.
func (openClaw) Link(t *Tree) Link {
	var l Link
	if t.Str(t.Get(0, "type")) == "session" {
		l.Header = true
	} else {
		l.ID = t.Str(t.Get(0, "id"))
	}
	l.Parent = t.Str(t.Get(0, "parentId"))
	return l
}

// Unit: a tool result goes with its call; a branch summary is given to
// the model as a message.
func (openClaw) Unit(t *Tree, lastMsgID string) Unit {
	return Unit{Join: t.Str(t.Path(0, "message", "role")) == "toolResult", Message: t.Str(t.Get(0, "type")) == "branch_summary"}
}

// StatesWindow: the lines state no context window.
func (openClaw) StatesWindow() bool { return false }

// NotText: what names a message and its time, the provider and API it
// went by, its stop reason, ids, the signatures of thinking and text
// blocks, the partial JSON of a streamed call, image data and its type.
func (openClaw) NotText() []string {
	return []string{"role", "type", "model", "api", "provider", "stopReason", "timestamp", "id", "toolCallId", "thinkingSignature", "textSignature", "thoughtSignature", "partialJson", "data", "mimeType"}
}

// Blocks: pi's text and image blocks.
func (openClaw) Blocks() Blocks { return Blocks{Text: []string{"text"}, Image: []string{"image"}} }

// Marks: an assistant message's usage, a compaction (compact, as the
// start of a value), and the model an assistant message, a model_change
// or the session header names.
func (openClaw) Marks() Marks {
	usage := []Mark{{Text: `usage"`, Name: true}}
	return Marks{
		Spend:   usage,
		Usage:   usage,
		Reset:   []Mark{{Text: "compact"}},
		Model:   []Mark{{Text: `model"`, Name: true}, {Text: `model_change"`}, {Text: `session"`}},
		WorkDir: []Mark{{Text: `cwd"`, Name: true}},
	}
}
