package archive

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// lineKind is what one parsed line means for turn boundaries.
type lineKind struct {
	msg       bool   // a conversation message
	prompt    bool   // a user message that starts a turn
	codexUser bool   // a Codex event_msg user_message (a prompt unless it echoes one)
	assistant bool   // an assistant message (a candidate final reply)
	blocked   string // why a turn holding this line is never archived
	depth     int    // the depth of the holder this line stands for (an archive marker)
	maxTurns  bool   // the line records a max-turns stop
	isResult  bool   // a tool result (BrainSurgeon counts pairs by results)
	isCall    bool   // a tool call (BrainSurgeon: an unanswered one ends a turn open)
	interrupt bool   // the user interrupted the turn (Claude Code): it ends there

	issued, answered []string // tool call ids the line makes and answers
}

// classify reads what archive needs from one line.
func classify(t *transcript.Tree, d transcript.Dialect, e *transcript.Entry, acct gauge.Line) lineKind {
	var k lineKind
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	if a := t.Get(0, transcript.ArchivedField); a >= 0 {
		k.msg, k.assistant = true, true
		k.depth = max(intAt(t, t.Get(a, "depth")), 1)
		return k
	}
	if t.Get(0, transcript.RolledField) >= 0 || t.Get(0, transcript.EvictedField) >= 0 {
		k.msg = e.Message
		k.blocked = "it holds a bs roll note"
		return k
	}
	if acct.Role == gauge.Compaction {
		k.blocked = "it holds a compaction"
		return k
	}
	k.msg = e.Message
	k.issued, k.answered = callIDs(t, d)
	switch d {
	case transcript.OpenClaw:
		role := str(0, "message", "role")
		k.prompt = k.msg && role == "user"
		k.assistant = k.msg && role == "assistant"
		k.isResult = role == "toolResult"
	case transcript.ClaudeCode:
		typ := str(0, "type")
		if typ == "user" {
			result := false
			t.Children(t.Path(0, "message", "content"), func(b, _ int) {
				if str(b, "type") == "tool_result" {
					result = true
				}
			})
			k.prompt, k.isResult = !result, result
			if !result && bytes.Contains(t.Src, []byte(interruptText)) && strings.HasPrefix(entryText(t, e, 64), interruptText) {
				k.prompt, k.interrupt = false, true
			}
		}
		k.assistant = typ == "assistant"
		if str(0, "subtype") == "error_max_turns" {
			k.maxTurns = true
		}
	case transcript.Codex:
		p := t.Get(0, "payload")
		switch str(0, "type") {
		case "response_item":
			switch str(p, "type") {
			case "message":
				k.prompt = str(p, "role") == "user"
				k.assistant = str(p, "role") == "assistant"
			case "reasoning", "function_call", "custom_tool_call", "local_shell_call":
				k.assistant = true
			}
		case "event_msg":
			k.codexUser = str(p, "type") == "user_message"
		}
	case transcript.BrainSurgeon:
		switch str(0, "type") {
		case "user_message":
			k.prompt = true
		case "assistant_message", "thinking":
			k.assistant = true
		case "tool_call":
			k.assistant, k.isCall = true, true
		case "tool_result":
			k.isResult = true
		}
	default:
		switch str(0, "role") {
		case "user":
			k.prompt = k.msg
		case "assistant":
			k.assistant = k.msg
		case "tool", "function":
			k.isResult = true
		}
	}
	for _, f := range []string{"stop_reason", "stopReason"} {
		if s := str(0, f); s == "max_turns" || s == "error_max_turns" {
			k.maxTurns = true
		}
		if s := str(0, "message", f); s == "max_turns" || s == "error_max_turns" {
			k.maxTurns = true
		}
	}
	return k
}

// callIDs returns the tool call ids a line makes and the ones it answers
// (as bs roll pairs them).
func callIDs(t *transcript.Tree, d transcript.Dialect) (issued, answered []string) {
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	blocks := func(content int, fn func(b int)) { t.Children(content, func(b, _ int) { fn(b) }) }
	add := func(list *[]string, id string) {
		if id != "" {
			*list = append(*list, id)
		}
	}
	switch d {
	case transcript.OpenClaw:
		msg := t.Get(0, "message")
		blocks(t.Get(msg, "content"), func(b int) {
			if str(b, "type") == "toolCall" {
				add(&issued, str(b, "id"))
			}
		})
		if str(msg, "role") == "toolResult" {
			add(&answered, str(msg, "toolCallId"))
		}
	case transcript.ClaudeCode:
		blocks(t.Path(0, "message", "content"), func(b int) {
			switch str(b, "type") {
			case "tool_use", "server_tool_use":
				add(&issued, str(b, "id"))
			case "tool_result", "web_search_tool_result":
				add(&answered, str(b, "tool_use_id"))
			}
		})
	case transcript.Codex:
		p := t.Get(0, "payload")
		switch str(p, "type") {
		case "function_call", "custom_tool_call", "local_shell_call":
			add(&issued, str(p, "call_id"))
		case "function_call_output", "custom_tool_call_output":
			add(&answered, str(p, "call_id"))
		}
	case transcript.Generic:
		t.Children(t.Get(0, "tool_calls"), func(c, _ int) { add(&issued, str(c, "id")) })
		add(&answered, str(0, "tool_call_id"))
	}
	return issued, answered
}

func intAt(t *transcript.Tree, i int) int {
	if i < 0 || t.Nodes[i].Kind != '0' {
		return 0
	}
	n := 0
	for _, c := range t.Raw(i) {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// interruptText starts the line Claude Code writes when the user stops a
// turn: the turn ends there, finished.
const interruptText = "[Request interrupted by user"

// maxTurnsText is the text corteza's agent loop leaves when it stops at
// its turn limit.
const maxTurnsText = "[Max turns reached]"

// notes gathers, line by line, what the mechanical summary says about a
// turn. Everything it keeps is bounded.
type notes struct {
	task      string // gist of the user prompt
	tools     []toolCount
	files     []string
	texts     []string // first sentences of assistant texts before the last
	last      string   // the last assistant text (the final reply's), clipped
	lastIsEnd bool     // the last assistant message had text
	calls     int
	errors    int
}

type toolCount struct {
	name string
	n    int
}

const (
	maxTools    = 32
	maxFiles    = 50
	maxTexts    = 8
	maxLastText = 4000
)

// addPrompt records the user prompt.
func (n *notes) addPrompt(t *transcript.Tree, e *transcript.Entry) {
	n.task = gist(entryText(t, e, 600), 120)
}

// add records a message line of the turn after its prompt.
func (n *notes) add(t *transcript.Tree, d transcript.Dialect, e *transcript.Entry, k *lineKind) {
	for _, name := range e.Tools {
		n.calls++
		n.addTool(name)
	}
	if k.isResult && isError(t, d) {
		n.errors++
	}
	if len(e.Tools) > 0 && len(n.files) < maxFiles {
		for _, v := range e.Values {
			if v.Kind == transcript.ToolCall {
				n.addFiles(t, v)
			}
		}
	}
	if k.assistant {
		text := entryText(t, e, maxLastText)
		if strings.TrimSpace(text) == "" {
			n.lastIsEnd = false
			return
		}
		if n.lastIsEnd && n.last != "" {
			if s := firstSentence(n.last); s != "" && !contains(n.texts, s) {
				if len(n.texts) == maxTexts {
					n.texts = n.texts[1:]
				}
				n.texts = append(n.texts, s)
			}
		}
		n.last, n.lastIsEnd = text, true
	}
}

func (n *notes) addTool(name string) {
	if name == "" {
		return
	}
	for i := range n.tools {
		if n.tools[i].name == name {
			n.tools[i].n++
			return
		}
	}
	if len(n.tools) < maxTools {
		n.tools = append(n.tools, toolCount{name, 1})
	}
}

// fileKeys are the argument names tools use for the file they act on.
var fileKeys = map[string]bool{
	"path": true, "file_path": true, "filePath": true, "file": true, "filename": true,
	"notebook_path": true, "target_file": true, "absolute_path": true, "filepath": true,
}

func (n *notes) addFiles(t *transcript.Tree, v transcript.Value) {
	raw := t.Raw(v.Node)
	if fileKeys[transcript.LastToken(v.Pointer)] && len(raw) < 1024 {
		n.addFile(t.Str(v.Node))
		return
	}
	if len(raw) > 256<<10 {
		return
	}
	s := t.Str(v.Node)
	// A patch names its files (Codex apply_patch, and the like).
	if strings.Contains(s, "*** Begin Patch") {
		for _, line := range strings.Split(s, "\n") {
			for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: "} {
				if f, ok := strings.CutPrefix(line, p); ok {
					n.addFile(f)
				}
			}
		}
		return
	}
	// Codex passes function arguments as a JSON object in a string.
	if strings.HasPrefix(s, "{") {
		var args map[string]any
		if json.Unmarshal([]byte(s), &args) == nil {
			for k, a := range args {
				if f, ok := a.(string); ok && fileKeys[k] {
					n.addFile(f)
				}
			}
		}
	}
}

func (n *notes) addFile(f string) {
	f = strings.TrimSpace(f)
	if f == "" || len(f) > 512 || strings.ContainsAny(f, "\n\x00") || contains(n.files, f) || len(n.files) >= maxFiles {
		return
	}
	n.files = append(n.files, f)
}

// isError reports whether a tool result says it failed.
func isError(t *transcript.Tree, d transcript.Dialect) bool {
	switch d {
	case transcript.OpenClaw:
		return string(t.Raw(max(t.Path(0, "message", "isError"), 0))) == "true"
	case transcript.ClaudeCode:
		bad := false
		t.Children(t.Path(0, "message", "content"), func(b, _ int) {
			if e := t.Get(b, "is_error"); e >= 0 && string(t.Raw(e)) == "true" {
				bad = true
			}
		})
		return bad
	case transcript.BrainSurgeon:
		s := t.Get(0, "success")
		return s >= 0 && string(t.Raw(s)) == "false"
	}
	return false
}

// entryText is the text of an entry's text values (not tool calls, results
// or thinking), decoded up to about limit bytes.
func entryText(t *transcript.Tree, e *transcript.Entry, limit int) string {
	var b strings.Builder
	for _, v := range e.Values {
		if v.Kind != transcript.Text || v.Block != "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t.StrPrefix(v.Measure, limit-b.Len()))
		if b.Len() >= limit {
			break
		}
	}
	return b.String()
}

// gist collapses white space and clips s to about n characters.
func gist(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}

// firstSentence is the first sentence of s, clipped.
func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	for i := 0; i < len(s); i++ {
		if (s[i] == '.' || s[i] == '!' || s[i] == '?') && (i+1 == len(s) || s[i+1] == ' ') {
			return gist(s[:i+1], 200)
		}
	}
	return gist(s, 200)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// hasMaxTurnsText reports whether the raw line may hold the max-turns text
// (a cheap test before decoding).
func hasMaxTurnsText(line []byte) bool {
	return bytes.Contains(line, []byte(maxTurnsText))
}
