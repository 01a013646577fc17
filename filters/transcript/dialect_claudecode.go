package transcript

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
)

// ClaudeCode is Claude Code's project transcripts (FORMATS §3): one line
// per content block, linked by uuid and parentUuid, with sidechains and
// compact boundaries.
var ClaudeCode Dialect = claudeCode{}

type claudeCode struct{}

func (claudeCode) String() string     { return "claude-code" }
func (claudeCode) Aliases() []string  { return []string{"claude", "claudecode"} }
func (claudeCode) HelpName() string   { return "claude-code (claude)" }
func (claudeCode) Title() string      { return "Claude Code" }
func (claudeCode) IDFields() []string { return []string{"uuid", "__id"} }

// SessionDirs: a folder per project.
func (claudeCode) SessionDirs() []string { return []string{".claude/projects"} }

// LineType: the line's type (user, assistant, system, progress, …).
func (claudeCode) LineType(t *Tree) string { return t.Str(t.Get(0, "type")) }

// OuterType: the line's type, as LineType.
func (c claudeCode) OuterType(t *Tree) string { return c.LineType(t) }

// Envelope: the message of a user or assistant line.
func (claudeCode) Envelope(tokens []string) int { return wrappedIn("message", tokens) }

// WorkDir: the cwd every line of the conversation carries.
func (claudeCode) WorkDir(t *Tree) string { return t.Str(t.Get(0, "cwd")) }

func (claudeCode) Claims(t *Tree) bool {
	switch {
	case t.Get(0, "uuid") >= 0 || t.Get(0, "parentUuid") >= 0 || t.Get(0, "leafUuid") >= 0:
		return true
	case t.Get(0, "sessionId") >= 0 && (t.Get(0, "message") >= 0 || t.Get(0, "requestId") >= 0):
		return true
	}
	switch t.Str(t.Get(0, "type")) {
	case "file-history-snapshot", "queue-operation", "summary":
		return true
	}
	return false
}

func (claudeCode) ViewEntry(t *Tree, e *Entry) {
	v := viewer{t: t, e: e}
	v.claude()
}

// Speaker: the role of the message (message.role).
func (claudeCode) Speaker(t *Tree, e *Entry, node int) string { return roleAbove(t, node, e.Role) }

// CallName: the name of the tool_use block of the message's content
// whose input holds node.
func (claudeCode) CallName(t *Tree, node int) string {
	return anthropicCall(t, t.Path(0, "message", "content"), node)
}

// AnsweredCall: the tool_use_id of the tool_result block of the
// message's content that holds node. The line's toolUseResult, the
// runtime's own record of that result, is beside the block, not in it.
func (claudeCode) AnsweredCall(t *Tree, node int) string {
	return anthropicAnswer(t, t.Path(0, "message", "content"), node)
}

// Spends: an answer, or a subagent's answer inside a progress line.
func (claudeCode) Spends(t *Tree) bool {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	return str("type") == "assistant" && t.Path(0, "message", "usage") >= 0 ||
		str("type") == "progress" && t.Path(0, "data", "message", "message", "usage") >= 0
}

// SpendRecord keeps the line's top-level bookkeeping and of its message
// the id, model and usage, without type, uuid or content: Claude Code
// loads only lines of the types it knows.
func (claudeCode) SpendRecord(t *Tree, by, id, parent string) []byte {
	r := &record{t: t, b: []byte{'{'}}
	r.copyMembers(0, map[string]bool{"type": true, "uuid": true, "parentUuid": true, "logicalParentUuid": true, "message": true, "data": true,
		"toolUseResult": true, "sourceToolAssistantUUID": true, "toolUseID": true, "parentToolUseID": true,
		AdjustedField: true, "_extracted": true, "__id": true, "_restored": true})
	// only keeps the members of object obj named in keep, and the
	// object kept under name sub, if any.
	only := func(obj int, keep map[string]bool, sub string, inner []byte) []byte {
		o := []byte{'{'}
		t.Children(obj, func(c, _ int) {
			k := t.Key(c)
			v := t.Raw(c)
			switch {
			case k == sub && inner != nil:
				v = inner
			case !keep[k]:
				return
			}
			if len(o) > 1 {
				o = append(o, ',')
			}
			o = AppendQuote(o, k)
			o = append(o, ':')
			o = append(o, v...)
		})
		return append(o, '}')
	}
	answer := map[string]bool{"id": true, "model": true, "usage": true}
	if m := t.Get(0, "message"); m >= 0 {
		r.member("message", only(m, answer, "", nil))
	} else {
		// A progress line: the subagent's answer, as it stands there.
		dm := t.Path(0, "data", "message")
		inner := only(t.Get(dm, "message"), answer, "", nil)
		r.member("data", append(append([]byte(`{"message":`), only(dm, map[string]bool{"type": true, "timestamp": true, "requestId": true}, "message", inner)...), '}'))
	}
	return r.close(by)
}

func (v *viewer) claude() {
	t, e := v.t, v.e
	e.Time = v.str(0, "timestamp")
	typ := v.str(0, "type")
	if id := v.str(0, "sessionId"); id != "" {
		e.SessionID = id
	}
	if typ == "progress" {
		// What the runtime showed while a tool, hook or subagent ran:
		// never sent to the model. What names a message and its spend
		// stays, whatever --min-length: cost reports read a subagent's
		// answers here (id, model, requestId, usage, timestamps).
		v.leavesBut(t.Get(0, "data"), Bookkeeping, claudeSpendKeys)
		return
	}
	if typ != "user" && typ != "assistant" {
		return
	}
	e.Message = true
	e.Role = typ
	msg := t.Get(0, "message")
	v.anthropicContent(t.Get(msg, "content"), Text)
	if r := t.Get(0, "toolUseResult"); r >= 0 {
		// The runtime's own record of the result the line's tool_result
		// block answers: the same call.
		outer := v.call
		t.Children(t.Get(msg, "content"), func(b, _ int) {
			if v.call == outer && v.str(b, "type") == "tool_result" {
				v.call = v.str(b, "tool_use_id")
			}
		})
		v.leaves(r, ToolResult)
		v.call = outer
	}
}

// claudeSpendKeys are the members of a progress line's data no
// bookkeeping value comes from: what names a subagent's message, its
// model and its time, which cost reports read.
var claudeSpendKeys = map[string]bool{
	"id": true, "uuid": true, "model": true, "requestId": true, "timestamp": true, "type": true, "role": true,
	"usage": true, "stop_reason": true, "agentId": true, "parentUuid": true, "sessionId": true,
}

// Identity: the sessionId every line carries. A subagent's own file
// carries its parent's sessionId on every line, and its agentId: its
// identity is the sessionId, "/agent-" and the agentId.
func (claudeCode) Identity(t *Tree) (string, Stated) {
	id := t.Str(t.Get(0, "sessionId"))
	if id == "" {
		return "", NotStated
	}
	if agent := t.Str(t.Get(0, "agentId")); agent != "" {
		return id + "/agent-" + agent, Stamped
	}
	return id, Stamped
}

// Follow: every line names the session, and the uuid the next one's
// parentUuid takes, with the cwd and version a new line repeats.
func (claudeCode) Follow(t *Tree, tail *Tail) {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	if id := str("uuid"); id != "" {
		tail.LastID = id
	}
	if s := str("sessionId"); s != "" {
		tail.Session = s
	}
	if s := str("cwd"); s != "" {
		tail.Cwd = s
	}
	if s := str("version"); s != "" {
		tail.Version = s
	}
	if s := str("agentId"); s != "" {
		tail.Agent = s
	}
}

// ContextEntry is a meta user message, chained to the last line.
func (claudeCode) ContextEntry(tail *Tail, n ContextNote) []byte {
	h := n.hash(tail)
	uuid := h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
	extra := ""
	if tail.Session != "" {
		extra += `,"sessionId":` + quote(tail.Session)
	}
	if tail.Cwd != "" {
		extra += `,"cwd":` + quote(tail.Cwd)
	}
	if tail.Version != "" {
		extra += `,"version":` + quote(tail.Version)
	}
	// A subagent's lines are all its sidechain's, and name it.
	sidechain := "false"
	if tail.Agent != "" {
		sidechain = "true"
		extra += `,"agentId":` + quote(tail.Agent)
	}
	return []byte(`{"parentUuid":` + nullOr(tail.LastID) + `,"isSidechain":` + sidechain + `,"userType":"external","type":"user","message":{"role":"user","content":` + quote(n.Text) + `},"isMeta":true,"uuid":` + quote(uuid) + `,"timestamp":` + n.stamp() + extra + `,` + n.tag() + "}\n")
}

func (claudeCode) ContextText(t *Tree) string { return t.Str(t.Path(0, "message", "content")) }

func (claudeCode) IsCompaction(t *Tree) bool {
	return t.Str(t.Get(0, "type")) == "system" && t.Str(t.Get(0, "subtype")) == "compact_boundary"
}

// NumbersEntries: a compact boundary keeps no entry before it.
func (claudeCode) NumbersEntries(*Tree) bool { return false }

// KeptNumber: none; a compact boundary keeps no entry before it.
func (claudeCode) KeptNumber(*Tree) int { return -1 }

// CompactedFrom: a compact boundary's compactMetadata.preTokens.
func (c claudeCode) CompactedFrom(t *Tree) (int, bool) {
	if !c.IsCompaction(t) {
		return 0, false
	}
	return integer(t, t.Path(0, "compactMetadata", "preTokens"))
}

// RollNote is a compact_boundary and its summary, as after Claude Code's
// own compaction. Claude Code follows the parentUuids from the last
// message; when they lead to an evicted line, the summary takes that
// uuid, so the chain runs through the summary to the boundary instead of
// stopping short.
func (claudeCode) RollNote(n RollNote) [][]byte {
	boundary, summary := claudeUUID(n.Hash("boundary")), claudeUUID(n.Hash("summary"))
	chain := n.Chain()
	if chain.Evicted != "" {
		summary = chain.Evicted
	}
	logical := chain.LastBefore // the last line before the compaction
	if logical == summary {
		// The summary took that uuid: pointing at it would make the
		// boundary its own grandparent. The line before the range is the
		// nearest one still in the file.
		logical = chain.LastBeforeRange
	}
	// In a subagent's file, whose lines are all a sidechain's, the notes
	// are too.
	sidechain := "false"
	if !chain.Main {
		sidechain = "true"
	}
	session := ""
	if n.Session != "" {
		session = `,"sessionId":` + quote(n.Session)
	}
	if n.Agent != "" {
		session += `,"agentId":` + quote(n.Agent) // a subagent's file keeps its identity
	}
	ev := quote(EvictedField) + ":" + n.Evicted(1)
	return [][]byte{
		[]byte(`{"parentUuid":null,"logicalParentUuid":` + nullOr(logical) + `,"isSidechain":` + sidechain + `,"type":"system","subtype":"compact_boundary","content":"Conversation compacted","isMeta":false,"timestamp":` + quote(n.Now) + `,"uuid":` + quote(boundary) + `,"level":"info","compactMetadata":{"trigger":"bs-roll","preTokens":` + strconv.Itoa(n.Tokens) + `}` + session + `,` + ev + `,` + n.Rolled(1) + "}\n"),
		[]byte(`{"parentUuid":` + quote(boundary) + `,"isSidechain":` + sidechain + `,"type":"user","message":{"role":"user","content":` + quote(n.messageText()) + `},"isVisibleInTranscriptOnly":true,"isCompactSummary":true,"uuid":` + quote(summary) + `,"timestamp":` + quote(n.Now) + session + `,` + n.Tag + "}\n"),
	}
}

// RollTree is nil: RollNote writes the note.
func (claudeCode) RollTree() RollTree { return nil }

// claudeUUID is a version-4-shaped id like Claude Code's.
func claudeUUID(h []byte) string {
	h[6] = h[6]&0x0f | 0x40
	h[8] = h[8]&0x3f | 0x80
	x := hex.EncodeToString(h[:16])
	return x[0:8] + "-" + x[8:12] + "-" + x[12:16] + "-" + x[16:20] + "-" + x[20:32]
}

// interruptText starts the line Claude Code writes when the user stops a
// turn.
const interruptText = "[Request interrupted by user"

// Turn: a user line is a prompt unless it carries tool results (or says
// the user stopped the turn); calls are tool_use blocks, answered by
// tool_result blocks, server tools' included.
func (claudeCode) Turn(t *Tree, e *Entry) Turn {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	var k Turn
	typ := str(0, "type")
	if typ == "user" {
		result := false
		t.Children(t.Path(0, "message", "content"), func(b, _ int) {
			if str(b, "type") == "tool_result" {
				result = true
			}
		})
		k.Prompt, k.Result = !result, result
		if !result && bytes.Contains(t.Src, []byte(interruptText)) && strings.HasPrefix(EntryText(t, e, 64), interruptText) {
			k.Prompt, k.Interrupt = false, true
		}
	}
	k.Assistant = typ == "assistant"
	k.MaxTurns = str(0, "subtype") == "error_max_turns" || maxTurnsStop(t)
	k.Issued, k.Answered = claudeCalls(t, func(b int) {
		if x := t.Get(b, "is_error"); x >= 0 && string(t.Raw(x)) == "true" {
			k.Failed = true
		}
	})
	return k
}

// claudeCalls are the ids of the calls line t issues and of those it
// answers: tool_use and tool_result blocks, and a server tool's
// (server_tool_use, web_search_tool_result). each, if not nil, is given
// every block of the message's content.
func claudeCalls(t *Tree, each func(block int)) (issued, answered []string) {
	t.Children(t.Path(0, "message", "content"), func(b, _ int) {
		switch t.Str(t.Get(b, "type")) {
		case "tool_use", "server_tool_use":
			issued = ids(issued, t.Str(t.Get(b, "id")))
		case "tool_result", "web_search_tool_result":
			answered = ids(answered, t.Str(t.Get(b, "tool_use_id")))
		}
		if each != nil {
			each(b)
		}
	})
	return issued, answered
}

// claudeEnvelope are the members every Claude Code line repeats, which a
// stand-in line repeats too.
var claudeEnvelope = []string{"isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch"}

// FollowTurn keeps the time and the envelope of the turn's last line.
func (claudeCode) FollowTurn(t *Tree, _ bool, s *StandIn) {
	s.Time = rawCopy(t, t.Get(0, "timestamp"))
	s.Envelope = s.Envelope[:0]
	for _, f := range claudeEnvelope {
		if i := t.Get(0, f); i >= 0 {
			s.Envelope = append(s.Envelope, Member{f, rawCopy(t, i)})
		}
	}
}

// StandInEntry is a synthetic assistant line in the turn's envelope,
// taking the uuid of the turn's last line.
func (claudeCode) StandInEntry(s *StandIn, n StandInNote) []byte {
	var o object
	parent := []byte("null")
	if s.Parent != "" {
		parent = AppendQuote(nil, s.Parent)
	}
	o.member("parentUuid", parent)
	for _, c := range s.Envelope {
		o.member(c.Name, c.Raw)
	}
	o.member("type", []byte(`"assistant"`))
	msg := AppendQuote([]byte(`{"id":`), "msg_bs_archive_"+s.Key)
	msg = append(msg, `,"type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":`...)
	msg = AppendQuote(msg, n.Text)
	msg = append(msg, `}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}`...)
	o.member("message", msg)
	uuid := s.ID
	if uuid == "" {
		uuid = "bs-archive-" + s.Key
	}
	o.member("uuid", AppendQuote(nil, uuid))
	o.member("timestamp", s.stamp(n.Now))
	return o.close(n)
}

// Converse reads line t into c.
func (claudeCode) Converse(t *Tree, c Conversation) {
	v := conversing{t: t, c: c, inserted: claudeCode{}.Inserted}
	v.claude()
}

func (v *conversing) claude() {
	t, o := v.t, v.c
	if id := v.str(0, "sessionId"); id != "" {
		o.Session(id, false)
	}
	if id := v.str(0, "agentId"); id != "" {
		o.Agent(id)
	}
	if t.Get(0, "isCompactSummary") >= 0 || v.isTrue(0, "isMeta") {
		return
	}
	when := v.str(0, "timestamp")
	content := t.Path(0, "message", "content")
	switch v.str(0, "type") {
	case "user":
		v.anthropic(content, when, true)
	case "assistant":
		v.anthropic(content, when, false)
	}
}

// Account: an assistant line carries the usage of its response, which
// the lines of one response share (MsgID); a compact_boundary starts the
// context again.
func (claudeCode) Account(t *Tree) Account {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	typ := str(0, "type")
	if typ == "" {
		typ = str(0, "message", "role") // usage-only lines (ccusage fixtures) have no type
	}
	switch typ {
	case "user":
		return content(t.Get(0, "message"))
	case "assistant":
		msg := t.Get(0, "message")
		a := content(msg)
		n, usage := claudeUsage(t, msg)
		if m := str(msg, "model"); m != "" && m != "<synthetic>" {
			a.Model = m
		}
		if usage && t.Get(0, "isApiErrorMessage") < 0 {
			a.Role, a.Tokens, a.MsgID = UsageReport, n, str(msg, "id")
		}
		return a
	case "system":
		if str(0, "subtype") == "compact_boundary" {
			a := noAccount
			a.Role = CompactionEntry
			return a
		}
	}
	return noAccount
}

// claudeUsage reads a Claude Code assistant line's usage.
func claudeUsage(t *Tree, msg int) (int, bool) {
	u := t.Get(msg, "usage")
	if u < 0 {
		return 0, false
	}
	n := number(t, t.Get(u, "input_tokens")) + number(t, t.Get(u, "cache_creation_input_tokens")) +
		number(t, t.Get(u, "cache_read_input_tokens")) + number(t, t.Get(u, "output_tokens"))
	return n, n > 0
}

// Prune: a user line carries a prompt or tool results; the lines of one
// response share its message id.
func (claudeCode) Prune(t *Tree, p *PruneView) {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	p.ID = firstID(t, "uuid", "__id")
	p.Time = str(0, "timestamp")
	msg := t.Get(0, "message")
	content := t.Get(msg, "content")
	switch str(0, "type") {
	case "user":
		p.Kind = PruneUser
		if content < 0 || t.Nodes[content].Kind != '[' {
			p.Contents = append(p.Contents, content)
			return
		}
		t.Children(content, func(b, _ int) {
			switch str(b, "type") {
			case "tool_result":
				p.Kind = PruneResults
				p.Results = append(p.Results, PruneResult{t.Get(b, "content"), str(b, "tool_use_id"), "", "text"})
			case "text":
				p.Texts = append(p.Texts, t.Get(b, "text"))
			case "image":
				p.Images++
			}
		})
	case "assistant":
		p.Kind = PruneAssistant
		p.MsgID = str(msg, "id")
		if m := str(msg, "model"); m != "<synthetic>" {
			p.Model = m
		}
		t.Children(content, func(b, _ int) {
			switch str(b, "type") {
			case "text":
				p.Texts = append(p.Texts, t.Get(b, "text"))
			case "thinking":
				p.Texts = append(p.Texts, t.Get(b, "thinking"))
			case "tool_use":
				p.Raws = append(p.Raws, t.Get(b, "input"))
				p.Calls = append(p.Calls, PruneCall{str(b, "id"), str(b, "name")})
			}
		})
	case "system":
		p.Compaction = str(0, "subtype") == "compact_boundary"
	}
}

// Threads: Claude Code's lines chain by parentUuid, with sidechains and
// compact boundaries.
func (claudeCode) Threads() Threading { return ParentChains }

// Link is a line's uuid and parentUuid, its response's message id, its
// thread, and the calls it issues and answers (claudeCalls, as Turn).
func (claudeCode) Link(t *Tree) Link {
	l := Link{ID: t.Str(t.Get(0, "uuid")), Parent: t.Str(t.Get(0, "parentUuid"))}
	l.Sidechain = string(t.Raw(max(t.Get(0, "isSidechain"), 0))) == "true"
	switch t.Str(t.Get(0, "type")) {
	case "assistant":
		l.MsgID = t.Str(t.Path(0, "message", "id"))
		fallthrough
	case "user":
		l.Thread = MainThread
		if l.Sidechain {
			l.Thread = SideThread
		}
	}
	l.Issued, l.Answered = claudeCalls(t, nil)
	return l
}

// Unit: the lines of one response go together, a tool result with its
// call; progress lines are bookkeeping of the response they follow.
func (claudeCode) Unit(t *Tree, lastMsgID string) Unit {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	switch str(0, "type") {
	case "assistant":
		id := str(0, "message", "id")
		return Unit{Join: id != "" && id == lastMsgID, MsgID: id}
	case "user":
		result := false
		t.Children(t.Path(0, "message", "content"), func(b, _ int) {
			if str(b, "type") == "tool_result" {
				result = true
			}
		})
		return Unit{Join: result}
	case "progress":
		return Unit{Join: true, Noise: true, MsgID: lastMsgID}
	}
	return Unit{MsgID: lastMsgID}
}

// StatesWindow: the lines state no context window.
func (claudeCode) StatesWindow() bool { return false }

// NotText: what names a message and its time, its stop reason, ids and
// the call a result answers, a thinking block's signature, redacted
// thinking's and an image's data and its media type.
func (claudeCode) NotText() []string {
	return []string{"role", "type", "model", "stop_reason", "timestamp", "id", "tool_use_id", "signature", "data", "media_type"}
}

// Blocks: the Messages API's text and image blocks.
func (claudeCode) Blocks() Blocks { return Blocks{Text: []string{"text"}, Image: []string{"image"}} }

// Marks: an answer's usage (an answer's or a subagent's in a progress
// line), a compact_boundary (compact, as the start of a value), the
// model of an answer.
func (claudeCode) Marks() Marks {
	usage := []Mark{{Text: `usage"`, Name: true}}
	return Marks{Spend: usage, Usage: usage, Reset: []Mark{{Text: "compact"}}, Model: []Mark{{Text: `model"`, Name: true}},
		WorkDir: []Mark{{Text: `cwd"`, Name: true}}}
}

// Inserted: a text that begins as one of claudeCodeInserted does.
func (claudeCode) Inserted(text string) bool { return beginsAsOneOf(text, claudeCodeInserted) }

// claudeCodeInserted are how the texts Claude Code puts in a user message
// of its own accord begin: slash commands and their output, reminders,
// the shell's input and output, its notes on interruptions.
var claudeCodeInserted = []string{
	"<command-name>", "<command-message>", "<local-command-", "<system-reminder>", "<bash-input>", "<bash-stdout>",
	"Caveat: The messages below were generated by the user while running local commands",
	"[Request interrupted by user",
}
