package transcript

import "strconv"

// ContextRole says what a line is to the context window's accounting.
type ContextRole uint8

const (
	OutOfContext    ContextRole = iota // headers, settings, progress, events
	InContext                          // in context: its tokens are estimated
	UsageReport                        // an answer carrying the context size the provider saw
	CompactionEntry                    // the runtime's compaction: earlier usage is stale
)

// Account is what one line is to the gauge (Dialect.Account): its role,
// where its context text is, and what it records.
type Account struct {
	Role ContextRole
	// Text says the line has context text, at node Content (-1 when the
	// member that holds it is missing); Fallback, with HasFallback, is
	// the node to read when Content holds none (Codex's compacted message
	// when its replacement history is empty).
	Text              bool
	Content, Fallback int
	HasFallback       bool
	Tokens            int    // for a UsageReport: the context size recorded
	MsgID             string // for a UsageReport: the response id several lines share
	Model             string // a model the line names
	Window            int    // a context window the line states
	// A compaction that keeps entries before it (pi): the first, by id
	// (v2+) or by entry number (v1), and the compaction's parent, where
	// the path to the kept entries goes back from.
	KeptID    string
	KeptIndex int
	Parent    string
}

// noAccount is a line out of context.
var noAccount = Account{Content: -1, Fallback: -1}

// content is a line in context whose text is at node n.
func content(n int) Account { return Account{Role: InContext, Text: true, Content: n, Fallback: -1} }

// number is node i as a number, 0 when it is none: an int, as the
// runtimes count tokens.
func number(t *Tree, i int) int {
	if i < 0 || t.Nodes[i].Kind != '0' {
		return 0
	}
	f, err := strconv.ParseFloat(string(t.Raw(i)), 64)
	if err != nil {
		return 0
	}
	return int(f)
}

// integer is node i as an int when it is written as one (a count a
// line records), false when it is missing or is not.
func integer(t *Tree, i int) (int, bool) {
	if i < 0 {
		return 0, false
	}
	n, err := strconv.Atoi(string(t.Raw(i)))
	return n, err == nil
}

// viewAccount is the account of a line that is in context when the
// entry view finds a message in it (the dialects without usage).
func viewAccount(t *Tree, d Dialect) Account {
	if e := View(t, d); e.Message {
		return content(0)
	}
	return noAccount
}
