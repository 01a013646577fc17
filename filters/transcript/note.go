package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// The lines filters write into a transcript (a checkpoint's context
// entry, a notice) are built by the dialect, in the runtime's own shape,
// from plain parameters: the filters say what the line carries, the
// dialect how its runtime writes it.

// Tail is what a dialect keeps of the lines of a transcript it followed
// (Dialect.Follow), to append a line after them that links to them.
type Tail struct {
	LastID  string // the last entry's own id, which the next one hangs from
	Session string // the session the lines name
	Tree    bool   // entries carry ids and parents (pi v2+)
	// Where the runtime records them on every line (Claude Code): the
	// working directory and the runtime's version the lines name.
	Cwd, Version string
	// Agent is the agent whose own file the lines are (a Claude Code
	// subagent's): a line appended there names it too, or the file would
	// read as its parent session's.
	Agent string
}

// ContextNote is a line a filter appends to put Text into the model's
// context.
type ContextNote struct {
	Text string
	// Kind names what the line is for the runtimes that type injected
	// context (pi's customType), e.g. "bs:checkpoint".
	Kind string
	// Field and Meta are the member that marks the line as the filter's
	// and its raw JSON value.
	Field, Meta string
	// Salt tells the line's id from another's with the same text after
	// the same entry.
	Salt string
	Now  time.Time
}

// hash is the hex SHA-256 the ids of a context note come from: stable for
// the same text, salt and place.
func (n ContextNote) hash(tail *Tail) string {
	sum := sha256.Sum256([]byte(tail.LastID + "\x00" + n.Salt + "\x00" + n.Text))
	return hex.EncodeToString(sum[:])
}

// stamp is the note's time as the runtimes write it, quoted.
func (n ContextNote) stamp() string { return quote(n.Now.UTC().Format("2006-01-02T15:04:05.000Z")) }

// tag is the note's marking member.
func (n ContextNote) tag() string { return quote(n.Field) + ":" + n.Meta }

func quote(s string) string { return string(AppendQuote(nil, s)) }

// nullOr is s quoted, or null when it is empty.
func nullOr(s string) string {
	if s == "" {
		return "null"
	}
	return quote(s)
}

// RollNote is what bs roll knows when it writes the note that replaces
// the range it evicted, for a runtime whose note stands where the range
// was (Dialect.RollNote). The members bs reads back come made: the
// dialect places them.
type RollNote struct {
	Text string // the note's text; "" under --no-note
	Now  string // the time of the roll, RFC 3339
	// Tokens is the context before the roll.
	Tokens int
	// Evicted is the raw value of EvictedField, given the number of
	// lines the dialect writes after the line that carries it (restore
	// --all drops them with it).
	Evicted func(after int) string
	// Rolled is the RolledField member (name and value) of the line that
	// carries the accounting, given how many lines after it its figure
	// covers besides those After counts; Tag marks the other lines.
	Rolled func(more int) string
	Tag    string
	// After is how many lines follow the note (kept copies and the lines
	// after the range).
	After   int
	Session string // the session the transcript names, "" if none
	Agent   string // the agent whose own file it is (Tail.Agent), "" if none
	// Hash makes the ids of the lines the note writes, stable for a roll.
	Hash func(salt string) []byte
	// Chain tells, for a runtime that chains lines by parent, where the
	// chain meets the evicted range (RollChain).
	Chain func() RollChain
}

// RollChain is where a transcript's chain of parents meets the range a
// roll evicts.
type RollChain struct {
	// Evicted is the evicted line that the chain from the last message
	// (or, when that does not enter the range, from the first kept one)
	// names, or "" when it stays in the file.
	Evicted string
	// LastBefore is the id of the last line before the note's place that
	// stays on the path, and LastBeforeRange that of the last line
	// before the range.
	LastBefore, LastBeforeRange string
	// Main is false in a subagent's own file, whose lines are all a
	// sidechain's.
	Main bool
}

// messageText is the note's text for a line that goes to the model as a
// message, which must not be empty: --no-note leaves the least there is.
func (n RollNote) messageText() string {
	if n.Text == "" {
		return "[Context rolled]"
	}
	return n.Text
}

// shortID is an 8-hex id like pi's.
func shortID(h []byte) string { return hex.EncodeToString(h[:4]) }
