package gauge

import (
	"bytes"
	"io"
	"os"

	"github.com/bstools/bs/filters/transcript"
)

// ChainNode is what the chain Claude Code loads needs of a line.
type ChainNode struct {
	ID, Parent string // uuid and parentUuid
	MsgID      string // an assistant line's API message id: one response spans several lines
	Sidechain  bool   // a subagent's line
	Ours       bool   // a line bs roll wrote: never where the chain starts
	Issued     []string
	Answered   []string // tool call ids the line makes and answers
}

// ClaudeLeaf is the line Claude Code's chain starts from: the last of the
// main thread's lines (main), or of a subagent's file, whose lines are all
// a sidechain's; -1 if none.
func ClaudeLeaf(nodes []ChainNode) (leaf int, main bool) {
	for _, n := range nodes {
		if transcript.GivenID(n.ID) && !n.Sidechain && !n.Ours {
			main = true
			break
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if n := nodes[i]; transcript.GivenID(n.ID) && n.Sidechain != main && !n.Ours {
			return i, main
		}
	}
	return -1, main
}

// ClaudeContext says which lines are in the context of a Claude Code
// session, or nil when it cannot tell (every line counts then). It is the
// chain of parentUuids from ClaudeLeaf, which a rewind makes skip the
// messages after the point rewound to, with what the chain alone misses:
// the other lines of a response spread over several, and the results of
// its parallel calls, each the child of its call's line. When the chain
// cannot be read (a parent not in the file, or a single line: a file
// without parentUuids), only a subagent's lines in a main file are out. A
// line without an id is in.
func ClaudeContext(nodes []ChainNode) []bool {
	at := map[string]int{}
	for i, n := range nodes {
		if transcript.GivenID(n.ID) {
			at[n.ID] = i
		}
	}
	leaf, main := ClaudeLeaf(nodes)
	if leaf < 0 {
		return nil
	}
	on := make([]bool, len(nodes))
	unread := func() []bool {
		if !main {
			return nil
		}
		for i, n := range nodes {
			on[i] = !n.Sidechain
		}
		return on
	}
	chain := 0
	for i := leaf; ; chain++ {
		on[i] = true
		if nodes[i].Parent == "" {
			break // the root, or a compact boundary
		}
		j, ok := at[nodes[i].Parent]
		if !ok || on[j] {
			return unread() // a parent not in the file, or a loop
		}
		i = j
	}
	if chain == 0 {
		return unread()
	}
	msgs, calls := map[string]bool{}, map[string]bool{}
	take := func(n ChainNode) {
		if n.MsgID != "" {
			msgs[n.MsgID] = true
		}
		for _, c := range n.Issued {
			calls[c] = true
		}
	}
	for i, n := range nodes {
		if on[i] {
			take(n)
		}
	}
	// Calls come before their results: one pass forwards takes each line
	// that goes with one already taken.
	for i, n := range nodes {
		if on[i] || !transcript.GivenID(n.ID) {
			continue
		}
		with := n.MsgID != "" && msgs[n.MsgID]
		for _, c := range n.Answered {
			with = with || calls[c]
		}
		if with {
			on[i] = true
			take(n)
		}
	}
	for i, n := range nodes {
		on[i] = on[i] || !transcript.GivenID(n.ID)
	}
	return on
}

// NodeOf reads a parsed line's ChainNode, as its dialect links it.
func NodeOf(t *transcript.Tree, d transcript.Dialect) ChainNode {
	l := d.Link(t)
	return ChainNode{ID: l.ID, Parent: l.Parent, MsgID: l.MsgID, Sidechain: l.Sidechain,
		Ours: t.Get(0, transcript.RolledField) >= 0, Issued: l.Issued, Answered: l.Answered}
}

// claudePath is the set of uuids in a Claude Code file's context
// (ClaudeContext), read from the whole file, or nil when every line counts.
func claudePath(f *os.File, size int64, d transcript.Dialect) map[string]bool {
	var nodes []ChainNode
	var p transcript.Parser
	r := transcript.NewReader(io.NewSectionReader(f, 0, size))
	for {
		line, err := r.NextView()
		if err != nil {
			break
		}
		var n ChainNode
		if len(bytes.TrimSpace(line.Body)) > 0 {
			if t, err := p.Parse(line.Body); err == nil {
				n = NodeOf(t, d)
			}
		}
		nodes = append(nodes, n)
	}
	on := ClaudeContext(nodes)
	if on == nil {
		return nil
	}
	set := map[string]bool{}
	for i, n := range nodes {
		if on[i] && n.ID != "" {
			set[n.ID] = true
		}
	}
	return set
}

// claudeWalk keeps the uuids and parents of the lines MeasureFile walks
// back over in a Claude Code file, and the first it meets that may start
// the chain (the last of the thread's lines that bs roll did not write).
type claudeWalk struct {
	parents map[string]string
	leaf    string
}

func (w *claudeWalk) add(n ChainNode) {
	if !transcript.GivenID(n.ID) {
		return
	}
	if w.parents == nil {
		w.parents = map[string]string{}
	}
	w.parents[n.ID] = n.Parent
	if w.leaf == "" && !n.Ours {
		w.leaf = n.ID
	}
}

// reaches reports whether the chain from the last line runs, through the
// lines walked, back to the line the walk stopped at or to another line
// of its response (group: their uuids).
func (w *claudeWalk) reaches(stop ChainNode, group map[string]bool) bool {
	x := w.leaf
	if x == "" {
		return true // nothing after it to leave it
	}
	for steps := 0; steps <= len(w.parents); steps++ {
		if x == stop.ID || group[x] {
			return true
		}
		p, ok := w.parents[x]
		if !ok || p == "" {
			return false
		}
		x = p
	}
	return false
}

// responseBefore is the set of uuids of the lines just before end that
// belong to the API response msgID: Claude Code writes one response over
// several lines, and the chain may pass through any of them.
func responseBefore(f *os.File, end int64, msgID string, d transcript.Dialect) map[string]bool {
	group := map[string]bool{}
	if msgID == "" {
		return group
	}
	var p transcript.Parser
	backwardLines(f, end, func(line []byte) bool {
		if len(bytes.TrimSpace(line)) == 0 {
			return true
		}
		t, err := p.Parse(line)
		if err != nil {
			return false
		}
		n := NodeOf(t, d)
		if n.MsgID != msgID {
			// The runtime's bookkeeping (its progress lines) falls
			// between them.
			return n.MsgID == "" && d.Unit(t, "").Noise
		}
		group[n.ID] = true
		return true
	})
	return group
}
