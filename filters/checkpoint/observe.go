package checkpoint

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/bstools/bs/filters/transcript"
)

// Thresholds of the structural heuristics of seed 003 (§7.2, §11.2).
const (
	longResponse = 500 // an agent response this long makes the next user message a pivot
	shortReply   = 50  // a user reply shorter than this after a long response is a decision
	topicChars   = 100
	gistChars    = 120
	replyChars   = 80 // of the agent message a decision answers
)

// observer watches a transcript go by, line by line, and keeps what a
// checkpoint needs: a few gists, bounded lists and the gauge's state. Its
// memory does not grow with the transcript.
type observer struct {
	seq int

	SessionID   string // from the session header
	Compactions int    // compaction entries seen (the runtime's or bs roll's)
	AgentID     string

	firstUser *message
	lastUser  *message
	lastAgent *message // the agent's last text since lastUser, nil if none
	agentRun  int      // characters of agent text since the last user message
	pivots    []Exchange
	pairs     [][2]*message // the last two finished user→agent exchanges

	decisions []Decision
	read      recency
	modified  recency
	tools     recency
	failures  []Failure
	todo      []string
	hasTodo   bool

	// What a notice appended after the transcript links to, the last
	// notice bs appended, and whether the last line ended with a line
	// feed (appendNotice).
	link       transcript.Tail
	lastNotice string
	endsLine   bool
	dialect    transcript.Dialect // the transcript's, once observe has read it

	last     event // the last conversation event
	lastCall ToolCall
	pending  map[string]string // tool call id → tool name, until the result
	argParse transcript.Parser
}

// maxPending bounds the calls remembered while waiting for their results.
const maxPending = 1024

type message struct {
	gist  string
	tail  string // the end of an agent message, when known
	topic string
	chars int
	time  string
}

// event is what the last conversation line was.
type event int

const (
	none event = iota
	userText
	agentText
	toolCall
	toolResult
)

// newObserver returns an empty observer.
func newObserver() *observer {
	return &observer{pending: map[string]string{}, read: newRecency(maxFiles), modified: newRecency(maxFiles), tools: newRecency(maxTools), endsLine: true}
}

// sessionID is the session the transcript names. A Claude Code subagent's
// transcript names its parent session and its own agent id: its key must
// not be its parent's.
func (o *observer) sessionID() string {
	if o.SessionID != "" && o.AgentID != "" {
		return o.SessionID + ":agent-" + o.AgentID
	}
	return o.SessionID
}

// add takes one parsed line of dialect d.
func (o *observer) add(t *transcript.Tree, d transcript.Dialect) {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return
	}
	d.Follow(t, &o.link)
	if r := t.Get(0, transcript.RolledField); r >= 0 {
		if t.Get(r, "tokens") >= 0 {
			o.Compactions++ // the line of a bs roll note that stands for the compaction
		}
		return // bs's own lines carry no conversation
	}
	if m := t.Get(0, InjectedField); m >= 0 {
		if isNotice(t, m) {
			o.lastNotice = d.ContextText(t)
		}
		return
	}
	if d.IsCompaction(t) {
		o.Compactions++
	}
	d.Converse(t, conversation{o})
}

// --- what a line says, in conversation terms ----------------------------

// user takes a user message: the start of its text and its length.
func (o *observer) user(text string, chars int, when string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	m := &message{gist: Gist(text, gistChars), topic: Gist(text, topicChars), chars: chars, time: when}
	if o.lastUser != nil && o.lastAgent != nil {
		o.pairs = append(o.pairs, [2]*message{o.lastUser, o.lastAgent})
		if len(o.pairs) > 2 {
			o.pairs = o.pairs[1:]
		}
	}
	if o.firstUser == nil {
		o.firstUser = m
	} else if o.agentRun > longResponse {
		o.pivots = append(o.pivots, Exchange{Role: "user", Gist: m.gist})
		if len(o.pivots) > maxExchanges {
			o.pivots = o.pivots[1:]
		}
		if m.chars < shortReply {
			what := m.gist
			if a := o.lastAgent; a != nil {
				re := a.tail
				if re == "" {
					re = Gist(a.gist, replyChars)
				}
				what += "\n(reply to: " + re + ")"
			}
			o.decisions = append(o.decisions, Decision{What: what, When: when})
			if len(o.decisions) > maxDecisions {
				o.decisions = o.decisions[1:]
			}
		}
	}
	o.lastUser, o.lastAgent, o.agentRun = m, nil, 0
	o.last = userText
}

// agent takes agent text: its start and its length.
func (o *observer) agent(text string, chars int) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	o.agentRun += chars
	o.lastAgent = &message{gist: Gist(text, gistChars), chars: chars}
	if utf8.RuneCountInString(text) >= chars { // the whole text, so its end is known
		o.lastAgent.tail = tailGist(text, replyChars)
	}
	o.last = agentText
}

// called remembers which tool a call id belongs to, until its result.
func (o *observer) called(name, id string) {
	if id == "" {
		return
	}
	if len(o.pending) >= maxPending {
		clear(o.pending) // results that never came: forget them
	}
	o.pending[id] = name
}

// toolOf is the tool whose call had id (the last call's if unknown).
func (o *observer) toolOf(id string) string {
	if name, ok := o.pending[id]; ok {
		delete(o.pending, id)
		return name
	}
	return o.lastCall.Name
}

// call records a tool call; args is its arguments object (-1 if none) in
// tree t.
func (o *observer) call(name, id string, t *transcript.Tree, args int) {
	if name == "" {
		return
	}
	o.called(name, id)
	o.seq++
	o.tools.add(name, o.seq)
	o.files(name, t, args)
	o.todos(name, t, args)
	o.lastCall = ToolCall{Name: name, ParamsSummary: paramsSummary(t, args)}
	o.last = toolCall
}

// callJSON records a tool call whose arguments are a JSON string.
func (o *observer) callJSON(name, id, args string) {
	t, err := o.argParse.Parse([]byte(args))
	if err != nil || t.Nodes[0].Kind != '{' {
		o.callRaw(name, id, args)
		return
	}
	o.call(name, id, t, 0)
}

// callRaw records a tool call whose input is free text (Codex apply_patch).
func (o *observer) callRaw(name, id, input string) {
	if name == "" {
		return
	}
	o.called(name, id)
	o.seq++
	o.tools.add(name, o.seq)
	if isPatchTool(name) || strings.Contains(input, "*** Begin Patch") {
		o.patch(input)
	}
	o.lastCall = ToolCall{Name: name, ParamsSummary: Gist(input, gistChars)}
	o.last = toolCall
}

func (o *observer) result(tool string, isError bool, text, when string) {
	if isError {
		o.failures = append(o.failures, Failure{Tool: tool, Gist: Gist(text, gistChars), When: when})
		if len(o.failures) > maxFailures {
			o.failures = o.failures[1:]
		}
	}
	o.last = toolResult
}

// --- resources --------------------------------------------------------------

var (
	readTools  = []string{"read", "read_file", "readfile", "view", "open_file", "cat", "notebookread"}
	writeTools = []string{"write", "write_file", "writefile", "edit", "multiedit", "edit_file", "str_replace",
		"str_replace_editor", "create_file", "notebookedit", "apply_patch"}
	pathFields = []string{"path", "file_path", "filePath", "notebook_path", "filename", "file"}
	// Shell commands whose file arguments are files read.
	readCommands = map[string]bool{"cat": true, "head": true, "tail": true, "less": true, "more": true,
		"nl": true, "sed": true, "wc": true, "bat": true, "view": true}
	patchFile = regexp.MustCompile(`(?m)^\*\*\* (Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
)

func isPatchTool(name string) bool { return strings.EqualFold(name, "apply_patch") }

func toolIs(name string, list []string) bool {
	return slices.Contains(list, strings.ToLower(name))
}

// files records the files a call names: the path fields of read, write and
// edit tools, the files of a patch, and the files a shell command reads.
func (o *observer) files(name string, t *transcript.Tree, args int) {
	if args < 0 || t.Nodes[args].Kind != '{' {
		return
	}
	switch {
	case toolIs(name, readTools), toolIs(name, writeTools):
		list := &o.read
		if toolIs(name, writeTools) {
			list = &o.modified
		}
		for _, f := range pathFields {
			if p := t.Str(t.Get(args, f)); p != "" {
				list.add(p, o.seq)
				return
			}
		}
		if s := t.Get(args, "input"); s >= 0 && t.Nodes[s].Kind == '"' { // apply_patch as a function
			o.patch(t.Str(s))
		}
	default:
		for _, f := range []string{"command", "cmd"} {
			c := t.Get(args, f)
			if c < 0 {
				continue
			}
			if t.Nodes[c].Kind == '"' {
				o.shell(t.Str(c))
			} else if t.Nodes[c].Kind == '[' {
				var argv []string
				t.Children(c, func(a, _ int) { argv = append(argv, t.Str(a)) })
				if len(argv) >= 3 && (argv[0] == "bash" || argv[0] == "sh" || argv[0] == "zsh") && argv[1] == "-lc" || len(argv) >= 3 && argv[1] == "-c" {
					o.shell(argv[len(argv)-1])
				} else {
					o.argv(argv)
				}
			}
			return
		}
	}
}

func (o *observer) patch(p string) {
	for _, m := range patchFile.FindAllStringSubmatch(p, maxFiles) {
		f := strings.TrimSpace(m[2] + m[3])
		if f != "" {
			o.modified.add(f, o.seq)
		}
	}
}

// shell takes the file arguments of the read commands in a command line
// (split on pipes and ;, &&, ||) and the files of an apply_patch heredoc.
func (o *observer) shell(cmd string) {
	if strings.Contains(cmd, "*** Begin Patch") {
		o.patch(cmd)
		return
	}
	for _, part := range splitCommands(cmd) {
		o.argv(strings.Fields(part))
	}
}

func (o *observer) argv(argv []string) {
	if len(argv) == 0 || !readCommands[path.Base(argv[0])] {
		return
	}
	for _, a := range argv[1:] {
		a = strings.Trim(a, `'"`)
		if a == "" || strings.HasPrefix(a, "-") || strings.ContainsAny(a, "<>|$*`") {
			continue
		}
		if strings.Contains(a, "/") || path.Ext(a) != "" && !strings.ContainsAny(a, ",{}") {
			o.read.add(a, o.seq)
		}
	}
}

func splitCommands(cmd string) []string {
	return strings.FieldsFunc(cmd, func(r rune) bool { return r == '|' || r == ';' || r == '&' || r == '\n' })
}

// todos keeps the latest todo list a runtime records: Claude Code's
// TodoWrite {todos:[{content,status}]}, Codex's update_plan
// {plan:[{step,status}]}. Finished items are not open.
func (o *observer) todos(name string, t *transcript.Tree, args int) {
	list, text := -1, ""
	switch strings.ToLower(name) {
	case "todowrite", "todo_write", "write_todos":
		list, text = t.Get(args, "todos"), "content"
	case "update_plan":
		list, text = t.Get(args, "plan"), "step"
	default:
		return
	}
	if list < 0 || t.Nodes[list].Kind != '[' {
		return
	}
	var items []string
	t.Children(list, func(it, _ int) {
		status := t.Str(t.Get(it, "status"))
		if status == "completed" || status == "cancelled" || status == "done" {
			return
		}
		s := Gist(t.Str(t.Get(it, text)), gistChars)
		if s == "" {
			return
		}
		if status != "" {
			s += " (" + status + ")"
		}
		if len(items) < maxOpenItems {
			items = append(items, s)
		}
	})
	o.todo, o.hasTodo = items, true
}

// paramsSummary is a one-line gist of a call's arguments: name=value pairs
// of its scalar members.
func paramsSummary(t *transcript.Tree, args int) string {
	if args < 0 {
		return ""
	}
	if t.Nodes[args].Kind != '{' {
		return Gist(string(t.Raw(args)), gistChars)
	}
	var b strings.Builder
	t.Children(args, func(m, _ int) {
		if b.Len() >= gistChars {
			return
		}
		var v string
		switch t.Nodes[m].Kind {
		case '"':
			v = Gist(t.Str(m), 60)
		case '{', '[':
			return
		default:
			v = string(t.Raw(m))
		}
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.Key(m) + "=" + v)
	})
	return Gist(b.String(), gistChars)
}

// Gist is text on one line, whitespace and control characters collapsed,
// cut to at most n characters (the last one an ellipsis when cut).
func Gist(s string, n int) string {
	out := make([]rune, 0, n+1)
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
		if len(out) > n {
			break
		}
	}
	if len(out) > n {
		out = append(out[:n-1], '…')
	}
	return string(out)
}

// tailGist is like Gist but keeps the end of s: at most n characters, the
// first an ellipsis when cut.
func tailGist(s string, n int) string {
	g := []rune(Gist(s, len(s)+1))
	if len(g) <= n {
		return string(g)
	}
	return "…" + strings.TrimLeft(string(g[len(g)-n+1:]), " ")
}

// --- bounded recency sets ---------------------------------------------------

// recency is a set of names that remembers when each was last seen and keeps
// at most about 2×limit of them, so that the newest limit can be listed.
type recency struct {
	limit int
	seen  map[string]int
}

func newRecency(limit int) recency { return recency{limit: limit, seen: map[string]int{}} }

func (r *recency) add(name string, seq int) {
	r.seen[name] = seq
	if len(r.seen) > 2*r.limit {
		keep := r.newest(r.limit)
		clear(r.seen)
		for i, k := range keep {
			r.seen[k] = seq - len(keep) + i
		}
	}
}

// newest lists up to n names, oldest first.
func (r *recency) newest(n int) []string {
	names := make([]string, 0, len(r.seen))
	for k := range r.seen {
		names = append(names, k)
	}
	slices.SortFunc(names, func(a, b string) int {
		if d := r.seen[a] - r.seen[b]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	if len(names) > n {
		names = names[len(names)-n:]
	}
	return names
}
