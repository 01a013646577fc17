package gauge

import (
	"bytes"
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/bstools/bs/filters/transcript"
)

// A usage the provider recorded counts the context as it was sent then.
// When bs later takes something out of the entries that usage covered (a
// value extract moves, a result trim clears, a turn archive collapses) or
// puts something back (restore), the runtime's next request is smaller or
// larger than that figure by as much. Each filter that does so writes the
// difference on the usage lines after its change, in the member
// transcript.AdjustedField, and the gauge takes it off:
//
//	"_adjusted":{"removed":R,"added":A,"scale":S,"measured":N,"estimator":"chars/4"}
//
// R and A are what bs took out of and put into the context the usage
// covered since it was recorded, in tokens of the estimator named, and S
// is what one such token is worth to the provider (Calibrator), measured
// on N growths of the transcript: the usage is worth R-A tokens of S less. A filter adds its own change to what the
// line carries, so the member sums every run since the usage was written;
// a usage written by the runtime after a run covers the context as that
// run left it, and carries nothing. restore --all takes the member away
// with everything else bs wrote.

// Adjustment is a usage line's _adjusted member.
type Adjustment struct {
	Removed, Added int     // tokens of Estimator
	Scale          float64 // provider tokens per estimated token; 0 when absent
	Measured       int     // the growths Scale was measured on (Calibrator)
	Estimator      string
}

// Net is how many provider tokens the usage counts that the context no
// longer holds (negative: that it holds and the usage did not count).
func (a Adjustment) Net() int {
	if a.Scale == 0 {
		return 0
	}
	return int(math.Round(float64(a.Removed-a.Added) * a.Scale))
}

// Present reports whether the line carried an _adjusted member.
func (a Adjustment) Present() bool { return a.Scale != 0 }

// in expresses a in tokens of the estimator named est at scale: the same
// provider tokens, counted as that estimator counts them.
func (a Adjustment) in(est string, scale float64) (removed, added int) {
	if !a.Present() || a.Estimator == est {
		return a.Removed, a.Added
	}
	f := a.Scale / scale
	return int(math.Round(float64(a.Removed) * f)), int(math.Round(float64(a.Added) * f))
}

// Carries reports whether a ledger may write an _adjusted on the line: a
// usage, or a roll note.
func (l Line) Carries() bool { return l.Role == Usage || l.RollEnd }

// readAdjustment reads the _adjusted member at node n (-1: none).
func readAdjustment(t *transcript.Tree, n int) Adjustment {
	if n < 0 || t.Nodes[n].Kind != '{' {
		return Adjustment{}
	}
	s := floatAt(t, t.Get(n, "scale"))
	if s <= 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return Adjustment{}
	}
	return Adjustment{Removed: intAt(t, t.Get(n, "removed")), Added: intAt(t, t.Get(n, "added")), Scale: s,
		Measured: intAt(t, t.Get(n, "measured")), Estimator: t.Str(t.Get(n, "estimator"))}
}

// appendJSON appends the member's value.
func (a Adjustment) appendJSON(b []byte) []byte {
	b = append(b, `{"removed":`...)
	b = strconv.AppendInt(b, int64(a.Removed), 10)
	b = append(b, `,"added":`...)
	b = strconv.AppendInt(b, int64(a.Added), 10)
	b = append(b, `,"scale":`...)
	b = strconv.AppendFloat(b, a.Scale, 'f', -1, 64)
	b = append(b, `,"measured":`...)
	b = strconv.AppendInt(b, int64(a.Measured), 10)
	b = append(b, `,"estimator":`...)
	b = transcript.AppendQuote(b, a.Estimator)
	return append(b, '}')
}

// Edit returns the edit that writes a as the _adjusted member of line t,
// replacing the one it has.
func (a Adjustment) Edit(t *transcript.Tree) transcript.Edit {
	return a.EditAt(AdjustedAt(t))
}

// AdjustedAt is where line t's _adjusted goes: the span of the value it
// has, or the point where the member is inserted with the text that
// comes before its value (its name, after a comma when the root has
// members). A filter that rewrites a line's _adjusted after the line has
// been parsed and let go keeps this instead of parsing it again
// (EditAt).
func AdjustedAt(t *transcript.Tree) transcript.Edit {
	if n := t.Get(0, transcript.AdjustedField); n >= 0 {
		return t.ReplaceValue(n, nil)
	}
	return t.InsertMember(0, transcript.AdjustedField, nil)
}

// EditAt is Edit for the line whose AdjustedAt is at.
func (a Adjustment) EditAt(at transcript.Edit) transcript.Edit {
	at.Text = a.appendJSON(slices.Clip(at.Text))
	return at
}

func floatAt(t *transcript.Tree, i int) float64 {
	if i < 0 || t.Nodes[i].Kind != '0' {
		return 0
	}
	f, err := strconv.ParseFloat(string(t.Raw(i)), 64)
	if err != nil {
		return 0
	}
	return f
}

// extractedTokens sums the tokens the records of an _extracted member
// (node n, -1: none) say their removals took out of the line: what the
// values held less the placeholders left for them, as the estimator the
// filter used counted them. A record without a count counts nothing.
func extractedTokens(t *transcript.Tree, n int) int {
	if n < 0 || t.Nodes[n].Kind != '{' {
		return 0
	}
	sum := 0
	t.Children(n, func(m, _ int) { sum += intAt(t, t.Get(m, "tokens")) })
	return sum
}

// Calibration bounds. An estimated token is worth what the provider
// counted for the lines that made its context grow between two usages:
// only growths of at least calibrationPairMin estimated tokens are
// measured (a large tool result, not a short reply, whose count the
// runtime's own additions to each request, which the transcript does not
// show, would swamp), and their median ratio is the worth once there are
// calibrationMinPairs of them; until then a token is a token. The median
// shrugs off the few growths the estimate misses by far (a response the
// runtime cut, an image), which a ratio of sums follows. The worth is kept
// within [calibrationLow, calibrationHigh]: a file whose text was
// redacted upstream (its usage counts the original) says nothing about
// the estimator. On the corpus the median lies between 1.07 (a Codex
// rollout) and 1.38 (a Claude Code session) for chars/4.
const (
	calibrationPairMin  = 500
	calibrationMinPairs = 5
	// calibrationPairs is how many growths the median is taken over: the
	// first ones of the transcript. After them a run need not estimate
	// the lines it reads (Ledger.Measuring), and the worth of a token
	// does not depend on how far a run reads.
	calibrationPairs = 256
	calibrationLow   = 0.5
	calibrationHigh  = 2.0
)

// Calibrator measures, as a transcript streams by, what one estimated
// token is worth in the tokens the provider counts: for each two usages in
// a row with no compaction between them, the growth the provider reported
// against the estimate of the lines that made it. Only the lines as the
// runtime sent them say that: two usages whose _adjusted differ had lines
// between them that bs changed since, and are not measured. On a
// transcript bs has changed, the worth the earlier run wrote with its
// _adjusted (measured on the lines as they were) is taken instead.
type Calibrator struct {
	est     string // the estimator's name
	have    bool   // a usage to measure from
	last    int    // its tokens
	lastNet int    // its _adjusted, in tokens of est
	grown   int    // estimated tokens since it
	scope   int    // lines still inside a roll note's scope

	// The growth the last usage ended, still open to the other lines of
	// its response (Claude Code writes one a block, each with the
	// response's usage, which counted them all).
	pending     Pair
	havePending bool

	ratios runningMedian // of the growths of at least calibrationPairMin

	// seen is the scale of the last _adjusted read, an earlier run's,
	// measured on the lines before it changed them, on seenMeasured
	// growths.
	seen         float64
	seenMeasured int
	sparse       bool // measure nothing: the worth is what _adjusted says
}

// Pair is one growth of the context between two usages: what the
// provider counted (Real) against the estimate of the lines that made it,
// and the line of the usage that ended it.
type Pair struct {
	Est, Real, Line int
}

// NewCalibrator returns a calibrator for the estimator est.
func NewCalibrator(est Estimator) *Calibrator {
	return &Calibrator{est: withDefaults(Options{Estimator: est}).Estimator.Name()}
}

// Add takes the next line, classified with its own estimate even when it
// carries usage (Classify), and its line number. When a growth is
// complete (the response that ended it has no more lines) it returns it.
func (c *Calibrator) Add(l Line, num int) (done Pair, ok bool) {
	if l.Role == Compaction {
		done, ok = c.Flush()
		c.have, c.grown, c.scope = false, 0, l.Scope
		return done, ok
	}
	if c.scope > 0 {
		c.scope-- // counted by a roll note: its usage predates the roll
		return Pair{}, false
	}
	switch l.Role {
	case Content:
		c.grown += l.Estimate
	case Usage:
		net := 0
		if l.Adj.Present() {
			c.seen, c.seenMeasured = l.Adj.Scale, l.Adj.Measured
			net = l.Adj.Removed - l.Adj.Added
			if l.Adj.Estimator != c.est {
				net = l.Adj.Net() // another estimator's: as the provider counts
			}
		}
		if c.have && l.Tokens == c.last && net == c.lastNet && c.grown == 0 {
			// Another line of the same response: its blocks are in the
			// growth that response's count ended.
			c.pending.Est += l.Estimate
			return Pair{}, false
		}
		done, ok = c.Flush()
		real := l.Tokens - c.last
		if c.have && real > 0 && net == c.lastNet {
			c.pending, c.havePending = Pair{Est: c.grown + l.Estimate, Real: real, Line: num}, true
		}
		c.have, c.last, c.lastNet, c.grown = true, l.Tokens, net, 0
	}
	return done, ok
}

// Flush completes the growth still open, if any (at the end of input).
func (c *Calibrator) Flush() (Pair, bool) {
	if !c.havePending {
		return Pair{}, false
	}
	p := c.pending
	c.havePending = false
	if p.Est >= calibrationPairMin && !c.frozen() {
		c.ratios.add(float64(p.Real) / float64(p.Est))
	}
	return p, true
}

// frozen reports whether the calibration has measured all it measures:
// the estimates of the lines it is given no longer count.
func (c *Calibrator) frozen() bool { return c.ratios.n() >= calibrationPairs }

// Scale is what one estimated token is worth so far, and on how many
// growths it was measured: the median of the growths measured here, or
// what the last _adjusted read says when an earlier run measured it on at
// least as many (on the lines before it changed them); else 1, measured
// on none.
func (c *Calibrator) Scale() float64 { s, _ := c.measure(); return s }

// measure is Scale with the number of growths behind it.
func (c *Calibrator) measure() (scale float64, measured int) {
	own := c.ratios.n()
	if c.sparse || own < calibrationMinPairs {
		own = 0
	}
	switch {
	case c.seen > 0 && c.seenMeasured >= own:
		return c.seen, c.seenMeasured
	case own > 0:
		s := min(max(c.ratios.median(), calibrationLow), calibrationHigh)
		return math.Round(s*1000) / 1000, own
	}
	return 1, 0
}

// runningMedian keeps the median of the numbers added: the lower half in a
// max-heap, the upper half in a min-heap.
type runningMedian struct {
	lo, hi []float64 // lo holds negated values: both are min-heaps
}

func (m *runningMedian) n() int { return len(m.lo) + len(m.hi) }

func (m *runningMedian) add(x float64) {
	if len(m.lo) == 0 || x <= -m.lo[0] {
		pushHeap(&m.lo, -x)
	} else {
		pushHeap(&m.hi, x)
	}
	if len(m.lo) > len(m.hi)+1 {
		pushHeap(&m.hi, -popHeap(&m.lo))
	} else if len(m.hi) > len(m.lo) {
		pushHeap(&m.lo, -popHeap(&m.hi))
	}
}

func (m *runningMedian) median() float64 {
	if len(m.lo) > len(m.hi) {
		return -m.lo[0]
	}
	return (-m.lo[0] + m.hi[0]) / 2
}

func pushHeap(h *[]float64, x float64) {
	*h = append(*h, x)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if s[p] <= s[i] {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func popHeap(h *[]float64) float64 {
	s := *h
	top := s[0]
	s[0] = s[len(s)-1]
	s = s[:len(s)-1]
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(s) {
			break
		}
		if c+1 < len(s) && s[c+1] < s[c] {
			c++
		}
		if s[i] <= s[c] {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
	return top
}

// A Ledger carries forward what one run of a filter takes out of the
// context and puts into it, line by line, and says which usage lines must
// carry it (their _adjusted) so that the gauge sees the context as the
// filter left it. A run that decides a line's fate as it reads it feeds
// every input line, in order, to Add, with what it changed in the line,
// and writes the Adjustment it returns. A run that reads its input twice
// (trim: it plans, then writes) gives each line to Observe on the first
// pass and the Mark it returns, with the line's change, to Carry on the
// second.
type Ledger struct {
	est    Estimator
	cal    *Calibrator
	sparse bool // see NewSparseLedger
	// thread is the Claude Code thread the context is (its first
	// message's): a subagent's lines in the main file are not in it.
	thread thread

	// The first pass (Observe).
	scope    int        // lines still inside a roll note's scope
	kept     []keptMark // kept[keptHead:] are the latest lines, for a pi compaction's kept entries
	keptHead int
	keptLen  int // their bytes
	entries  int // pi's entry number of the next line (v1)

	// The second pass (Carry): this run's changes since the last reset,
	// in tokens of est, and what they were at the first entry the next pi
	// compaction keeps.
	removed, added         int
	keptRemoved, keptAdded int
	haveKept               bool
	// What they were at the last roll marker, for a pi note after the
	// entries that roll kept.
	markRemoved, markAdded int
	haveMark               bool

	// A pi tree's branches. A user who goes back to an earlier entry
	// (pi's /tree) goes on from it: the lines after, appended to the
	// file, hang from that entry, and the context they are sent with is
	// the path to it, not the lines before them in the file. So the
	// totals a line starts from are its parent's: Observe numbers the
	// lines and finds a parent that is not the entry before (ids, the
	// latest entries), and Carry keeps the totals as they were after
	// each line (history) to start such a line from its parent's.
	line    int32 // lines observed
	lastID  string
	ids     []entryAt
	history []totalsAt
	forgot  bool // history has lost its oldest totals
}

// entryAt is an entry's id and the line it came at.
type entryAt struct {
	id   string
	line int32
}

// totalsAt is what the totals were after a line.
type totalsAt struct {
	line           int32
	removed, added int
}

// treeWindow is how many of the latest entries (and changes of the totals)
// a ledger keeps to find a branch's parent: a branch from further back
// starts from the totals of the lines before it, as in a file without
// branches.
const treeWindow = 1 << 16

// keptMark is a recent line as the first pass saw it, with the totals
// before it (valid when the passes go together, as in Add).
type keptMark struct {
	id             string
	number         int
	n              int
	removed, added int
}

// LedgerLine is one input line as the ledger needs it.
type LedgerLine struct {
	Line // Classify of the input line (nil tree: Line{})
	// Removed and Added are what the run took out of the line and put
	// into it, in tokens of the ledger's estimator (for Add).
	Removed, Added int
	// For OpenClaw/pi: the entry's id (v2+), whether pi numbers it as an
	// entry (v1: it parses), and its length, so that a compaction's kept
	// entries are found.
	ID    string
	Entry bool
	Bytes int
	// Parent is the entry's parentId (v2+): when it is not the entry
	// before, the line starts a branch.
	Parent string

	thread thread // Claude Code: the line's thread, if a message
}

// Mark is what the first pass keeps of a line for the second.
type Mark struct {
	kind markKind
	// KeptFrom marks the first entry a later pi compaction keeps from
	// before itself: Observe says which line that is, and the caller sets
	// it on that line's Mark before the second pass.
	KeptFrom bool
	scale    float64     // a usage's calibration
	measured int         // the growths it was measured on
	adj      *Adjustment // a usage's _adjusted, if any
	// at is the line's number (1 on), from the number of its parent
	// when it starts a branch of a pi tree (0: it does not).
	at, from int32
}

// Acts reports whether the second pass does anything with a line that
// gave up nothing: a usage, a reset, the first entry a compaction keeps.
// A run that carries only some lines' changes may pass the others over.
func (m Mark) Acts() bool {
	return m.KeptFrom || m.kind == markUsage || m.kind == markRoll || m.Resets() || m.from > 0
}

// Resets reports whether the line ends what came before it: a compaction
// or a roll note.
func (m Mark) Resets() bool { return m.kind == markReset || m.kind == markKept || m.kind == markNote }

type markKind int8

const (
	markPlain  markKind = iota // its change counts for the usages after it
	markUsage                  // a usage line: it may carry the total
	markReset                  // a compaction or roll note: the total starts again
	markKept                   // a pi compaction keeping entries: the total starts from them
	markScoped                 // inside a roll note's scope: counted, never annotated
	markOut                    // another thread's line: nothing of it counts
	markRoll                   // a pi roll's marker: the entries after it are what its note counts
	markNote                   // a pi roll's note, after them: it carries what they gave up, then resets
)

// NewLedger returns a ledger that counts with est.
func NewLedger(est Estimator) *Ledger {
	est = withDefaults(Options{Estimator: est}).Estimator
	return &Ledger{est: est, cal: NewCalibrator(est)}
}

// NewSparseLedger returns a ledger whose answers depend only on the lines
// a run changes, the usage lines and the resets (compactions, roll notes):
// given those alone, in order, it answers as it does given the whole file.
// A token is worth what the _adjusted it reads say (1 before any), and it
// follows neither a roll note's scope, a pi compaction's kept entries nor
// Claude Code's threads. A restore of one entry uses it, so that finding
// those lines by their bytes and restoring them alone (the agent's fast
// path) writes what a restore of the whole file would.
func NewSparseLedger(est Estimator) *Ledger {
	g := NewLedger(est)
	g.sparse, g.cal.sparse = true, true
	return g
}

// Add takes the next input line, with what the run changed in it. When
// the line is a usage whose _adjusted must change, it returns the new one
// (write it with Adjustment.Edit).
func (g *Ledger) Add(l LedgerLine) (Adjustment, bool) {
	m, back := g.Observe(l)
	if back >= 0 {
		k := g.kept[len(g.kept)-1-back]
		g.keptRemoved, g.keptAdded, g.haveKept = k.removed, k.added, true
	}
	return g.Carry(m, l.Removed, l.Added)
}

// Observe takes the next input line on the first pass. When the line is
// a pi compaction that keeps entries from before itself, back says how
// many lines before it the first of them is (set KeptFrom on its Mark);
// else it is -1.
func (g *Ledger) Observe(l LedgerLine) (m Mark, back int) {
	g.line++
	from := g.branch(l)
	m, back = g.observe(l)
	m.at, m.from = g.line, from
	return m, back
}

// branch returns the number of the line l hangs from when l is an entry
// of a pi tree whose parent is not the entry before it, and 0 when it is,
// or when the parent is further back than the ledger remembers.
func (g *Ledger) branch(l LedgerLine) int32 {
	if g.sparse || l.ID == "" {
		return 0
	}
	last := g.lastID
	g.lastID = l.ID
	if len(g.ids) == treeWindow {
		g.ids = newerHalf(g.ids)
	}
	g.ids = append(g.ids, entryAt{l.ID, g.line})
	if l.Parent == "" || last == "" || l.Parent == last {
		return 0
	}
	for i := len(g.ids) - 2; i >= 0; i-- {
		if g.ids[i].id == l.Parent {
			return g.ids[i].line
		}
	}
	return 0
}

// observe is Observe of a line once numbered.
func (g *Ledger) observe(l LedgerLine) (m Mark, back int) {
	if g.sparse {
		l.thread, l.Scope, l.KeptID, l.KeptIndex, l.ID, l.Entry = threadUnknown, 0, "", 0, "", false
	}
	if l.thread != threadUnknown {
		if g.thread == threadUnknown {
			g.thread = l.thread
		}
		if l.thread != g.thread {
			g.cal.Add(Line{}, 0)
			g.mark(LedgerLine{Bytes: l.Bytes})
			if g.scope > 0 {
				g.scope-- // still a line of a roll note's scope, as the gauge counts them
			}
			return Mark{kind: markOut}, -1 // not in the context: nothing it gave up counts
		}
	}
	g.cal.Add(l.Line, 0)
	g.mark(l)
	switch {
	case l.RollEnd && !l.evicts:
		// A note after the entries its roll kept (pi's): they count for
		// it as for a usage.
		g.scope = l.Scope
		m = Mark{kind: markNote}
		m.scale, m.measured = g.cal.measure()
		if l.Adj.Present() {
			a := l.Adj
			m.adj = &a
		}
		return m, -1
	case l.Role == Compaction:
		g.scope = l.Scope
		if back = g.keptBack(l.Line); back >= 0 {
			return Mark{kind: markKept}, back
		}
		return Mark{kind: markReset}, -1
	case l.evicts:
		return Mark{kind: markRoll}, -1
	case g.scope > 0:
		g.scope--
		return Mark{kind: markScoped}, -1
	case l.Role == Usage:
		m = Mark{kind: markUsage}
		m.scale, m.measured = g.cal.measure()
		if l.Adj.Present() {
			a := l.Adj
			m.adj = &a
		}
		return m, -1
	}
	return Mark{}, -1
}

// Carry takes the next line on the second pass: its Mark, and what the
// run took out of it and put into it, in tokens of the ledger's
// estimator. When the line is a usage whose _adjusted must change, it
// returns the new one.
func (g *Ledger) Carry(m Mark, removed, added int) (Adjustment, bool) {
	if m.from > 0 {
		// A branch: it goes on from its parent's totals.
		if r, a, ok := g.totalsAfter(m.from); ok {
			g.removed, g.added = r, a
		}
	}
	adj, ok := g.carry(m, removed, added)
	// Only a tree (lastID) can branch; a file without ids keeps nothing.
	if m.at > 0 && g.lastID != "" && (len(g.history) == 0 || g.history[len(g.history)-1].removed != g.removed || g.history[len(g.history)-1].added != g.added) {
		if len(g.history) == treeWindow {
			g.history, g.forgot = newerHalf(g.history), true
		}
		g.history = append(g.history, totalsAt{m.at, g.removed, g.added})
	}
	return adj, ok
}

// newerHalf keeps the newer half of a full window, in its memory, and
// lets go of what the older half held.
func newerHalf[T any](s []T) []T {
	n := copy(s, s[len(s)/2:])
	clear(s[n:])
	return s[:n]
}

// totalsAfter is what the totals were after line n, if the ledger still
// knows.
func (g *Ledger) totalsAfter(n int32) (removed, added int, ok bool) {
	i, found := slices.BinarySearchFunc(g.history, n, func(t totalsAt, n int32) int { return cmp.Compare(t.line, n) })
	if !found {
		i-- // the last change before it
	}
	switch {
	case i >= 0:
		return g.history[i].removed, g.history[i].added, true
	case g.forgot:
		return 0, 0, false
	}
	return 0, 0, true // before any change
}

// carry is Carry of a line on its own path.
func (g *Ledger) carry(m Mark, removed, added int) (Adjustment, bool) {
	if m.KeptFrom {
		g.keptRemoved, g.keptAdded, g.haveKept = g.removed, g.added, true
	}
	switch m.kind {
	case markOut:
		return Adjustment{}, false
	case markRoll:
		g.markRemoved, g.markAdded, g.haveMark = g.removed+removed, g.added+added, true
		g.removed += removed
		g.added += added
		return Adjustment{}, false
	case markNote:
		r, a := max(g.removed-g.markRemoved, 0), max(g.added-g.markAdded, 0)
		ok := g.haveMark && (r != 0 || a != 0)
		g.removed, g.added, g.haveMark, g.haveKept = removed, added, false, false
		if !ok {
			return Adjustment{}, false
		}
		return m.merged(r, a, g.est.Name()), true
	case markReset, markKept:
		// Usage before a compaction is stale; after it, a usage covers
		// the context from the compaction on, and for pi the entries it
		// keeps from before itself, whose changes still count.
		r, a := 0, 0
		if m.kind == markKept && g.haveKept {
			r, a = g.removed-g.keptRemoved, g.added-g.keptAdded
		}
		g.removed, g.added, g.haveKept = r+removed, a+added, false
		if g.haveMark {
			// A reset between a roll's marker and its note (the copy of a
			// compaction roll writes after the marker): the note counts
			// what follows from it.
			g.markRemoved, g.markAdded = 0, 0
		}
		return Adjustment{}, false
	}
	// A change inside a roll note's scope counts for the usages after
	// it; the gauge reads it for the note itself from the line's
	// _extracted.
	g.removed += removed
	g.added += added
	if m.kind != markUsage || g.removed == 0 && g.added == 0 {
		return Adjustment{}, false
	}
	return m.merged(g.removed, g.added, g.est.Name()), true
}

// merged is the line's _adjusted with a run's removed and added tokens of
// estimator est added.
func (m Mark) merged(removed, added int, est string) Adjustment {
	var old Adjustment
	if m.adj != nil {
		old = *m.adj
	}
	r, a := old.in(est, m.scale)
	return Adjustment{Removed: r + removed, Added: a + added, Scale: m.scale, Measured: m.measured, Estimator: est}
}

// Measuring reports whether the ledger still reads the estimates of the
// lines it is given: once the calibration is done, or an earlier run's
// _adjusted has given a worth of a token measured on as many growths as
// it would measure (which then stands), a line's role will do
// (LedgerLineOf with estimates false).
func (g *Ledger) Measuring() bool {
	return !g.cal.frozen() && !g.sparse && !(g.cal.seen > 0 && g.cal.seenMeasured >= calibrationPairs)
}

// Prime takes a line before the ones a run reads (a run that resumes past
// the lines an earlier run left final): only the calibration reads it.
func (g *Ledger) Prime(l LedgerLine) {
	if l.thread != threadUnknown && g.thread == threadUnknown {
		g.thread = l.thread
	}
	if l.thread == threadUnknown || l.thread == g.thread {
		g.cal.Add(l.Line, 0)
	}
}

// mark remembers a pi line, with the totals before it, within
// KeptLookback bytes.
func (g *Ledger) mark(l LedgerLine) {
	number := -1
	if l.Entry {
		number = g.entries
		g.entries++
	}
	g.kept = append(g.kept, keptMark{id: l.ID, number: number, n: l.Bytes, removed: g.removed, added: g.added})
	g.keptLen += l.Bytes
	for g.keptLen > KeptLookback && g.keptHead < len(g.kept)-1 {
		g.keptLen -= g.kept[g.keptHead].n
		g.kept[g.keptHead] = keptMark{}
		g.keptHead++
	}
	if g.keptHead > len(g.kept)/2 {
		n := copy(g.kept, g.kept[g.keptHead:])
		g.kept, g.keptHead = g.kept[:n], 0
	}
}

// keptBack is how many lines before the pi compaction c (the last line
// marked) its first kept entry is, or -1.
func (g *Ledger) keptBack(c Line) int {
	if c.KeptID == "" && c.KeptIndex <= 0 {
		return -1
	}
	for i := len(g.kept) - 2; i >= g.keptHead; i-- {
		m := g.kept[i]
		if c.KeptID != "" && m.id == c.KeptID || c.KeptID == "" && m.number == c.KeptIndex {
			return len(g.kept) - 1 - i
		}
	}
	return -1
}

// Worth is a whole number of provider tokens for n estimated ones.
func Worth(n int, scale float64) int { return int(math.Round(float64(n) * scale)) }

// Replacement is a value a filter replaces in a line: the node, and the
// text of what stands in its place where the model reads it (a
// placeholder, a trimmed head and tail with their note; "" for nothing).
type Replacement struct {
	Node int
	Text string
}

// share is what part of a line's estimate lies below a node.
type share struct {
	chars, tokens, images int
	counted               bool // the gauge reads something there
}

// worth is the share's tokens with est.
func (s share) worth(est Estimator) int {
	n := s.tokens + s.images*ImageTokens
	if _, text := est.(TextEstimator); !text {
		n += est.Tokens(s.chars)
	}
	return n
}

// shares is what the gauge counts of line t below each of nodes. It walks
// the parts the gauge counts without counting them, and counts only those
// below the nodes: a filter asks this of the values it moves, which are
// most of a long line but seldom all of it.
func shares(t *transcript.Tree, d transcript.Dialect, est Estimator, nodes []int) []share {
	each := make([]share, len(nodes))
	te, text := est.(TextEstimator)
	Contents(t, d, partsOnly{}, func(p Part) {
		at := t.Nodes[p.Node].Start
		for i, n := range nodes {
			if v := t.Nodes[n]; v.Start <= at && at < v.End {
				s := &each[i]
				s.counted = true
				switch {
				case p.Image:
					s.images++
				case text:
					s.tokens += te.TextTokens(t.Str(p.Node))
				default:
					s.chars += t.StringChars(p.Node)
				}
				break
			}
		}
	})
	return each
}

// Shares is what each value at nodes puts in the context, as the gauge
// counts line t, and whether the gauge reads anything there (what stands
// in a value's place counts only then).
func Shares(t *transcript.Tree, d transcript.Dialect, est Estimator, nodes []int) (worth []int, counted []bool) {
	est = withDefaults(Options{Estimator: est}).Estimator
	each := shares(t, d, est, nodes)
	worth, counted = make([]int, len(nodes)), make([]bool, len(nodes))
	for i, s := range each {
		worth[i], counted[i] = s.worth(est), s.counted
	}
	return worth, counted
}

// Replaced counts what replacing values of the line t takes out of the
// context, as the gauge counts the line (Contents): for each replacement,
// what the value held less what stands in its place, and their sum. A
// value the gauge does not count (a copy of a tool result outside the
// message) takes nothing out, and what stands in its place adds nothing.
// Each is estimated on its own, so the sum may differ from the change in
// the line's estimate by the rounding of each (a token a value).
func Replaced(t *transcript.Tree, d transcript.Dialect, est Estimator, rs []Replacement) (net int, each []int) {
	est = withDefaults(Options{Estimator: est}).Estimator
	nodes := make([]int, len(rs))
	for i, r := range rs {
		nodes[i] = r.Node
	}
	parts := shares(t, d, est, nodes)
	each = make([]int, len(rs))
	for i, r := range rs {
		if !parts[i].counted {
			continue
		}
		put := share{chars: len([]rune(r.Text))}
		if te, ok := est.(TextEstimator); ok {
			put = share{tokens: te.TextTokens(r.Text)}
		}
		each[i] = parts[i].worth(est) - put.worth(est)
		net += each[i]
	}
	return net, each
}

// LedgerLineOf is what a Ledger needs of a parsed line of dialect d
// (Bytes aside, which the caller knows); without estimates, its role only
// (see Ledger.Measuring).
func LedgerLineOf(t *transcript.Tree, d transcript.Dialect, est Estimator, estimates bool) LedgerLine {
	if !estimates {
		return NewLedgerLine(lineRole(t, d), t, d)
	}
	return NewLedgerLine(Classify(t, d, est), t, d)
}

// NewLedgerLine is LedgerLineOf for a line already classified (acct).
func NewLedgerLine(acct Line, t *transcript.Tree, d transcript.Dialect) LedgerLine {
	l := LedgerLine{Line: acct, Entry: true, Bytes: len(t.Src) + 1}
	switch d.Threads() {
	case transcript.ParentTree:
		link := d.Link(t)
		l.ID, l.Parent = link.ID, link.Parent
	case transcript.ParentChains:
		l.thread = threads[d.Link(t).Thread]
	}
	return l
}

// UnparsedLedgerLine is what a Ledger needs of a line that did not parse
// (or is blank): pi still numbers it as an entry if it reads it.
func UnparsedLedgerLine(body []byte) LedgerLine {
	return LedgerLine{Entry: len(bytes.TrimSpace(body)) > 0 && transcript.JSONLossily(body), Bytes: len(body) + 1}
}
