package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Kind says what a candidate value is, for --types.
type Kind uint8

const (
	ToolCall Kind = 1 << iota
	ToolResult
	Thinking
	Text
	Image
	// Bookkeeping is what a runtime writes for itself and never sends
	// to the model: the string values of Claude Code's progress lines
	// (a subagent's whole conversation, hook and shell output as it
	// streamed). Their numbers (usage) and short strings (ids, model)
	// stay, for the cost reports that read them.
	Bookkeeping
)

// AllKinds is every kind of value.
const AllKinds = ToolCall | ToolResult | Thinking | Text | Image | Bookkeeping

var kindNames = []struct {
	k    Kind
	name string
}{{ToolCall, "tool_call"}, {ToolResult, "tool_result"}, {Thinking, "thinking"}, {Text, "text"}, {Image, "image"}, {Bookkeeping, "bookkeeping"}}

// KindNames lists the names ParseKinds accepts, in order.
func KindNames() []string {
	names := make([]string, len(kindNames))
	for i, kn := range kindNames {
		names[i] = kn.name
	}
	return names
}

func (k Kind) String() string {
	var parts []string
	for _, kn := range kindNames {
		if k&kn.k != 0 {
			parts = append(parts, kn.name)
		}
	}
	return strings.Join(parts, ",")
}

// ParseKinds parses a comma-separated list such as "tool_call,tool_result".
func ParseKinds(list string) (Kind, error) {
	var k Kind
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		found := false
		for _, kn := range kindNames {
			if s == kn.name {
				k |= kn.k
				found = true
			}
		}
		if !found {
			return 0, fmt.Errorf("unknown type %q (want tool_call, tool_result, thinking, text, image or bookkeeping)", s)
		}
	}
	return k, nil
}

// Value is one candidate for extraction inside an entry.
type Value struct {
	Node    int    // the node that is replaced
	Pointer string // its JSON Pointer within the entry
	Kind    Kind
	// Block, when set, means Node is a whole content block (a thinking or
	// image block) that is replaced by a text block of this type holding
	// the placeholder, so the entry stays valid for its runtime.
	Block string
	// Measure is the string whose decoded length counts for --min-length:
	// Node itself, or the text inside a block.
	Measure int
	// Call, for a value of a tool result whose line does not name the
	// tool (Claude Code, Codex, chat), is the id of the call it answers:
	// the call, on an earlier line, names the tool (Entry.CallIDs).
	Call string
	// Tool is the tool the value belongs to, where a filter has found it
	// by Call; the view leaves it empty.
	Tool string
	// Returned marks an image a tool returned (a block inside a tool
	// result), as against one the user sent: it is part of the result.
	Returned bool
}

// Moves reports whether the value is of the kinds types names: an image a
// tool returned is also part of its tool result, so tool_result takes it
// (seed 000 moves the data of an old tool result), while an image the
// user sent moves only when image is named.
func (v Value) Moves(types Kind) bool {
	return v.Kind&types != 0 || v.Returned && types&ToolResult != 0
}

// Entry is the view of one transcript line that filters work with.
type Entry struct {
	Tree    *Tree
	ID      string // the entry id, "" when the entry has none
	IDField string // the member that holds it: id, uuid or __id
	Role    string
	Time    string
	Message bool // a conversation message, counted by --keep-recent
	// Instructions marks a message that is the runtime's instructions to
	// the model (a chat's system prompt, an OpenAI developer message):
	// context that stays, like a header, when older messages go.
	Instructions bool
	Tools        []string // names of the tool calls this entry makes
	CallIDs      []string // their ids, where the dialect gives them ("" otherwise)
	ToolName     string   // the tool a result belongs to, where the line says it
	// Answers are the ids of the tool calls whose results the entry
	// carries, where the dialect gives them: with CallIDs, how a call
	// and its result pair (filters must not part them).
	Answers   []string
	SessionID string // set on header lines that name the session
	Values    []Value

	// bs's own members, -1 when absent.
	Extractable, Extracted, Restored, Redacted int
}

// GeneratedIDPrefix starts every id bs makes up for an entry without one.
const GeneratedIDPrefix = "bs-"

// GivenID reports whether id is one the transcript gives, not one bs made
// up for an entry without one: only such ids link entries (a parent, a
// first kept entry).
func GivenID(id string) bool {
	return id != "" && !strings.HasPrefix(id, GeneratedIDPrefix)
}

// DeriveID returns the stable id of an entry that has none of its own: it
// depends only on the line's original bytes, so a fully restored line gets
// the same id again when it is next extracted.
func DeriveID(line []byte) string {
	sum := sha256.Sum256(line)
	return GeneratedIDPrefix + hex.EncodeToString(sum[:8])
}

// DeriveIDPieces is DeriveID of the line the pieces make one after the
// other (SplicePieces, its line feed left out): a line with a huge value
// in it is hashed without a copy of it.
func DeriveIDPieces(pieces [][]byte) string {
	h := sha256.New()
	for _, p := range pieces {
		h.Write(p)
	}
	return GeneratedIDPrefix + hex.EncodeToString(h.Sum(nil)[:8])
}

// DeriveIDOf is DeriveID of a parsed line, leaving out its _adjusted
// member (AdjustedField): a later run rewrites that, and restore --all
// takes it away with the values it puts back, so the id stays the one
// the fully restored line gets.
func DeriveIDOf(t *Tree) string {
	cut := AdjustedSpan(t)
	return DeriveIDCut(t.Src, cut.Start, cut.End)
}

// AdjustedSpan is the span the line's _adjusted member takes, with its
// comma (empty when it has none): what DeriveIDOf leaves out.
func AdjustedSpan(t *Tree) Edit {
	if len(t.Nodes) > 0 && t.Nodes[0].Kind == '{' {
		if n := t.Get(0, AdjustedField); n >= 0 {
			return t.RemoveMember(n)
		}
	}
	return Edit{}
}

// DeriveIDCut is DeriveID of line without bytes [start, end).
func DeriveIDCut(line []byte, start, end int) string {
	if start >= end {
		return DeriveID(line)
	}
	return DeriveIDPieces([][]byte{line[:start], line[end:]})
}

// View builds the entry view of a parsed line in dialect d.
func View(t *Tree, d Dialect) Entry {
	e := Entry{Tree: t, Extractable: -1, Extracted: -1, Restored: -1, Redacted: -1}
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return e
	}
	e.Extractable = t.Get(0, "_extractable")
	e.Extracted = t.Get(0, "_extracted")
	e.Restored = t.Get(0, "_restored")
	e.Redacted = t.Get(0, "_redacted")
	if t.Get(0, SpentField) >= 0 {
		return e // a spend record: no message, nothing to move
	}
	if d == nil {
		d = Fallback() // what an undetected transcript is read as
	}
	d.ViewEntry(t, &e)
	e.ID, e.IDField = entryID(t, d)
	return e
}

// instructionsRole reports whether a message of role is instructions
// (Entry.Instructions), in the chat formats that carry them as messages.
func instructionsRole(role string) bool { return role == "system" || role == "developer" }

// entryID is the entry's own id and the member holding it, or "" and
// the member a generated id goes in (DESIGN §3: __id).
func entryID(t *Tree, d Dialect) (string, string) {
	fields := d.IDFields()
	for _, f := range fields {
		if n := t.Get(0, f); n >= 0 && t.Nodes[n].Kind == '"' {
			if id := t.Str(n); id != "" {
				return id, f
			}
		}
	}
	return "", "__id"
}

type viewer struct {
	t    *Tree
	e    *Entry
	call string // the call whose result the values being added belong to
}

// answers records that the entry carries the result of call id.
func (v *viewer) answers(id string) {
	if id != "" {
		v.e.Answers = append(v.e.Answers, id)
	}
}

// tool records a tool call the entry makes.
func (v *viewer) tool(name, id string) {
	v.e.Tools = append(v.e.Tools, name)
	v.e.CallIDs = append(v.e.CallIDs, id)
}

func (v *viewer) add(node int, kind Kind) {
	if node < 0 || v.t.Nodes[node].Kind != '"' {
		return
	}
	v.e.Values = append(v.e.Values, Value{Node: node, Pointer: v.t.Pointer(node), Kind: kind, Measure: node, Call: v.call})
}

func (v *viewer) addBlock(block, measure int, kind Kind, replacement string) {
	if block < 0 || measure < 0 || v.t.Nodes[measure].Kind != '"' {
		return
	}
	v.e.Values = append(v.e.Values, Value{Node: block, Pointer: v.t.Pointer(block), Kind: kind, Block: replacement, Measure: measure, Call: v.call})
}

// addImage adds an image block whose base64 is measure; in content whose
// text counts as textKind, so ToolResult for one a tool returned.
func (v *viewer) addImage(block, measure int, textKind Kind, replacement string) {
	v.addBlock(block, measure, Image, replacement)
	if n := len(v.e.Values); n > 0 && v.e.Values[n-1].Node == block {
		v.e.Values[n-1].Returned = textKind == ToolResult
	}
}

// leaves adds every string below node (or node itself) as kind.
func (v *viewer) leaves(node int, kind Kind) { v.leavesBut(node, kind, nil) }

// leavesBut is leaves but for the members of objects that skip names.
func (v *viewer) leavesBut(node int, kind Kind, skip map[string]bool) {
	if node < 0 {
		return
	}
	switch v.t.Nodes[node].Kind {
	case '"':
		v.add(node, kind)
	case '{', '[':
		object := v.t.Nodes[node].Kind == '{'
		v.t.Children(node, func(c, _ int) {
			if !object || skip == nil || !skip[v.t.Key(c)] {
				v.leavesBut(c, kind, skip)
			}
		})
	}
}

func (v *viewer) str(i int, names ...string) string { return v.t.Str(v.t.Path(i, names...)) }

// blocks calls each with every block of content, an array, and its type;
// a content that is a plain string is a value of textKind itself. Every
// runtime's message content takes one of these two forms.
func (v *viewer) blocks(content int, textKind Kind, each func(b int, typ string)) {
	if content < 0 {
		return
	}
	if v.t.Nodes[content].Kind == '"' {
		v.add(content, textKind)
		return
	}
	v.t.Children(content, func(b, _ int) { each(b, v.str(b, "type")) })
}

// roleAbove is the role member of the nearest object above node that
// has one, else role: who says a text, where the message holding it
// names its role (Dialect.Speaker).
func roleAbove(t *Tree, node int, role string) string {
	for a := t.Nodes[node].Parent; a >= 0; a = t.Nodes[a].Parent {
		if r := t.Get(a, "role"); r >= 0 && t.Nodes[r].Kind == '"' {
			return t.Str(r)
		}
	}
	return role
}

// blockOf is the element of array list that holds node (or is it), or
// -1 when node is not inside list: the message of a line of several, the
// entry of a list of calls.
func blockOf(t *Tree, list, node int) int {
	if list < 0 || t.Nodes[list].Kind != '[' {
		return -1
	}
	for a := node; a >= 0; a = t.Nodes[a].Parent {
		if t.Nodes[a].Parent == list {
			return a
		}
	}
	return -1
}

// inside reports whether node is obj or below it.
func inside(t *Tree, obj, node int) bool {
	if obj < 0 {
		return false
	}
	for a := node; a >= 0; a = t.Nodes[a].Parent {
		if a == obj {
			return true
		}
	}
	return false
}

// blockAbove is the nearest object of type typ at or above node inside
// content: the block of a message's content (a tool call, a result) that
// a value is in; -1 when there is none or node is not in content.
func blockAbove(t *Tree, content, node int, typ string) int {
	if content < 0 {
		return -1
	}
	found := -1
	for a := node; a >= 0; a = t.Nodes[a].Parent {
		if a == content {
			return found
		}
		if found < 0 && t.Nodes[a].Kind == '{' && t.Str(t.Get(a, "type")) == typ {
			found = a
		}
	}
	return -1
}

// --- Anthropic-style blocks (Claude Code, generic chat) ---------------

// anthropicContent handles Messages API content: a string or an array of
// text, thinking, redacted_thinking, tool_use, tool_result and image blocks.
func (v *viewer) anthropicContent(content int, textKind Kind) {
	t := v.t
	v.blocks(content, textKind, func(b int, typ string) {
		switch typ {
		case "text":
			v.add(t.Get(b, "text"), textKind)
		case "thinking":
			v.addBlock(b, t.Get(b, "thinking"), Thinking, "text")
		case "redacted_thinking":
			v.addBlock(b, t.Get(b, "data"), Thinking, "text")
		case "tool_use":
			v.tool(v.str(b, "name"), v.str(b, "id"))
			v.leaves(t.Get(b, "input"), ToolCall)
		case "tool_result":
			outer := v.call
			v.call = v.str(b, "tool_use_id")
			v.answers(v.call)
			v.anthropicContent(t.Get(b, "content"), ToolResult)
			v.call = outer
		case "image":
			v.addImage(b, t.Path(b, "source", "data"), textKind, "text")
		}
	})
}

// anthropicCall is the tool named by the tool_use block of Messages API
// content whose input holds node, "" when none does.
func anthropicCall(t *Tree, content, node int) string {
	return t.Str(t.Get(blockAbove(t, content, node, "tool_use"), "name"))
}

// anthropicAnswer is the call a tool_result block of Messages API
// content that holds node answers, "" when none does.
func anthropicAnswer(t *Tree, content, node int) string {
	return t.Str(t.Get(blockAbove(t, content, node, "tool_result"), "tool_use_id"))
}

// ToolNamer follows a transcript's tool calls in order, so that the values
// of a result whose line does not name its tool (Claude Code, Codex, chat)
// get the tool of the call it answers. A call may be answered more than
// once (Codex writes an exec_command_end event and the output item), so
// it holds the latest maxOpenCalls calls rather than the unanswered ones.
type ToolNamer struct {
	open  map[string]string // call id → tool name
	order []string          // the ids in open, oldest first
}

// maxOpenCalls bounds the calls a ToolNamer remembers: results follow
// their calls closely, so the latest few thousand are plenty.
const maxOpenCalls = 4096

// Name records the calls e makes and sets Tool on each value of a result
// it can name. Call it on every entry, in order.
func (n *ToolNamer) Name(e *Entry) {
	for i, id := range e.CallIDs {
		if id == "" {
			continue
		}
		if n.open == nil {
			n.open = map[string]string{}
		}
		if _, ok := n.open[id]; !ok {
			n.order = append(n.order, id)
		}
		n.open[id] = e.Tools[i]
		if len(n.order) > maxOpenCalls {
			delete(n.open, n.order[0])
			n.order = n.order[1:] // append moves the rest when it grows
		}
	}
	for i := range e.Values {
		if name, ok := n.open[e.Values[i].Call]; ok { // no call has id ""
			e.Values[i].Tool = name
		}
	}
}

// Tool is the tool the entry's line names: the one whose result it
// holds, else the first it calls (no dialect's line does both).
func (e *Entry) Tool() string {
	if e.ToolName != "" {
		return e.ToolName
	}
	if len(e.Tools) > 0 {
		return e.Tools[0]
	}
	return ""
}

// EntryTool is the tool of a whole entry, for a row that stands for it:
// the one its line names, else the one a ToolNamer found for its values (a
// Claude Code or Codex result names only the call it answers).
func EntryTool(e *Entry) string {
	if t := e.Tool(); t != "" {
		return t
	}
	for _, v := range e.Values {
		if v.Tool != "" {
			return v.Tool
		}
	}
	return ""
}

// ToolOf is the tool a value of e belongs to: the one a ToolNamer found,
// else the entry's.
func ToolOf(e *Entry, v Value) string {
	if v.Tool != "" {
		return v.Tool
	}
	return e.Tool()
}
