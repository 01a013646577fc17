package roll

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/spool"
)

// note builds the lines bs roll writes, in each dialect's own compaction
// shape so the runtime still loads the file.
type note struct {
	d         transcript.Dialect
	tree      transcript.RollTree // how the dialect spells the lines, when RollNote writes none (pi's)
	text      string
	now       string
	seed      string // makes the ids this roll writes unique and stable
	tokens    int    // context before the roll
	lines     []line
	p         plan
	session   string
	agent     string // the agent whose own file it is (Options.agent)
	v3        bool   // OpenClaw/pi entries have ids (v2+)
	firstKept int    // the first kept message line
	estimator string
	// scopeExtracted is what the _extracted of the lines a note's scope
	// covers (the kept copies and the lines after the range) say bs took
	// out of them: the gauge counts a change since against the note.
	scopeExtracted int

	spent int // spend records written before the marker (spendRecords)

	// In a pi tree (v2+):
	evicted  map[string]bool // the ids of the entries the range takes
	bridgeID string          // the evicted entry the first kept message hangs from, which a bridge stands for
	markerAs string          // the id the marker takes, if not its own (keptFromRange)
}

func newNote(d transcript.Dialect, lines []line, p plan, opt Options, res gauge.Result) *note {
	n := &note{d: d, tree: d.RollTree(), text: p.note, now: opt.Now.UTC().Format(time.RFC3339Nano), tokens: res.Tokens, lines: lines, p: p, session: opt.Session, agent: opt.agent, estimator: opt.Estimator.Name()}
	n.seed = fmt.Sprintf("%d-%d-%s", p.from, p.to, n.now)
	for _, i := range p.keep {
		n.scopeExtracted += lines[i].acct.Extracted
	}
	for _, l := range lines[p.to:] {
		if !l.branch {
			n.scopeExtracted += l.acct.Extracted
		}
	}
	n.firstKept = p.to
	for n.firstKept < len(lines) && !lines[n.firstKept].inContext() {
		n.firstKept++
	}
	// v2+ sessions give every message an id; v1 sessions none.
	for _, l := range lines {
		if l.msg && transcript.GivenID(l.id) {
			n.v3 = true
			break
		}
	}
	if n.v3 && n.tree != nil {
		n.evicted = map[string]bool{}
		for i := p.from; i < p.to; i++ {
			if l := lines[i]; transcript.GivenID(l.id) && !kept(l) {
				n.evicted[l.id] = true
			}
		}
		n.bridgeID = n.evictedParent(n.firstKept, false)
		n.markerAs = n.keptFromRange()
	}
	return n
}

// keptFromRange is the id of an evicted entry that a compaction staying
// after the range keeps from: an earlier roll's, when this one evicts
// only part of what that one kept. A path through that compaction and not
// through this roll's (a user gone back to an entry between them) would
// find its first kept entry gone, and pi would drop every entry before
// the compaction. The marker takes that id: pi then keeps the entries
// from the marker on, its note first. "" when there is none, or when the
// first kept message hangs from that entry (its bridge takes the id).
func (n *note) keptFromRange() string {
	id := ""
	for _, l := range n.lines[n.p.to:] {
		if l.acct.Role == gauge.Compaction && n.evicted[l.keptID] && (id == "" || !l.branch) {
			id = l.keptID // the last on the path, else the last
		}
	}
	if id == n.bridgeID {
		return ""
	}
	return id
}

func (n *note) hash(salt string) []byte {
	h := sha256.Sum256([]byte(n.seed + salt))
	return h[:]
}

// shortID is an 8-hex id like pi's.
func (n *note) shortID(salt string) string { return hex.EncodeToString(n.hash(salt)[:4]) }

func q(s string) string { return string(transcript.AppendQuote(nil, s)) }

// rolled is the _rolled member of a note that carries the accounting,
// with the estimator the figure was made with, and for a note appended
// after a line feed roll added (newline), that. A pi tree's compaction
// names its marker (gauge.Line.RollEnd).
func (n *note) rolled(tokens, kept int, newline bool) string {
	added := ""
	if newline {
		added = fmt.Sprintf(`,%q:true`, transcript.RolledNewline)
	}
	if n.tree != nil && n.v3 {
		added += fmt.Sprintf(`,"marker":%s`, q(n.markerID()))
	}
	if n.tree == nil {
		// The note stands before the lines it counts: the gauge takes off
		// what bs takes out of them later by their _extracted.
		added += fmt.Sprintf(`,"kept_moved":%d`, n.scopeExtracted)
	}
	return fmt.Sprintf(`%q:{"by":%q,"tokens":%d,"kept_lines":%d,"estimator":%q,"scale":%s%s}`, transcript.RolledField, transcript.RolledBy, tokens, kept, n.estimator, strconv.FormatFloat(n.p.scale, 'f', -1, 64), added)
}

// rolledTag marks the other lines bs roll writes.
func rolledTag() string {
	return fmt.Sprintf(`%q:{"by":%q}`, transcript.RolledField, transcript.RolledBy)
}

// lastID is the id of the last line before i that has one and is on the
// context's path, or "".
func (n *note) lastID(i int) string {
	for i--; i >= 0; i-- {
		if l := n.lines[i]; transcript.GivenID(l.id) && !l.branch {
			return l.id
		}
	}
	return ""
}

// evictedParent is where the chain of parents from line start leaves the
// rolled file: the first evicted line it names, going up through the
// lines after the range, and through the kept copies too if throughKept
// (else a kept copy ends the walk: relink hangs the copies from the
// marker), or "" when the chain stays in the file.
func (n *note) evictedParent(start int, throughKept bool) string {
	if start < n.p.to || start >= len(n.lines) {
		return ""
	}
	at := map[string]int{} // ids of the range and of the lines after it
	for i := n.p.from; i < len(n.lines); i++ {
		if id := n.lines[i].id; id != "" {
			at[id] = i
		}
	}
	x := n.lines[start].parent
	for steps := 0; x != "" && steps <= len(at); steps++ {
		i, ok := at[x]
		if !ok {
			return "" // before the range, or nowhere: nothing to mend
		}
		if i < n.p.to && !kept(n.lines[i]) {
			return x // evicted
		}
		if i < n.p.to && !throughKept {
			return "" // a kept copy, linked up to the marker
		}
		x = n.lines[i].parent // a line that stays: go on up
	}
	return ""
}

// marker is the line that stands where the evicted entries were
// (RollTree.Marker). In a tree (v2+) its note goes to the model where a
// path leaves the compaction: on the path through the compaction it comes
// before the first kept entry, out of the context, but a user who goes
// back to a kept entry leaves the compaction off the path, and then the
// note is what tells the model that messages are missing. A v1 file is
// no tree: its marker stays out of the context.
func (n *note) marker(evicted string) []byte {
	if !n.v3 {
		return n.tree.Marker(transcript.RollMarker{Text: n.text, Now: n.now, Evicted: evicted, Tag: rolledTag()})
	}
	// The tokens evicted: a user gone back to a kept entry has the usage
	// recorded there, which counts them; and the earlier rolls whose
	// notes are among the evicted lines, whose evictions usage after this
	// marker no longer counts (gauge.Line.RollStart).
	closes := []string{}
	for i := n.p.from; i < n.p.to; i++ {
		if l := n.lines[i]; !kept(l) && !l.branch && l.acct.RollEnd && l.acct.Marker != "" {
			closes = append(closes, l.acct.Marker)
		}
	}
	list, _ := json.Marshal(closes)
	tag := fmt.Sprintf(`%q:{"by":%q,"evicted_tokens":%d,"closes":%s}`, transcript.RolledField, transcript.RolledBy, n.p.evictedEst, list)
	return n.tree.Marker(transcript.RollMarker{Text: n.text, Now: n.now, Evicted: evicted, ID: n.markerID(), Parent: n.lastID(n.p.from), Tag: tag})
}

func (n *note) markerID() string {
	if n.markerAs != "" {
		return n.markerAs
	}
	return n.shortID("marker")
}

// evictedModel is the provider and model pi resumes with, when the line
// that names them last on the path before the first kept message (an
// answer, or a model_change) is evicted; else nil. pi takes the model
// from the last of those on the path, and without that line it would fall
// back to an older one, or to none.
func (n *note) evictedModel(sp *spool.Spool) ([]string, error) {
	// The last before the first kept message: a user who goes back to
	// that message, or to the bridge it hangs from, resumes with it too.
	last := -1
	for i, l := range n.lines[:n.firstKept] {
		if l.acct.Model != "" && !l.branch && l.parsed {
			last = i
		}
	}
	if last < n.p.from || last >= n.p.to || kept(n.lines[last]) {
		return nil, nil
	}
	_, t, err := n.read(sp, last)
	if t == nil {
		return nil, err
	}
	return []string{n.tree.Provider(t), n.lines[last].acct.Model}, nil
}

// relink returns the lines that follow the marker in a pi tree (v2+): the
// kept copies, each re-parented to the line before it (the first to the
// marker), so that the path pi walks from the last entry up to the root
// passes every one of them (a model or thinking level change among them
// would be lost otherwise); and, when the parents of the first kept
// message lead to an evicted entry, a bridge entry that takes that
// entry's id and hangs from the last copy. restore --all drops them all.
// When the model pi would resume with was named last by an evicted
// answer, a model_change naming it stands on the path after every other
// line that names a model: right after the last copy that names one, or
// first when none does. (The first kept message hangs from the last copy
// or from the bridge; either comes after that evicted answer, so neither
// names a model.)
func (n *note) relink(sp *spool.Spool) ([][]byte, error) {
	var out [][]byte
	prev := n.markerID()
	if c, id, err := n.startingCompaction(sp); err != nil {
		return nil, err
	} else if c != nil {
		out, prev = append(out, c), id
	}
	model, err := n.evictedModel(sp)
	if err != nil {
		return nil, err
	}
	modelChange := func() {
		id := n.shortID("model")
		out = append(out, n.tree.ModelChange(id, prev, n.now, model[0], model[1], rolledTag()))
		prev = id
	}
	lastNaming := -1 // in n.p.keep: the last copy that names a model
	for k, i := range n.p.keep {
		if n.lines[i].acct.Model != "" {
			lastNaming = k
		}
	}
	if model != nil && lastNaming < 0 {
		modelChange()
	}
	for k, i := range n.p.keep {
		body, t, err := n.read(sp, i)
		if err != nil {
			return nil, err
		}
		if t != nil && n.lines[i].id != "" {
			if b, ok := n.tree.Reparent(t, body, prev); ok {
				body, prev = b, n.lines[i].id
			}
		}
		out = append(out, body)
		if model != nil && k == lastNaming {
			modelChange()
		}
	}
	bridge := func(id, parent string) []byte { return n.tree.Bridge(id, parent, n.now, rolledTag()) }
	if n.bridgeID != "" {
		out = append(out, bridge(n.bridgeID, prev))
	}
	// A branch the user left may fork from inside the range and go on
	// after it: its first line names an evicted entry. That entry's id
	// gets a bridge too, hung from the marker, so the tree stays whole
	// (pi's /tree would show the branch as a root of its own).
	bridged := map[string]bool{n.bridgeID: true, n.markerID(): true} // a branch from the marker's id hangs from it
	for _, l := range n.lines[n.p.to:] {
		if n.evicted[l.parent] && !bridged[l.parent] {
			bridged[l.parent] = true
			out = append(out, bridge(l.parent, n.markerID()))
		}
	}
	if out == nil {
		out = [][]byte{} // not nil: the lines after the marker are these
	}
	return out, nil
}

// read reads line i of the input back, with its line feed, and parses it:
// a nil tree, and no error, for a line that is not JSON.
func (n *note) read(sp *spool.Spool, i int) ([]byte, *transcript.Tree, error) {
	l := n.lines[i]
	body := make([]byte, l.n)
	if _, err := sp.ReadAt(body, l.off); err != nil {
		return nil, nil, err
	}
	var p transcript.Parser
	t, err := p.Parse(bytes.TrimRight(body, "\r\n"))
	if err != nil {
		return body, nil, nil
	}
	return body, t, nil
}

// startingCompaction is, when the compaction pi starts the context from
// is evicted (the range begins at its first kept entry and runs past it),
// a compaction of roll's own with its summary that keeps from the marker
// on; else nil. On the path through roll's compaction it is out of the
// context. But a user who goes back to a kept entry leaves roll's
// compaction behind, and without this one pi would give the model every
// message that compaction had summarised away, before the marker.
func (n *note) startingCompaction(sp *spool.Spool) (line []byte, id string, err error) {
	c := latestCompaction(n.lines)
	if c < n.p.from || c >= n.p.to || n.lines[c].keptID == "" {
		return nil, "", nil
	}
	_, t, err := n.read(sp, c)
	if t == nil {
		return nil, "", err
	}
	summary, before := n.tree.Summary(t)
	if before == "" {
		before = "0" // it states none
	}
	id = n.shortID("compaction-kept")
	return n.tree.Compaction(transcript.RollCompaction{ID: id, Parent: n.markerID(), KeptID: n.markerID(), Now: n.now, Summary: summary, TokensBefore: before, Tag: rolledTag()}), id, nil
}

// compaction is the OpenClaw/pi compaction entry, appended as pi appends
// its own: the kept entries from firstKeptEntryId (v2+) or
// firstKeptEntryIndex (v1) on stay in context.
func (n *note) compaction(tokensAfter, scope int, newline bool) []byte {
	r := n.rolled(tokensAfter, scope, newline)
	if n.v3 {
		id := n.shortID("compaction")
		kept := id // nothing kept: the context starts at the compaction itself
		if n.firstKept < len(n.lines) && n.lines[n.firstKept].id != "" {
			kept = n.lines[n.firstKept].id
		}
		return n.tree.Compaction(transcript.RollCompaction{ID: id, Parent: n.lastID(len(n.lines)), KeptID: kept, Now: n.now, Summary: n.text, TokensBefore: strconv.Itoa(n.tokens), Tag: r})
	}
	// v1 numbers the entries pi parses from 0, the header first (see
	// entryLine); in the rolled file the marker and the kept copies stand
	// before the first kept entry.
	index := entries(n.lines[:n.p.from]) + 1 + n.spent + entries(n.lines[n.p.to:n.firstKept])
	for _, i := range n.p.keep {
		if n.lines[i].entry {
			index++
		}
	}
	return n.tree.Compaction(transcript.RollCompaction{KeptIndex: index, Now: n.now, Summary: n.text, TokensBefore: strconv.Itoa(n.tokens), Tag: r})
}

// notes are the lines that replace the evicted range in the runtimes
// whose compaction is a note in its place (nil for pi's); evicted gives
// the EvictedField value, and after counts the lines that follow them.
func (n *note) notes(evicted func(after int) string, tokensAfter, after int) [][]byte {
	return n.d.RollNote(transcript.RollNote{
		Text: n.text, Now: n.now, Tokens: n.tokens, Evicted: evicted,
		Rolled:  func(more int) string { return n.rolled(tokensAfter, after+more, false) },
		Tag:     rolledTag(),
		After:   after,
		Session: n.session,
		Agent:   n.agent,
		Hash:    n.hash,
		Chain: func() transcript.RollChain {
			// The chain from the first kept message is the one to mend
			// when the last message's does not enter the range (a
			// sidechain's line).
			leaf, main := chainLeaf(n.lines)
			x := n.evictedParent(leaf, true)
			if x == "" {
				x = n.evictedParent(n.firstKept, true)
			}
			return transcript.RollChain{Evicted: x, LastBefore: n.lastID(n.p.to), LastBeforeRange: n.lastID(n.p.from), Main: main}
		},
	})
}

// spendRecords are the spend records of the evicted lines [from, to),
// which chunk holds from input offset off: the records that carry what
// cost reports read (transcript.SpendRecord), in order, for the place
// right before the marker: in a pi tree they hang off the entry before
// the range (parent, spendParent), off the path; a v1 file numbers them
// before its first kept entry; before a Claude Code or Codex note they are
// before its compaction. The chunks' workers make them from the bytes
// they store, on every core, rather than the writer reading each spending
// line back and parsing it alone once the range is stored.
func (n *note) spendRecords(chunk []byte, off int64, from, to int, parent string) [][]byte {
	var out [][]byte
	tree := n.tree != nil && n.v3
	var p transcript.Parser
	for i := from; i < to; i++ {
		l := n.lines[i]
		if !l.spends {
			continue
		}
		body := chunk[l.off-off : l.off-off+int64(l.n)]
		t, err := p.Parse(bytes.TrimRight(body, "\r\n"))
		if err != nil {
			continue
		}
		// A kept line stays where it is, so it needs no record, except
		// one the records after it are priced by (Codex's turn_context):
		// the records come before the kept lines, so they carry their
		// own copy in order.
		if kept(l) && !n.d.Unit(t, "").SpendAgain {
			continue
		}
		id := ""
		if tree {
			id = n.shortID(fmt.Sprintf("spent-%d", i))
		}
		if r := transcript.SpendRecord(t, n.d, transcript.RolledBy, id, parent); r != nil {
			out = append(out, append(r, '\n'))
		}
	}
	return out
}

// spendParent is the parent of the spend records in a pi tree: the
// entry before the range.
func (n *note) spendParent() string {
	if n.tree != nil && n.v3 {
		return n.lastID(n.p.from)
	}
	return ""
}
