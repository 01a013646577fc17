package transcript

// ChainNode is what a ParentChains context (ChainContext) needs of a line.
type ChainNode struct {
	ID, Parent string // uuid and parentUuid
	MsgID      string // an assistant line's API message id: one response spans several lines
	Sidechain  bool   // a subagent's line
	Ours       bool   // a line bs roll wrote: never where the chain starts
	Issued     []string
	Answered   []string // tool call ids the line makes and answers
}

// ChainLeaf is the line a ParentChains runtime's chain starts from: the
// last of the main thread's lines (main), or of a subagent's file, whose
// lines are all a sidechain's; -1 if none.
func ChainLeaf(nodes []ChainNode) (leaf int, main bool) {
	for _, n := range nodes {
		if GivenID(n.ID) && !n.Sidechain && !n.Ours {
			main = true
			break
		}
	}
	for i := len(nodes) - 1; i >= 0; i-- {
		if n := nodes[i]; GivenID(n.ID) && n.Sidechain != main && !n.Ours {
			return i, main
		}
	}
	return -1, main
}

// ChainContext says which lines are in the context of a session whose
// runtime threads by ParentChains (Claude Code), or nil when it cannot
// tell (every line counts then). It is the chain of parents from ChainLeaf, which a rewind makes skip the
// messages after the point rewound to, with what the chain alone misses:
// the other lines of a response spread over several, and the results of
// its parallel calls, each the child of its call's line. When the chain
// cannot be read (a parent not in the file, or a single line: a file
// without parentUuids), only a subagent's lines in a main file are out. A
// line without an id is in.
func ChainContext(nodes []ChainNode) []bool {
	at := map[string]int{}
	for i, n := range nodes {
		if GivenID(n.ID) {
			at[n.ID] = i
		}
	}
	leaf, main := ChainLeaf(nodes)
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
		if on[i] || !GivenID(n.ID) {
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
		on[i] = on[i] || !GivenID(n.ID)
	}
	return on
}

// ChainNodeOf reads a parsed line's ChainNode, as its dialect links it.
func ChainNodeOf(t *Tree, d Dialect) ChainNode {
	l := d.Link(t)
	return ChainNode{ID: l.ID, Parent: l.Parent, MsgID: l.MsgID, Sidechain: l.Sidechain,
		Ours: t.Get(0, RolledField) >= 0, Issued: l.Issued, Answered: l.Answered}
}
