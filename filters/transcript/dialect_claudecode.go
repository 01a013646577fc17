package transcript

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
		v.leavesBut(t.Get(0, "data"), Bookkeeping, spendKeys)
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
