package transcript

// Threading is how a runtime's lines link into the conversation the
// model sees (Dialect.Threads).
type Threading uint8

const (
	// InOrder: the file, in order, is the conversation; a compaction
	// starts it again.
	InOrder Threading = iota
	// ParentTree: entries name their parent, and the context is the path
	// from the last entry back to the root; abandoned branches stay in
	// the file, and a compaction keeps entries that stand before it
	// (pi). A file without ids (pi v1) is one path. bs roll keeps the
	// tree whole: a marker where the range was, a compaction appended
	// last (RollNote is nil; RollTree spells the lines).
	ParentTree
	// ParentChains: lines name their parent; a compaction starts a new
	// chain with no parent, subagents' lines are sidechains, and the
	// context is the chain that leads to the main thread's last line
	// (Claude Code).
	ParentChains
)

// ThreadKind is which thread a message line belongs to, for
// ParentChains.
type ThreadKind uint8

const (
	NoThread   ThreadKind = iota // not a message, or not told
	MainThread                   // the conversation's own
	SideThread                   // a subagent's
)

// Link is how one line links into its runtime's threads (Dialect.Link).
type Link struct {
	ID, Parent string // the line's id and its parent's, "" if none
	// Header marks the line that opens the file, whose own id names the
	// session, not an entry any other hangs from.
	Header bool
	// MsgID is the response an answer belongs to, which several lines
	// may share (Claude Code writes one line per content block).
	MsgID string
	// Sidechain marks a subagent's line; Thread is the thread of a
	// message line.
	Sidechain bool
	Thread    ThreadKind
	// Issued and Answered are the tool calls the line makes and answers,
	// as the chain pairs them.
	Issued, Answered []string
}

// Unit is how a line goes with the lines around it when a filter takes a
// range of lines out (Dialect.Unit).
type Unit struct {
	// Join: the line must stay with the line before it (a tool result
	// with its call, a later line of one response).
	Join bool
	// Noise: bookkeeping that goes with its unit, neither in context nor
	// needed to load the file.
	Noise bool
	// MsgID is the response the line belongs to, for the next line.
	MsgID string
	// Message: the runtime gives the line to the model as a message,
	// though the entry view counts it as none (pi's branch_summary).
	Message bool
	// SpendAgain: a line whose spend record a roll writes even when the
	// line stays, because the records after it are priced by what it
	// names (Codex's turn_context names the model of the counts after it,
	// and the records stand before the kept lines).
	SpendAgain bool
}
