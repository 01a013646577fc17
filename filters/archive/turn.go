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
	echo      bool   // a prompt recorded beside its message item (transcript.Turn.Echo)
	assistant bool   // an assistant message (a candidate final reply)
	blocked   string // why a turn holding this line is never archived
	depth     int    // the depth of the holder this line stands for (an archive marker)
	maxTurns  bool   // the line records a max-turns stop
	isResult  bool   // a tool result
	failed    bool   // a tool result that says its call failed
	isCall    bool   // a tool call without an id (an unanswered one ends a turn open)
	byOrder   bool   // a result that pairs with the call before it by order
	interrupt bool   // the user interrupted the turn (Claude Code): it ends there

	issued, answered []string // tool call ids the line makes and answers
}

// classify reads what archive needs from one line.
func classify(t *transcript.Tree, d transcript.Dialect, e *transcript.Entry, acct gauge.Line) lineKind {
	var k lineKind
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
	tl := d.Turn(t, e)
	k.issued, k.answered = tl.Issued, tl.Answered
	k.prompt, k.assistant, k.echo, k.interrupt, k.maxTurns = tl.Prompt, tl.Assistant, tl.Echo, tl.Interrupt, tl.MaxTurns
	k.isResult, k.isCall, k.byOrder, k.failed = tl.Result, tl.Call, tl.ByOrder, tl.Failed
	return k
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
	n.task = gist(transcript.EntryText(t, e, 600), 120)
}

// add records a message line of the turn after its prompt.
func (n *notes) add(t *transcript.Tree, d transcript.Dialect, e *transcript.Entry, k *lineKind) {
	for _, name := range e.Tools {
		n.calls++
		n.addTool(name)
	}
	if k.isResult && k.failed {
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
		text := transcript.EntryText(t, e, maxLastText)
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
