package transcript

import "strings"

// A Mark is a JSON string that the lines of a kind hold: a member's name
// (Name) or a member's string value, as it begins, decoded; a mark that
// ends in a quote is the whole string. Filters look for marks in a line's
// bytes to pass over, unparsed, the lines that cannot be of the kind:
// most lines of a transcript are text and tool output.
type Mark struct {
	Text string
	Name bool
}

// Marks are the marks of a dialect's lines that say more than their text
// (Dialect.Marks): on every line of a kind, one of the kind's marks. A
// line that holds none is taken for text, so a dialect that leaves a mark
// out loses what its lines record (the conformance suite checks the
// samples for it).
type Marks struct {
	// Spend: the lines Spends says yes to. Each ends in a quote: a filter
	// looks for the end of a string.
	Spend []Mark
	// Usage: the lines whose Account is a UsageReport or states a Window.
	Usage []Mark
	// Reset: the lines whose Account is a CompactionEntry.
	Reset []Mark
	// Model: the lines whose Account names a Model.
	Model []Mark
	// WorkDir: the lines WorkDir names a working directory on.
	WorkDir []Mark
}

// heldBy reports whether object line t holds m: a member so named, or a
// member whose string value is or begins so.
func (m Mark) heldBy(t *Tree) bool {
	for i := range t.Nodes {
		n := &t.Nodes[i]
		switch {
		case n.Name == nil:
		case m.Name && m.matches(unquote(n.Name)):
			return true
		case !m.Name && n.Kind == '"' && m.matches(t.Str(i)):
			return true
		}
	}
	return false
}

// matches reports whether the decoded string s is or begins with m.
func (m Mark) matches(s string) bool {
	if whole, ok := strings.CutSuffix(m.Text, `"`); ok {
		return s == whole
	}
	return strings.HasPrefix(s, m.Text)
}

// Needles are the bytes of marks as a line holds them unescaped: what a
// byte pre-filter looks for (a name mark's closing quote included).
func Needles(marks ...[]Mark) [][]byte {
	var ns [][]byte
	for _, ms := range marks {
		for _, m := range ms {
			ns = append(ns, []byte(m.Text))
		}
	}
	return ns
}

// AnyHeldBy reports whether object line t holds one of marks.
func AnyHeldBy(t *Tree, marks []Mark) bool {
	for _, m := range marks {
		if m.heldBy(t) {
			return true
		}
	}
	return false
}
