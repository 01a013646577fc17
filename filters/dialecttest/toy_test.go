package dialecttest_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/bstools/bs/filters/dialecttest"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/sessions"
)

// parley is a made-up runtime's format: every line carries "parley":1;
// the header names the session and the working directory ("dir");
// "who" says human, bot or tool; a bot's "calls" hold its tool calls
// ({ref, fn, args}) and a tool line answers one by its "ref"; a bot's
// "meter" records the context size it saw ({"context":N}), and a "ledger"
// line keeps a meter out of the context. Adding a runtime to bs is this
// type and one Register line: no filter changes.
type parley struct{}

func (parley) String() string     { return "parley" }
func (parley) Aliases() []string  { return []string{"toy"} }
func (parley) HelpName() string   { return "parley (toy)" }
func (parley) Title() string      { return "Parley" }
func (parley) IDFields() []string { return []string{"id", "__id"} }

// SessionDirs: a parley host keeps its sessions in ~/.parley/sessions.
func (parley) SessionDirs() []string { return []string{".parley/sessions"} }

// LineType: who speaks (human, bot, tool, host, ledger).
func (parley) LineType(t *transcript.Tree) string { return t.Str(t.Get(0, "who")) }

// OuterType: who speaks, as LineType (a parley line wraps nothing).
func (p parley) OuterType(t *transcript.Tree) string { return p.LineType(t) }

// Envelope: none; a parley line wraps nothing.
func (parley) Envelope([]string) int { return 0 }

// WorkDir: the header's dir.
func (parley) WorkDir(t *transcript.Tree) string { return t.Str(t.Get(0, "dir")) }

func (parley) Claims(t *transcript.Tree) bool { return t.Get(0, "parley") >= 0 }

func (parley) ViewEntry(t *transcript.Tree, e *transcript.Entry) {
	str := func(i int, name string) string { return t.Str(t.Get(i, name)) }
	value := func(node int, kind transcript.Kind, call string) {
		if node >= 0 && t.Nodes[node].Kind == '"' {
			e.Values = append(e.Values, transcript.Value{Node: node, Pointer: t.Pointer(node), Kind: kind, Measure: node, Call: call})
		}
	}
	e.Time = str(0, "at")
	if s := str(0, "session"); s != "" {
		e.SessionID = s
	}
	switch str(0, "who") {
	case "human":
		e.Message, e.Role = true, "user"
		value(t.Get(0, "said"), transcript.Text, "")
	case "bot":
		e.Message, e.Role = true, "assistant"
		value(t.Get(0, "said"), transcript.Text, "")
		t.Children(t.Get(0, "calls"), func(c, _ int) {
			e.Tools = append(e.Tools, str(c, "fn"))
			e.CallIDs = append(e.CallIDs, str(c, "ref"))
			value(t.Get(c, "args"), transcript.ToolCall, "")
		})
	case "tool":
		e.Message, e.Role, e.ToolName = true, "tool", str(0, "fn")
		e.Answers = append(e.Answers, str(0, "ref"))
		value(t.Get(0, "said"), transcript.ToolResult, str(0, "ref"))
	}
}

// Speaker: a line is one message, said by the entry's role.
func (parley) Speaker(_ *transcript.Tree, e *transcript.Entry, _ int) string { return e.Role }

// CallName: the fn of the entry of a bot's calls that holds node.
func (parley) CallName(t *transcript.Tree, node int) string {
	calls := t.Get(0, "calls")
	for a := node; a >= 0 && calls >= 0; a = t.Nodes[a].Parent {
		if t.Nodes[a].Parent == calls {
			return t.Str(t.Get(a, "fn"))
		}
	}
	return ""
}

// AnsweredCall: a tool line's ref.
func (parley) AnsweredCall(t *transcript.Tree, _ int) string {
	if t.Str(t.Get(0, "who")) != "tool" {
		return ""
	}
	return t.Str(t.Get(0, "ref"))
}

// IsCompaction: parley has no compaction of its own.
func (parley) IsCompaction(*transcript.Tree) bool { return false }

// CompactedFrom: with no compaction, no size before one.
func (parley) CompactedFrom(*transcript.Tree) (int, bool) { return 0, false }

// NumbersEntries: parley keeps no entry by number.
func (parley) NumbersEntries(*transcript.Tree) bool { return false }

// KeptNumber: none; parley keeps no entry by number.
func (parley) KeptNumber(*transcript.Tree) int { return -1 }

// Identity: the session the header names.
func (parley) Identity(t *transcript.Tree) (string, transcript.Stated) {
	if s := t.Str(t.Get(0, "session")); s != "" {
		return s, transcript.Header
	}
	return "", transcript.NotStated
}

// Follow keeps the session the header names.
func (parley) Follow(t *transcript.Tree, tail *transcript.Tail) {
	if s := t.Str(t.Get(0, "session")); s != "" {
		tail.Session = s
	}
}

// ContextEntry: parley takes context from a "host" line.
func (parley) ContextEntry(_ *transcript.Tail, n transcript.ContextNote) []byte {
	return line(`"who":"host","said":`+quote(n.Text), n.Field, []byte(n.Meta))
}

func (parley) ContextText(t *transcript.Tree) string { return t.Str(t.Get(0, "said")) }

// RollNote is a host line in place of the range.
func (parley) RollNote(n transcript.RollNote) [][]byte {
	return [][]byte{line(`"who":"host","said":`+quote(n.Text)+`,`+quote(transcript.EvictedField)+`:`+n.Evicted(0), "", nil, n.Rolled(0))}
}

// RollTree is nil: a parley is no tree, and RollNote writes the note.
func (parley) RollTree() transcript.RollTree { return nil }

// Turn: a human line is a prompt, a bot line an answer, a tool line a
// result; calls pair by ref.
func (parley) Turn(t *transcript.Tree, e *transcript.Entry) transcript.Turn {
	return transcript.Turn{Prompt: e.Role == "user", Assistant: e.Role == "assistant", Result: e.Role == "tool", Issued: e.CallIDs, Answered: e.Answers}
}

// FollowTurn: a stand-in bot line repeats nothing.
func (parley) FollowTurn(*transcript.Tree, bool, *transcript.StandIn) {}

// StandInEntry is a bot line.
func (parley) StandInEntry(_ *transcript.StandIn, n transcript.StandInNote) []byte {
	return line(`"who":"bot","said":`+quote(n.Text), n.Field, n.Meta)
}

// line is a parley line holding members, and field: meta when field is
// given, and the raw members of more.
func line(members, field string, meta []byte, more ...string) []byte {
	b := []byte(`{"parley":1,` + members)
	if field != "" {
		b = append(append(b, ","+quote(field)+":"...), meta...)
	}
	for _, m := range more {
		b = append(b, ","+m...)
	}
	return append(b, "}\n"...)
}

func quote(s string) string { return string(transcript.AppendQuote(nil, s)) }

// Converse reads a line in conversation terms.
func (parley) Converse(t *transcript.Tree, c transcript.Conversation) {
	str := func(i int, name string) string { return t.Str(t.Get(i, name)) }
	if s := str(0, "session"); s != "" {
		c.Session(s, true)
	}
	said, chars := transcript.ConversationText(t, t.Get(0, "said"))
	switch str(0, "who") {
	case "human":
		c.User(said, chars, str(0, "at"))
	case "bot":
		c.Said(said, chars)
		t.Children(t.Get(0, "calls"), func(k, _ int) { c.CallJSON(str(k, "fn"), str(k, "ref"), str(k, "args")) })
	case "tool":
		c.Result(str(0, "fn"), false, transcript.ConversationHead(t, t.Get(0, "said")), str(0, "at"))
	}
}

// Inserted: none; what the host adds is a line of its own.
func (parley) Inserted(string) bool { return false }

// Account: every message is in context; a bot's meter is the usage of
// its answer; a ledger line is out of context.
func (parley) Account(t *transcript.Tree) transcript.Account {
	switch t.Str(t.Get(0, "who")) {
	case "", "ledger":
		return transcript.Account{Content: -1, Fallback: -1}
	}
	a := transcript.Account{Role: transcript.InContext, Text: true, Content: 0, Fallback: -1}
	if n := meter(t); n > 0 {
		a.Role, a.Tokens = transcript.UsageReport, n
	}
	return a
}

// meter is the context size a bot line records, 0 for none.
func meter(t *transcript.Tree) int {
	if t.Str(t.Get(0, "who")) != "bot" {
		return 0
	}
	c := t.Path(0, "meter", "context")
	if c < 0 || t.Nodes[c].Kind != '0' {
		return 0
	}
	n, _ := strconv.Atoi(string(t.Raw(c)))
	return n
}

// Prune: what each line is to trim's pruner.
func (parley) Prune(t *transcript.Tree, p *transcript.PruneView) {
	str := func(i int, name string) string { return t.Str(t.Get(i, name)) }
	p.ID, p.Time = str(0, "id"), str(0, "at")
	said := t.Get(0, "said")
	switch str(0, "who") {
	case "human":
		p.Kind = transcript.PruneUser
		p.Contents = append(p.Contents, said)
	case "bot":
		p.Kind = transcript.PruneAssistant
		p.Texts = append(p.Texts, said)
		t.Children(t.Get(0, "calls"), func(k, _ int) {
			p.Texts = append(p.Texts, t.Get(k, "args"))
			p.Calls = append(p.Calls, transcript.PruneCall{ID: str(k, "ref"), Name: str(k, "fn")})
		})
	case "tool":
		p.Kind = transcript.PruneResults
		p.Results = append(p.Results, transcript.PruneResult{Node: said, CallID: str(0, "ref"), Tool: str(0, "fn"), Block: "text"})
	case "host", "ledger":
		p.Kind = transcript.PruneOther
	}
}

// Threads: a parley is linear.
func (parley) Threads() transcript.Threading { return transcript.InOrder }

// Link: parley lines link to nothing.
func (parley) Link(*transcript.Tree) transcript.Link { return transcript.Link{} }

// Unit: a tool line goes with the bot line that called it.
func (parley) Unit(t *transcript.Tree, _ string) transcript.Unit {
	return transcript.Unit{Join: t.Str(t.Get(0, "who")) == "tool"}
}

// StatesWindow: parley states no context window.
func (parley) StatesWindow() bool { return false }

// Spends: a bot line's meter is what cost reports read.
func (parley) Spends(t *transcript.Tree) bool { return meter(t) > 0 }

// SpendRecord is a ledger line holding the meter.
func (parley) SpendRecord(t *transcript.Tree, by, _, _ string) []byte {
	l := line(`"who":"ledger","meter":`+string(t.Raw(t.Get(0, "meter"))), transcript.SpentField, transcript.SpentTag(by))
	return l[:len(l)-1] // a record is one line without its line feed

}

// NotText: a line's id and the ref that pairs a call with its result.
func (parley) NotText() []string { return []string{"id", "ref"} }

// Blocks: none; what a parley line says is a string.
func (parley) Blocks() transcript.Blocks { return transcript.Blocks{} }

// Marks: a bot line's meter is its usage and its spend, the header's dir
// its working directory; parley has no compaction and names no model.
func (parley) Marks() transcript.Marks {
	meter := []transcript.Mark{{Text: `meter"`, Name: true}}
	return transcript.Marks{Spend: meter, Usage: meter, WorkDir: []transcript.Mark{{Text: `dir"`, Name: true}}}
}

// TestToyDialect: a runtime bs has never heard of passes the suite once
// it is registered.
func TestToyDialect(t *testing.T) {
	transcript.Register(parley{})
	defer transcript.Unregister(parley{})
	dialecttest.Run(t, parley{}, samples(t, filepath.Join("testdata", "parley.jsonl")))
}

// TestToySessionDirs: once registered, the directory where a runtime
// keeps its sessions is one of the default roots.
func TestToySessionDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := filepath.Join(home, ".parley", "sessions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(sessions.DefaultRoots(), dir) {
		t.Fatalf("%s is a default root before parley is registered", dir)
	}
	transcript.Register(parley{})
	defer transcript.Unregister(parley{})
	if got := sessions.DefaultRoots(); !slices.Equal(got, []string{dir}) {
		t.Errorf("DefaultRoots = %v, want %v", got, []string{dir})
	}
}

// forgetful is parley declaring no marks: its meters are lines the
// filters pass over unparsed.
type forgetful struct{ parley }

func (forgetful) Marks() transcript.Marks { return transcript.Marks{} }

// untyped is parley giving no line a type: its messages and its other
// lines look alike.
type untyped struct{ parley }

func (untyped) LineType(*transcript.Tree) string { return "" }

// flat is parley stating no outer type: its lines' types are lost.
type flat struct{ parley }

func (flat) OuterType(*transcript.Tree) string { return "" }

// mute is parley giving no text a speaker.
type mute struct{ parley }

func (mute) Speaker(*transcript.Tree, *transcript.Entry, int) string { return "" }

// callless is parley finding no call for the values of its calls and
// results.
type callless struct{ parley }

func (callless) CallName(*transcript.Tree, int) string     { return "" }
func (callless) AnsweredCall(*transcript.Tree, int) string { return "" }

// presumptuous is parley taking every user text for one its host put in.
type presumptuous struct{ parley }

func (presumptuous) Inserted(string) bool { return true }

// TestChecksNameWrongAnswers: each of the suite's checks that list what
// a dialect answers wrong names the lines of a parley that gets one answer
// wrong (forgets its marks, its types or its outer types, gives its texts
// no speaker, finds no call for its tool values, takes the user's texts
// for its host's), and none of parley's.
func TestChecksNameWrongAnswers(t *testing.T) {
	data := samples(t, filepath.Join("testdata", "parley.jsonl"))[0].Data
	for _, c := range []struct {
		name  string
		check func(transcript.Dialect, []byte) []string
		wrong transcript.Dialect
		want  int
		why   string
	}{
		{"MarkMisses", dialecttest.MarkMisses, forgetful{}, 5, "two meters, spend and usage, and the header's dir"},
		{"TypeMixes", dialecttest.TypeMixes, untyped{}, 1, `the type "": the header is no message, the human's line after it is`},
		{"OuterTypeMisses", dialecttest.OuterTypeMisses, flat{}, 3, "the types human, bot and tool"},
		{"SpeakerMisses", dialecttest.SpeakerMisses, mute{}, 5, "the human's two lines and the bot's three"},
		{"ToolValueMisses", dialecttest.ToolValueMisses, callless{}, 2, "the bot's call and the tool's result"},
		{"InsertedUserTexts", dialecttest.InsertedUserTexts, presumptuous{}, 2, "the human's two lines"},
	} {
		if got := c.check(parley{}, data); len(got) > 0 {
			t.Errorf("%s: parley answers, but: %v", c.name, got)
		}
		if got := c.check(c.wrong, data); len(got) != c.want {
			t.Errorf("%s: %d lines named for a parley that answers wrong, want %d (%s): %v", c.name, len(got), c.want, c.why, got)
		}
	}
}
