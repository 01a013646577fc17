package transcript

import "strings"

// Conversation takes a transcript's lines in conversation terms, as the
// dialect reads them (Dialect.Converse): who said what, which tools were
// called and how they answered. It is what checkpoint builds its picture
// of a session from.
type Conversation interface {
	// Session is the session the lines name: it replaces an earlier one
	// when replace is set, else only fills in a missing one.
	Session(id string, replace bool)
	// Agent is a subagent's own id.
	Agent(id string)
	// User is text the user wrote in a user message (not what the
	// runtime inserts there of its own accord: reminders, command
	// output, its instructions), Said the agent's text; chars is the
	// text's length in characters, when is the line's time.
	User(text string, chars int, when string)
	Said(text string, chars int)
	// Call is a tool call with its arguments object (node args of t, -1
	// if none); CallJSON one whose arguments are a JSON string, CallRaw
	// one whose input is free text.
	Call(name, id string, t *Tree, args int)
	CallJSON(name, id, args string)
	CallRaw(name, id, input string)
	// Ran is a command the user ran outside the model's calls, and
	// Result a tool's answer: the start of its output, and whether it
	// says it failed.
	Ran(tool string, failed bool, head, when string)
	Result(tool string, failed bool, head, when string)
	// ToolOf is the tool whose call had id, for a result that does not
	// name it.
	ToolOf(id string) string
}

// UserTexts are the texts Converse tells, of object line t in dialect
// d, as the user's.
func UserTexts(d Dialect, t *Tree) []string {
	u := &userTexts{}
	d.Converse(t, u)
	return u.texts
}

// userTexts is a Conversation that keeps only the user's texts.
type userTexts struct{ texts []string }

func (u *userTexts) User(text string, _ int, _ string) { u.texts = append(u.texts, text) }
func (*userTexts) Session(string, bool)                {}
func (*userTexts) Agent(string)                        {}
func (*userTexts) Said(string, int)                    {}
func (*userTexts) Call(string, string, *Tree, int)     {}
func (*userTexts) CallJSON(string, string, string)     {}
func (*userTexts) CallRaw(string, string, string)      {}
func (*userTexts) Ran(string, bool, string, string)    {}
func (*userTexts) Result(string, bool, string, string) {}
func (*userTexts) ToolOf(string) string                { return "" }

// textBytes and headBytes bound what is decoded of one text: a message's
// gist needs its first and last characters, a tool output's only its
// first, and a tool output may be megabytes.
const (
	textBytes = 16 << 10
	headBytes = 2 << 10
)

// ConversationText reads content, a string or an array of blocks whose
// text blocks are of any registered dialect's types (RegisteredBlocks):
// the start of its text, and its length in characters.
func ConversationText(t *Tree, content int) (string, int) { return readText(t, content, true) }

// ConversationHead is the start of content's text, for tool output, whose
// length does not matter.
func ConversationHead(t *Tree, content int) string {
	s, _ := readText(t, content, false)
	return s
}

func readText(t *Tree, content int, count bool) (string, int) {
	limit := headBytes
	if count {
		limit = textBytes
	}
	if content < 0 {
		return "", 0
	}
	if t.Nodes[content].Kind == '"' {
		if !count {
			return t.StrPrefix(content, limit), 0
		}
		return t.StrPrefix(content, limit), t.StringChars(content)
	}
	var head strings.Builder
	chars := 0
	types := RegisteredBlocks()
	t.Children(content, func(b, _ int) {
		if !types.Text(t.Str(t.Get(b, "type"))) {
			return
		}
		s := t.Get(b, "text")
		if s < 0 || t.Nodes[s].Kind != '"' {
			return
		}
		if head.Len() < limit {
			if head.Len() > 0 {
				head.WriteByte('\n')
			}
			head.WriteString(t.StrPrefix(s, limit-head.Len()))
		}
		if count {
			chars += t.StringChars(s)
		} else {
			chars++
		}
	})
	return head.String(), chars
}

// conversing reads one line into a Conversation: the helpers the
// dialects' Converse share.
type conversing struct {
	t *Tree
	c Conversation
	// inserted reports whether a user message's text is one the runtime
	// put there of its own accord (Dialect.Inserted): user leaves it out.
	inserted func(text string) bool
}

func (v *conversing) str(i int, names ...string) string { return v.t.Str(v.t.Path(i, names...)) }

// raw is the JSON text of node i, "" when it is absent.
func (v *conversing) raw(i int) string {
	if i < 0 {
		return ""
	}
	return string(v.t.Raw(i))
}

// isTrue reports whether member name of node i is true.
func (v *conversing) isTrue(i int, name string) bool { return v.raw(v.t.Get(i, name)) == "true" }

func (v *conversing) text(content int) (string, int) { return ConversationText(v.t, content) }
func (v *conversing) head(content int) string        { return ConversationHead(v.t, content) }

// user tells the Conversation of a user message's text, said at when,
// unless the runtime inserted it.
func (v *conversing) user(text string, chars int, when string) {
	if v.inserted != nil && v.inserted(text) {
		return
	}
	v.c.User(text, chars, when)
}

// beginsAsOneOf reports whether text, white space aside, begins with one
// of prefixes: how a dialect's Inserted tells the texts its runtime puts
// in a user message.
func beginsAsOneOf(text string, prefixes []string) bool {
	trimmed := strings.TrimSpace(text)
	for _, p := range prefixes {
		if strings.HasPrefix(trimmed, p) {
			return true
		}
	}
	return false
}

// anthropic reads Messages API content: user text, assistant text,
// tool_use and tool_result blocks (Claude Code, generic chat).
func (v *conversing) anthropic(content int, when string, user bool) {
	t, o := v.t, v.c
	if content < 0 {
		return
	}
	say := func(text string, chars int) {
		if user {
			v.user(text, chars, when)
		} else {
			o.Said(text, chars)
		}
	}
	if t.Nodes[content].Kind == '"' {
		say(v.text(content))
		return
	}
	t.Children(content, func(b, _ int) {
		switch v.str(b, "type") {
		case "tool_use":
			o.Call(v.str(b, "name"), v.str(b, "id"), t, t.Get(b, "input"))
		case "tool_result":
			head := v.head(t.Get(b, "content"))
			o.Result(o.ToolOf(v.str(b, "tool_use_id")), v.isTrue(b, "is_error"), head, when)
		}
	})
	if text, chars := v.text(content); chars > 0 {
		say(text, chars)
	}
}
