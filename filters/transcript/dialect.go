package transcript

import "bytes"

// Dialect is a transcript format as a runtime writes it: everything the
// filters need to know about a runtime's lines is asked of it, so a
// runtime is one file (dialect_*.go) and one registry line (registry.go),
// and the filters ask instead of naming runtimes. The conformance suite in
// filters/dialecttest checks a dialect's answers against the filters.
//
// The zero Dialect (nil) is explicit "auto": not given and not yet
// detected. Source detects it from the first lines; once a transcript is
// read, the dialect is never nil (lines no dialect claims are Generic's).
type Dialect interface {
	// String is the name --format takes and reports print.
	String() string
	// Aliases are further names ParseDialect accepts.
	Aliases() []string
	// HelpName is how --format help lists it: the name, with the other
	// name people know the runtime by, e.g. "openclaw (pi)".
	HelpName() string
	// Title names the runtime for people (the web UI).
	Title() string
	// Claims reports whether object line t says it is of this dialect.
	// Detection asks the registered dialects in order: a line two could
	// write goes to the first that claims it.
	Claims(t *Tree) bool
	// IDFields are the members that may hold an entry's own id, in the
	// order they are tried (DESIGN §3); the last is where a generated
	// id goes.
	IDFields() []string
	// ViewEntry fills in what of the entry view of object line t the
	// dialect decides: role, time, message, tool calls, the candidate
	// values and the session id of a header (see View).
	ViewEntry(t *Tree, e *Entry)
	// Speaker is the role, in the words of the entry view's Role (user,
	// assistant, …), of whoever says the text at node of line t, viewed
	// as e: the role of the message that holds it (a line may hold
	// several), else e's. bs stats counts a text as the user's or the
	// assistant's by it.
	Speaker(t *Tree, e *Entry, node int) string
	// CallName is the tool named by the call of line t whose arguments
	// hold node, "" when no call of the line does. AnsweredCall is the id
	// of the call whose result, in the runtime's shape of a result, holds
	// node: "" when none does, as for a copy of a result the runtime
	// keeps beside it. bs stats files the tokens of a value of a call or
	// a result under its tool by them (a result's under the tool of the
	// call of that id an earlier entry made: Entry.CallIDs).
	CallName(t *Tree, node int) string
	AnsweredCall(t *Tree, node int) string
	// Spends reports whether object line t carries what cost reports
	// read; SpendRecord is the spend record that stands for it (see
	// SpendRecord), or nil when the dialect has none.
	Spends(t *Tree) bool
	SpendRecord(t *Tree, by, id, parent string) []byte

	// IsCompaction reports whether object line t is the runtime's own
	// compaction entry.
	IsCompaction(t *Tree) bool
	// CompactedFrom is the context size, in tokens, that object line t
	// records it compacted from, when t is a compaction that records one
	// (the web UI's timeline marks it); false otherwise.
	CompactedFrom(t *Tree) (int, bool)
	// NumbersEntries reports whether a transcript whose first line is
	// object line first names the entries its compactions keep by
	// number (Account.KeptIndex) rather than by id: then each line the
	// runtime reads as JSON (leniently, JSONLossily) is an entry,
	// numbered from 0, and a line it cannot read is none, so a filter
	// that finds kept entries by number must check every line.
	NumbersEntries(first *Tree) bool
	// KeptNumber is the node of the number by which compaction line t
	// names the first entry it keeps, in a transcript that NumbersEntries
	// (pi v1's firstKeptEntryIndex), or -1: bs archive renumbers it when
	// turns before that entry collapse, and restore --all puts it back.
	KeptNumber(t *Tree) int

	// LineType is what kind of line object line t is, in the runtime's
	// own words (its type; for an envelope, with the type of what it
	// wraps): what the web UI labels an entry with. "" when t says none.
	LineType(t *Tree) string
	// Envelope is how many of tokens, the tokens of the JSON Pointer of
	// a value of a line (SplitPointer), name the envelope the runtime
	// wraps its message in (pi's message, Codex's payload, a chat line's
	// messages and an index): fewer than all; 0 for a value of a member
	// of the line itself. The token after them is the key restore names
	// the value by (KeyName).
	Envelope(tokens []string) int
	// OuterType is the type object line t states of itself: LineType
	// without the type of what an envelope wraps. bs stats breaks the
	// bytes of other down by it. "" when t states none.
	OuterType(t *Tree) string
	// WorkDir is the working directory object line t names: the project
	// the session works in, which the web UI lists a session under; ""
	// when t names none (Marks.WorkDir marks the lines that name one).
	WorkDir(t *Tree) string

	// SessionDirs are the directories, relative to the home directory
	// and slash-separated, where the runtime keeps its sessions: where
	// bs ui looks when given none (sessions.DefaultRoots).
	SessionDirs() []string

	// Identity is the session identity object line t states in the
	// runtime's shape (sessionIdentity), and how it states it: in a
	// header, the line that opens a session, or Stamped on a line of
	// the session; NotStated when t states none.
	Identity(t *Tree) (id string, how Stated)

	// Follow keeps in tail what the dialect needs of object line t to
	// append a line after it (ContextEntry): the session, the last
	// entry's id.
	Follow(t *Tree, tail *Tail)
	// ContextEntry is the line, ending in a line feed, that puts n's
	// text into the model's context after the lines tail followed, in
	// the shape the runtime takes injected context in, linked to the
	// last entry where the runtime keeps a chain.
	ContextEntry(tail *Tail, n ContextNote) []byte
	// ContextText is the text of a line ContextEntry wrote.
	ContextText(t *Tree) string

	// RollNote is the lines, each ending in a line feed, that stand where
	// bs roll evicted a range, in the runtime's compaction shape, the
	// first carrying EvictedField; nil when the runtime's compaction is
	// not a note in place of the range (pi's).
	RollNote(n RollNote) [][]byte
	// RollTree spells the lines bs roll writes when RollNote is nil (a
	// marker in place, a compaction appended last); nil when RollNote
	// writes the note.
	RollTree() RollTree

	// Turn is what object line t, viewed as e, is to the conversation's
	// turns: prompt, answer, tool call or result, and how calls pair.
	Turn(t *Tree, e *Entry) Turn
	// FollowTurn keeps in s what the entry that stands for a turn
	// repeats of the turn's line t, its time among it (answer: t is an
	// answer of the model's own); StandInEntry is that entry, ending in a line feed,
	// in the runtime's shape for an assistant answer.
	FollowTurn(t *Tree, answer bool, s *StandIn)
	StandInEntry(s *StandIn, n StandInNote) []byte

	// Converse reads object line t into c, in conversation terms.
	Converse(t *Tree, c Conversation)
	// Inserted reports whether text, of a user message, is one the
	// runtime puts there of its own accord (its instructions, reminders,
	// command output) rather than what the user wrote: Converse does not
	// tell it as the user's, and the web UI titles no session with it.
	Inserted(text string) bool

	// Account is what object line t is to the context window's gauge:
	// in context or not, the usage and model it records, a compaction.
	Account(t *Tree) Account

	// Prune fills in what object line t is to a context pruner that
	// counts characters as OpenClaw's session pruning does (bs trim).
	Prune(t *Tree, p *PruneView)

	// Threads is how the runtime's lines link into the context, and Link
	// how object line t links.
	Threads() Threading
	Link(t *Tree) Link
	// Unit is how object line t goes with the lines around it when a
	// filter takes a range out; lastMsgID is the response of the line
	// before (Unit.MsgID).
	Unit(t *Tree, lastMsgID string) Unit
	// StatesWindow reports whether the runtime's lines state the model's
	// context window (Account.Window), which a scan for the model then
	// looks for too.
	StatesWindow() bool
	// NotText are the members whose strings the model does not read as
	// text, though they stand in what it is sent: signatures, encrypted
	// reasoning, image data, ids and the bookkeeping the runtime keeps
	// around a message. The gauge counts no token of them, on any line
	// (RegisteredNotText).
	NotText() []string
	// Blocks are the types the runtime gives the blocks of a message's
	// content that hold a text (in their member text) and those that
	// hold an image. The filters that read content blocks (the gauge's
	// images, trim's count of a message, the texts of a conversation and
	// those the search index keeps of a removed value) take any
	// registered dialect's (RegisteredBlocks).
	Blocks() Blocks
	// Marks are the names and values that mark the lines Spends says yes
	// to, those whose Account records a usage, a window, a compaction or
	// a model, and those that name a WorkDir: filters parse no other line
	// to find them.
	Marks() Marks
}

// Unknown is the zero Dialect, for tests and callers that spell "auto".
var Unknown Dialect

// NameOf is d's name, "unknown" for the zero Dialect.
func NameOf(d Dialect) string {
	if d == nil {
		return "unknown"
	}
	return d.String()
}

// Classify guesses the dialect of one parsed line, or nil when the line
// does not say (a blank line, a snapshot that several dialects could write).
func Classify(t *Tree) Dialect {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return nil
	}
	for _, d := range detectOrder() {
		if d.Claims(t) {
			return d
		}
	}
	return nil
}

// DetectLines is how many leading lines detection looks at before it
// settles for Generic.
const DetectLines = 64

// Fallback is the dialect of a transcript whose first DetectLines lines
// none claims.
func Fallback() Dialect { return registry.fallback }

// DetectIn is the dialect the first lines of head say (Classify, over at
// most DetectLines of its lines), or nil when none says. head may end
// in the middle of a line: that piece is not read.
func DetectIn(head []byte) Dialect {
	var p Parser
	for n := 0; n < DetectLines && len(head) > 0; n++ {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break
		}
		line := head[:i]
		head = head[i+1:]
		if t, err := p.Parse(line); err == nil {
			if d := Classify(t); d != nil {
				return d
			}
		}
	}
	return nil
}
