// Package roll implements seed 004's rolling context window as a filter:
// when the context is nearly full, the oldest messages are evicted (to the
// blob store, not summarised) until it is back under a target, and a note
// in the runtime's own compaction shape says what went where.
package roll

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"sync"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/internal/par"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/hugemem"
	"github.com/bstools/bs/internal/spool"
)

// Options configure a roll.
type Options struct {
	Window  int     // context window; 0: from the transcript or the model table
	Trigger float64 // roll when utilization is at or above this
	Target  float64 // evict until utilization is at most this
	MinKeep int     // recent messages never evicted
	NoNote  bool    // write no note text (the note line still carries the accounting)
	Strict  bool    // every line is checked (no shortcut through the end of the file)
	Now     time.Time
	Format  transcript.Dialect
	Store   blobstore.Store
	Log     *slog.Logger
	Session string
	// agent is the agent whose own file the transcript is, as its lines
	// say (a Claude Code subagent's; scan learns it): the note names it
	// too, or the rolled file would read as its parent session's.
	agent     string
	Estimator gauge.Estimator
	OnBadLine func(*transcript.BadLineError) error
	Index     Index // receives the evicted entries, if not nil
}

// Index is the search index's side of a roll. It is given each evicted
// entry as soon as the chunk that holds it is stored; when the roll then
// fails, Discard takes back every entry it was given, since they are all
// still in place.
type Index interface {
	// WantsText reports whether Add needs the Text of the entries stored
	// in blob d. An index that can read the chunk back from the store
	// later takes each entry's place in it instead (Evicted.At and Len),
	// and the roll spares itself the text. It is called on several
	// goroutines at once.
	WantsText(ctx context.Context, d blobstore.Digest) bool
	Add(Evicted)
	Discard()
}

// Defaults returns the contract's defaults.
func Defaults() Options {
	return Options{Trigger: 0.9, Target: 0.8, MinKeep: 10}
}

// Evicted describes one evicted entry.
type Evicted struct {
	EntryID, Time, Tool, Blob string
	// The entry's line, without its line feed, is bytes [At, At+Len) of
	// the blob.
	At  int64
	Len int
	// The entry's text, for search, as a JSON string (EntryTextJSON), or
	// nil when the index does not want it (Index.WantsText).
	Text []byte
}

// Stats summarise a roll.
type Stats struct {
	Rolled        bool
	TokensBefore  int
	TokensAfter   int
	Window        int
	Messages      int // messages evicted
	Lines         int // lines evicted
	Bytes         int64
	EvictedTokens int
	Short         bool // the target was out of reach: everything evictable went
}

// line is what roll remembers of each input line: never its body.
type line struct {
	off    int64
	n      int
	num    int
	acct   gauge.Line
	msg    bool // a conversation message
	join   bool // belongs with the message before it (a tool result, a continued response)
	noise  bool // neither in context nor needed to load the file: goes with its unit
	id     string
	parent string // the id of the entry before it in the runtime's tree (pi's parentId, Claude Code's parentUuid)
	time   string
	tool   string
	parsed bool // valid JSON: an entry the runtime reads
	entry  bool // an entry pi numbers: valid JSON, or JSON once invalid UTF-8 is replaced (transcript.JSONLossily)
	blank  bool // white space only
	branch bool // on a branch the runtime's path from the last entry leaves: not in context

	// Claude Code: the API message id of an assistant line (one response
	// spans several lines) and whether the line is a sidechain's.
	msgID     string
	sidechain bool
	bsNote    bool // a line bs roll wrote: never evicted
	user      bool // a user turn: it closes any call left without a result
	spends    bool // it carries what cost reports read (transcript.Spends)

	issued, answered []string // tool call ids the line makes and answers

	// On a compaction: where the context it keeps begins (OpenClaw/pi keep
	// the entries from firstKeptEntryId, or firstKeptEntryIndex in v1).
	keptID    string
	keptIndex int
}

// Run rolls the transcript from r to w.
func Run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Estimator == nil {
		opt.Estimator = gauge.CharsPer4{}
	}
	if opt.OnBadLine == nil {
		opt.OnBadLine = func(*transcript.BadLineError) error { return nil }
	}
	sp, err := spool.Open(r, "bs-roll-*")
	if err != nil {
		return Stats{}, err
	}
	defer sp.Close()
	// Most runs find the context under the trigger: the gauge reads that
	// from the end of the file in milliseconds, and the input goes through.
	gopt := gauge.Options{Window: opt.Window, Estimator: opt.Estimator, Format: opt.Format}
	if res, err := gauge.MeasureFile(sp.File(), gopt); err == nil && res.Ratio < opt.Trigger && !opt.Strict {
		return Stats{TokensBefore: res.Tokens, TokensAfter: res.Tokens, Window: res.Window}, passThrough(ctx, name, w, sp, opt)
	}
	lines, d, state, who, err := scan(ctx, name, sp, opt)
	if err != nil {
		return Stats{}, err
	}
	if who.session != "" {
		opt.Session = who.session
	}
	opt.agent = who.agent
	branched := 0
	switch d.Threads() {
	case transcript.ParentTree:
		branched = markBranches(lines)
	case transcript.ParentChains:
		branched = markChainBranches(lines)
	}
	if branched > 0 {
		// The context is the path, not the file: count it alone.
		state = &gauge.State{}
		for _, l := range lines {
			if l.branch {
				// Off the path; a roll's note there still ends the lines
				// before it (gauge.Line.RollStart).
				l.acct = gauge.Line{RollEnd: l.acct.RollEnd, Marker: l.acct.Marker}
			}
			state.Add(l.acct)
		}
	}
	res := withKept(state.Result(gopt), lines)
	st := Stats{TokensBefore: res.Tokens, TokensAfter: res.Tokens, Window: res.Window}
	if res.Ratio < opt.Trigger {
		return st, sp.CopyTo(w)
	}
	// What one estimated token of the evicted messages is worth to the
	// provider, as the transcript's own usage says (gauge.Calibrator).
	cal := gauge.NewCalibrator(opt.Estimator)
	for _, l := range lines {
		cal.Add(l.acct, l.num)
	}
	cal.Flush()
	plan, ok := planEviction(lines, d, res, opt, needsNewline(sp), cal.Scale())
	if !ok {
		args := []any{"tokens", res.Tokens, "window", res.Window}
		if branched > 0 {
			// Only the path from the last entry counts: name what else
			// there is, in case the tree is not what the user thinks.
			args = append(args, "lines_off_the_path", branched)
		}
		opt.Log.Warn("context is over the trigger but nothing can be evicted: every message is among the last --min-keep", args...)
		return st, sp.CopyTo(w)
	}
	return write(ctx, w, sp, lines, d, plan, res, opt, st)
}

// passThrough copies the input to w unchanged while its lines are parsed
// beside the copy, so that a bad line still gets its warning: the gauge
// that decided to leave the input alone read only the end of it.
func passThrough(ctx context.Context, name string, w io.Writer, sp *spool.Spool, opt Options) error {
	checked := make(chan error, 1)
	go func() {
		src := transcript.NewSource(name, sp.Section(0, sp.Size()), opt.Format, opt.OnBadLine)
		src.Parallel(runtime.GOMAXPROCS(0))
		defer src.Close()
		for ctx.Err() == nil {
			if _, _, err := src.NextView(); err != nil {
				if err == io.EOF {
					err = nil
				}
				checked <- err
				return
			}
		}
		checked <- ctx.Err()
	}()
	err := sp.CopyTo(w)
	return errors.Join(err, <-checked)
}

// stamps are what a transcript's lines say of whose they are: the session
// (Entry.SessionID) and, in a subagent's own file, the agent (Tail.Agent).
type stamps struct{ session, agent string }

// scan indexes every line: offsets, accounting and what eviction needs.
func scan(ctx context.Context, name string, sp *spool.Spool, opt Options) ([]line, transcript.Dialect, *gauge.State, stamps, error) {
	src := transcript.NewSource(name, sp.Section(0, sp.Size()), opt.Format, opt.OnBadLine)
	src.Parallel(runtime.GOMAXPROCS(0))
	// Estimating a line's tokens is as much work as parsing it, and
	// viewing it not far from that: both are done beside the parsing, on
	// every core, ahead of the loop below, which every later line waits
	// on.
	src.Annotate(func(t *transcript.Tree, d transcript.Dialect) any { return lookAt(t, d, opt.Estimator) })
	defer src.Close()
	var lines []line
	var state gauge.State
	var off int64
	lastMsgID := ""
	var who stamps
	var tools transcript.ToolNamer // the tools of results whose lines do not name them
	for {
		if err := ctx.Err(); err != nil {
			return nil, nil, nil, stamps{}, err
		}
		l, t, err := src.NextView() // nothing of the line is kept but its place
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, nil, stamps{}, err
		}
		li := line{off: off, n: l.Len(), num: l.Num}
		off += int64(l.Len())
		if t == nil {
			li.blank = len(bytes.TrimSpace(l.Body)) == 0
			li.entry = !li.blank && transcript.JSONLossily(l.Body)
			state.Add(gauge.Line{}) // still a line of a roll note's scope
		} else {
			d := src.Dialect()
			lk := src.Annotation().(*look)
			lk.line.off, lk.line.n, lk.line.num = li.off, li.n, li.num
			li = lk.line
			state.Add(li.acct)
			e := &lk.e
			if who.session == "" {
				who.session = e.SessionID
			}
			if who.agent == "" && len(lines) < transcript.DetectLines {
				// A subagent's file names its agent on every line.
				var tail transcript.Tail
				d.Follow(t, &tail)
				who.agent = tail.Agent
			}
			tools.Name(e)
			li.tool = transcript.EntryTool(e)
			unit := d.Unit(t, lastMsgID)
			li.join, li.noise, lastMsgID = unit.Join, unit.Noise, unit.MsgID
			if lk.spent {
				li.noise = true // a spend record goes with its unit, and stands again before the note
			}
			switch {
			case li.acct.Role == gauge.Compaction && d.Threads() == transcript.ParentTree:
				// An earlier compaction inside the range goes with it:
				// a copy on the path would start pi's context at a
				// kept entry it names that is gone, and cut off
				// everything before it, this roll's marker among them.
				li.noise = true
			case unit.Message:
				li.msg = true // the runtime gives it to the model as a message
			}
			li.user = li.msg && !li.join && e.Role == "user" && len(li.answered) == 0
		}
		lines = append(lines, li)
	}
	return lines, src.Dialect(), &state, who, nil
}

// look is what the scan reads of a parsed line that needs nothing but the
// line, made on every core ahead of it (lookAt): the line as far as the
// line alone says, and the entry's view for what depends on the lines
// before (its tool, its unit).
type look struct {
	line  line
	e     transcript.Entry
	spent bool // a spend record
}

// lookAt reads line t of dialect d for the scan.
func lookAt(t *transcript.Tree, d transcript.Dialect, est gauge.Estimator) *look {
	lk := &look{e: transcript.View(t, d)}
	li := &lk.line
	li.parsed, li.entry = true, true
	li.acct = gauge.Classify(t, d, est)
	e := &lk.e
	li.msg, li.id, li.time = Evictable(t, *e), e.ID, e.Time
	link := d.Link(t)
	if link.Header && d.Threads() == transcript.ParentTree {
		li.id = "" // the session's id, not an entry's: no entry's parent
	}
	turn := d.Turn(t, e)
	li.issued, li.answered = turn.Issued, turn.Answered
	switch d.Threads() {
	case transcript.ParentChains:
		// What the chain needs, read as the gauge reads it, its calls
		// included.
		n := transcript.ChainNodeOf(t, d)
		li.parent, li.msgID, li.sidechain = n.Parent, n.MsgID, n.Sidechain
		li.issued, li.answered = n.Issued, n.Answered
	case transcript.ParentTree:
		li.parent = link.Parent
	}
	li.bsNote = isNote(t)
	li.spends = transcript.Spends(t, d)
	lk.spent = li.spends && t.Get(0, transcript.SpentField) >= 0
	li.keptIndex = -1
	if li.acct.Role == gauge.Compaction && d.Threads() == transcript.ParentTree {
		// The entry it keeps from, as the pruner reads it.
		pv := transcript.PruneView{KeptIndex: li.keptIndex}
		d.Prune(t, &pv)
		li.keptID, li.keptIndex = pv.KeptID, pv.KeptIndex
	}
	return lk
}

// Evictable reports whether a line is a conversation message, which roll
// evicts (and indexes) when it must. The runtime's instructions (a chat's
// system prompt, Codex's developer messages) are not: they stay, like a
// header. A note of an earlier roll is, whatever its role.
func Evictable(t *transcript.Tree, e transcript.Entry) bool {
	return e.Message && (isNote(t) || !e.Instructions)
}

// isNote reports whether a line is one bs roll wrote.
func isNote(t *transcript.Tree) bool {
	return t.Get(0, transcript.RolledField) >= 0 || t.Get(0, transcript.EvictedField) >= 0
}

// plan is the range to evict: lines [from, to), of which keep are copied
// after the note because the runtime needs them to load the file.
type plan struct {
	from, to    int
	keep        []int
	messages    int
	tokensAfter int
	evictedEst  int     // in provider tokens: the estimate times scale
	scale       float64 // what an estimated token is worth (gauge.Calibrator)
	note        string
	short       bool
}

// planEviction chooses the fewest oldest units whose eviction brings the
// context to the target, never touching the last MinKeep messages or
// anything before the latest compaction.
func planEviction(lines []line, d transcript.Dialect, res gauge.Result, opt Options, lastOpen bool, scale float64) (plan, bool) {
	start := 0 // the in-context part begins after the latest compaction
	for i, l := range lines {
		if l.acct.Role != gauge.Compaction || l.branch {
			continue
		}
		start = i + 1
		// An OpenClaw/pi compaction keeps the entries from its first kept
		// entry on, which stand before it (pi, and bs roll, append it last).
		if j := keptStart(lines, i); j < i {
			start = j
		}
	}
	// The last MinKeep messages stay, and so does the unit the first of
	// them belongs to.
	end, seen := len(lines), 0
	for i := len(lines) - 1; i >= start && seen < opt.MinKeep; i-- {
		if lines[i].inContext() {
			seen++
			end = i
		}
	}
	if seen < opt.MinKeep {
		return plan{}, false
	}
	if lastOpen && end > len(lines)-1 {
		end = len(lines) - 1 // an unfinished last line (an agent writing it) stays
	}
	// Units: a message starts one unless it joins the message before (a
	// tool result, a response split over lines) or a tool call made earlier
	// in the unit still waits for its result (parallel calls). A user turn
	// closes calls that never got a result.
	var units []int // start line of each unit
	open := map[string]bool{}
	for i := start; i < len(lines); i++ {
		l := lines[i]
		if !l.inContext() {
			continue
		}
		if l.user {
			clear(open)
		}
		if !l.join && !l.bsNote && len(open) == 0 {
			units = append(units, i)
		}
		for _, id := range l.issued {
			open[id] = true
		}
		for _, id := range l.answered {
			delete(open, id)
		}
	}
	// The kept part starts at a unit boundary at or before end.
	for len(units) > 0 && units[len(units)-1] > end {
		units = units[:len(units)-1]
	}
	if len(units) > 0 && units[len(units)-1] < end && end < len(lines) {
		// end falls inside the last unit: keep that unit whole.
		end = units[len(units)-1]
	}
	for len(units) > 0 && units[len(units)-1] >= end {
		units = units[:len(units)-1]
	}
	if len(units) == 0 {
		return plan{}, false
	}
	// The context before the roll is the gauge's figure: the provider's own
	// count when there is one, which covers what the transcript does not
	// show (the system prompt, the tool schemas).
	before := res.Tokens
	target := int(opt.Target * float64(res.Window))
	var p plan
	p.from = units[0]
	evicted, messages := 0, 0
	var evictedSpan span // the evicted range, for the note
	for k := 1; k <= len(units); k++ {
		to := end
		if k < len(units) {
			to = units[k]
		}
		for i := units[k-1]; i < to; i++ {
			if kept(lines[i]) {
				continue // copied after the note: still in context
			}
			evicted += inContextEstimate(lines[i])
			if lines[i].inContext() {
				messages++
				evictedSpan.add(lines[i])
			}
		}
		p.to, p.messages, p.evictedEst, p.scale = to, messages, gauge.Worth(evicted, scale), scale
		first, last := evictedSpan.ends()
		p.note = noteText(p, first, last, opt)
		p.tokensAfter = gauge.TextTokens(opt.Estimator, p.note) + max(before-p.evictedEst, 0)
		if p.tokensAfter <= target {
			break
		}
	}
	if p.tokensAfter > target {
		p.short = true
		opt.Log.Warn("evicting every message before the last --min-keep still leaves the context above the target", "tokens_after", p.tokensAfter, "target", target)
	}
	for i := p.from; i < p.to; i++ {
		if kept(lines[i]) {
			p.keep = append(p.keep, i)
		}
	}
	return p, true
}

// entryLine is the line of pi's entry k (-1 if none): a v1 compaction's
// firstKeptEntryIndex numbers the lines pi parses from 0, the header
// first, and a blank or bad line gets no number.
func entryLine(lines []line, k int) int {
	if k < 0 {
		return -1
	}
	for j, l := range lines {
		if l.entry {
			if k == 0 {
				return j
			}
			k--
		}
	}
	return -1
}

// entries counts the lines among lines that pi reads as entries.
func entries(lines []line) int {
	n := 0
	for _, l := range lines {
		if l.entry {
			n++
		}
	}
	return n
}

// kept reports whether a line of the evicted range stays, copied after the
// note: it is not a conversation message (the runtime needs it to load
// the file: a header, a model or settings change), not noise that goes
// with its unit, and not on a branch the context has left (a settings
// change there does not apply).
func kept(l line) bool { return !l.msg && !l.noise && !l.branch }

// inContext reports whether a line is a conversation message in the
// context: a message on a branch the user went back from is not.
func (l line) inContext() bool { return l.msg && !l.branch }

// inContextEstimate is a line's estimated share of the context.
func inContextEstimate(l line) int {
	if l.branch {
		return 0
	}
	if l.acct.Role == gauge.Content || l.acct.Role == gauge.Usage {
		return l.acct.Estimate
	}
	return 0
}

// withKept adds to a reading made line by line (gauge.State) what the
// entries the latest pi compaction keeps from before itself put in
// context, as the gauge's Measure and MeasureFile count them; a reading
// from a later usage covers them already.
func withKept(res gauge.Result, lines []line) gauge.Result {
	c := latestCompaction(lines)
	if res.Source == "usage" || c < 0 || lines[c].bsNote {
		return res
	}
	start := keptStart(lines, c)
	if start == c {
		return res
	}
	kept, bytes := 0, 0
	for i := c - 1; i >= start; i-- {
		if !lines[i].blank { // the gauge's lookback counts no blank line
			bytes += lines[i].n
		}
		if bytes > gauge.KeptLookback {
			return res // further back than the gauge looks: it counts none
		}
		kept += inContextEstimate(lines[i])
	}
	res.Tokens += kept
	res.EstimatedTokens += kept
	res.Ratio = float64(res.Tokens) / float64(res.Window)
	return res
}

// keptStart is the line of the first entry the compaction at line c keeps
// from before itself (an OpenClaw/pi compaction), or c.
func keptStart(lines []line, c int) int {
	l := lines[c]
	if l.keptID != "" {
		for j := c - 1; j >= 0; j-- {
			if lines[j].id == l.keptID {
				return j
			}
		}
	} else if j := entryLine(lines[:c], l.keptIndex); j >= 0 {
		return j
	}
	return c
}

// latestCompaction is the index of the last compaction line, or -1.
func latestCompaction(lines []line) int {
	for i := len(lines) - 1; i >= 0; i-- {
		if lines[i].acct.Role == gauge.Compaction && !lines[i].branch {
			return i
		}
	}
	return -1
}

// markBranches marks the lines of a pi tree (v2+) that are off the path
// from the last entry up its parentIds to the root, and counts them. pi builds the context from that path alone: a user who
// went back to an earlier entry and went on from there left the entries
// after it on a branch, still in the file but out of the context. Lines
// without an id (the header, bad lines) are on no branch.
func markBranches(lines []line) int {
	at := map[string]int{}
	leaf := -1
	for i, l := range lines {
		if transcript.GivenID(l.id) {
			at[l.id] = i
			leaf = i
		}
	}
	if leaf < 0 {
		return 0
	}
	on := make([]bool, len(lines))
	for i := leaf; !on[i]; {
		on[i] = true
		j, ok := at[lines[i].parent]
		if !ok {
			break
		}
		i = j
	}
	return markOff(lines, on)
}

// markChainBranches marks the lines of a session threaded by ParentChains
// that are out of the context its runtime loads (transcript.ChainContext:
// off the chain from the last message, which a rewind leaves, or a
// subagent's), and counts them.
func markChainBranches(lines []line) int {
	on := transcript.ChainContext(chainNodes(lines))
	if on == nil {
		return 0
	}
	return markOff(lines, on)
}

// chainLeaf is the line the chain starts from, and whether the file is a
// main session's (transcript.ChainLeaf).
func chainLeaf(lines []line) (leaf int, main bool) {
	return transcript.ChainLeaf(chainNodes(lines))
}

// chainNodes are the lines as transcript.ChainContext reads them.
func chainNodes(lines []line) []transcript.ChainNode {
	nodes := make([]transcript.ChainNode, len(lines))
	for i, l := range lines {
		nodes[i] = transcript.ChainNode{ID: l.id, Parent: l.parent, MsgID: l.msgID, Sidechain: l.sidechain, Ours: l.bsNote, Issued: l.issued, Answered: l.answered}
	}
	return nodes
}

// markOff marks every line with an id that is not on (the path) as on a
// branch, and counts them.
func markOff(lines []line, on []bool) int {
	n := 0
	for i := range lines {
		if transcript.GivenID(lines[i].id) && !on[i] {
			lines[i].branch = true
			n++
		}
	}
	return n
}

// noteText is the eviction note of seed 004, with how to get it back:
// through search when the evicted entries go to the index, else by
// restoring them (seed 004: rolling without recall falls back, and says
// so).
func noteText(p plan, first, last string, opt Options) string {
	if opt.NoNote {
		return ""
	}
	where := "Full transcript searchable via bs search."
	if opt.Index == nil {
		where = "Full transcript kept in the bs store, not indexed for search."
	}
	return fmt.Sprintf("[Context rolled: %d messages evicted (%d tokens). %s Evicted range: %s to %s] Restore with: bs restore --all",
		p.messages, p.evictedEst, where, first, last)
}

// write emits the rolled transcript: the lines before the range, the note
// (holding the range's blob), copies of the kept lines of the range, and
// the rest; for OpenClaw/pi the compaction entry goes last, as pi writes it.
func write(ctx context.Context, w io.Writer, sp *spool.Spool, lines []line, d transcript.Dialect, p plan, res gauge.Result, opt Options, st Stats) (Stats, error) {
	from, to := lines[p.from].off, lines[p.to-1].off+int64(lines[p.to-1].n)
	// The range goes to the store in chunks of whole lines, compressed and
	// written on every core; memory stays bounded by a few chunks (or as
	// many of the longest line).
	var chunks [][2]int // the lines each blob holds
	for i := p.from; i < p.to; {
		j, size := i, int64(0)
		for j < p.to && (j == i || size+int64(lines[j].n) <= chunkSize) {
			size += int64(lines[j].n)
			j++
		}
		chunks = append(chunks, [2]int{i, j})
		i = j
	}
	readChunk := func(c int) (off int64, chunk []byte, err error) {
		first, last := lines[chunks[c][0]], lines[chunks[c][1]-1]
		n := int(last.off + int64(last.n) - first.off)
		if n <= chunkSize {
			chunk = (*chunkBufs.Get().(*[]byte))[:n]
		} else {
			chunk = hugemem.Make(n, n)
		}
		_, err = sp.ReadAt(chunk, first.off)
		return first.off, chunk, err
	}
	workers := runtime.GOMAXPROCS(0)
	batch, _ := opt.Store.(blobstore.Batcher)
	digests := make([]string, len(chunks))
	type stored struct {
		digest string
		rows   []Evicted
		spent  [][]byte // the chunk's spend records (note.spendRecords)
	}
	n := newNote(d, lines, p, opt, res)
	parent := n.spendParent()
	var spent [][]byte
	err := par.InOrder(ctx, len(chunks), workers, func(c int) (stored, error) {
		off, chunk, err := readChunk(c)
		// Nothing the worker returns holds on to the chunk (the store
		// has compressed it, or relied on its copy, when PutPending
		// returns), so its buffer serves the next.
		defer func() {
			if cap(chunk) == chunkSize {
				chunkBufs.Put(&chunk)
			}
		}()
		if err != nil {
			return stored{}, err
		}
		spent := n.spendRecords(chunk, off, chunks[c][0], chunks[c][1], parent)
		var d blobstore.Digest
		if batch != nil {
			d = blobstore.Sum(chunk)
			err = batch.PutPending(ctx, d, chunk)
		} else {
			d, err = opt.Store.Put(ctx, chunk)
		}
		if err != nil || opt.Index == nil {
			return stored{digest: d.String(), spent: spent}, err
		}
		// The rows' text is made here, on every core, while the chunk is
		// at hand.
		withText := opt.Index.WantsText(ctx, d)
		return stored{d.String(), evictedRows(lines[chunks[c][0]:chunks[c][1]], chunk, off, d.String(), withText), spent}, nil
	}, func(c int, s stored) error {
		digests[c] = s.digest
		spent = append(spent, s.spent...)
		for _, r := range s.rows {
			opt.Index.Add(r)
		}
		return nil
	})
	if err == nil && batch != nil {
		err = batch.Commit(ctx) // one sync for every chunk
	}
	if err != nil {
		// Nothing is written yet: pass the input through unchanged, and
		// leave no rows for entries still in place.
		if opt.Index != nil {
			opt.Index.Discard()
		}
		return st, errors.Join(fmt.Errorf("storing the evicted range: %w", err), sp.CopyTo(w))
	}
	list, _ := json.Marshal(digests)
	// skip counts the lines after the marker that restore --all drops: the
	// kept copies, and for Claude Code the summary line.
	n.spent = len(spent)
	var linked [][]byte // for a pi tree: the kept copies, then a bridge
	if n.tree != nil && n.v3 {
		if linked, err = n.relink(sp); err != nil {
			return st, errors.Join(err, sp.CopyTo(w))
		}
	}
	skip := len(p.keep)
	if linked != nil {
		skip = len(linked)
	}
	// A note of several lines (Claude Code's boundary and summary) has
	// restore --all drop those after its first too.
	evictedAfter := func(after int) string {
		return fmt.Sprintf(`{"blobs":%s,"bytes":%d,"skip":%d}`, list, to-from, skip+after)
	}
	evicted := evictedAfter(0)
	afterNote := len(p.keep) + len(lines) - p.to
	notes := n.notes(evictedAfter, p.tokensAfter, afterNote)
	bw := newErrWriter(w)
	bw.copy(sp.Section(0, from))
	// The spend records stand right before the marker: restore --all
	// drops them with the marker it puts back, and keeps them with a
	// marker it cannot.
	bw.write(spent...)
	if notes == nil { // pi: a marker in place, a compaction appended last
		bw.write(n.marker(evicted))
		if linked != nil {
			bw.write(linked...)
		} else {
			for _, i := range p.keep {
				bw.copy(sp.Section(lines[i].off, int64(lines[i].n)))
			}
		}
		last, open := lines[len(lines)-1], needsNewline(sp)
		switch {
		case open && !last.parsed:
			// The last line is unfinished (an agent may be writing it):
			// the note goes before it, never glued to it.
			// Its usage, if any, predates the roll: the note's scope
			// covers it (its text is in tokensAfter already).
			bw.copy(sp.Section(to, last.off-to))
			bw.write(n.compaction(p.tokensAfter, 1, false))
			bw.copy(sp.Section(last.off, int64(last.n)))
		case open:
			// A whole entry without its line feed: the compaction must
			// come after it, or pi takes that entry for the leaf and
			// never sees the compaction. It gets a line feed, which the
			// compaction records for restore to take away.
			bw.copy(sp.Section(to, sp.Size()-to))
			bw.write([]byte("\n"), n.compaction(p.tokensAfter, 0, true))
		default:
			bw.copy(sp.Section(to, sp.Size()-to))
			bw.write(n.compaction(p.tokensAfter, 0, false))
		}
	} else {
		bw.write(notes...)
		for _, i := range p.keep {
			bw.copy(sp.Section(lines[i].off, int64(lines[i].n)))
		}
		bw.copy(sp.Section(to, sp.Size()-to))
	}
	st.Rolled = true
	st.TokensAfter = p.tokensAfter
	st.Messages = p.messages
	st.Lines = p.to - p.from - len(p.keep)
	st.Bytes = to - from
	st.EvictedTokens = p.evictedEst
	st.Short = p.short
	return st, bw.flush()
}

// evictedRows are the index rows of the messages among lines, which the
// chunk stored under digest holds from offset off; with their text when
// withText is set.
func evictedRows(lines []line, chunk []byte, off int64, digest string, withText bool) []Evicted {
	var rows []Evicted
	for _, l := range lines {
		if !l.msg {
			continue
		}
		at := l.off - off
		body := bytes.TrimSuffix(chunk[at:at+int64(l.n)], []byte("\n"))
		id := l.id
		if id == "" {
			id = transcript.DeriveID(body) // rows need distinct keys
		}
		e := Evicted{EntryID: id, Time: l.time, Tool: l.tool, Blob: digest, At: at, Len: len(body)}
		if withText {
			e.Text = EntryTextJSON(body)
		}
		rows = append(rows, e)
	}
	return rows
}

// chunkSize is the most bytes of evicted lines one blob holds (a single
// longer line is a blob of its own).
const chunkSize = 1 << 20

// chunkBufs are the buffers of chunks of at most chunkSize bytes: a
// forced roll of the 256 MiB bench session allocated 256 of them, each
// zeroed and faulted in before the range was read into it.
var chunkBufs = sync.Pool{New: func() any {
	b := make([]byte, chunkSize)
	return &b
}}

// needsNewline reports whether the input's last line lacks its line feed,
// so a line appended after it must first end it.
func needsNewline(sp *spool.Spool) bool {
	if sp.Size() == 0 {
		return false
	}
	b := make([]byte, 1)
	sp.ReadAt(b, sp.Size()-1)
	return b[0] != '\n'
}

// errWriter writes the rolled transcript through a buffer, keeping the
// first error: the spend records and kept lines are many short writes
// (23,000 write calls on the 256 MiB bench session before it buffered).
type errWriter struct {
	w   *bufio.Writer
	err error
}

func newErrWriter(w io.Writer) *errWriter {
	return &errWriter{w: bufio.NewWriterSize(w, 256<<10)}
}

// flush writes out what is buffered, even after an error, so that a run
// that fails gives what it wrote before as it did unbuffered; it returns
// the first error.
func (e *errWriter) flush() error {
	if err := e.w.Flush(); e.err == nil {
		e.err = err
	}
	return e.err
}

func (e *errWriter) write(bs ...[]byte) {
	for _, b := range bs {
		if e.err == nil {
			_, e.err = e.w.Write(b)
		}
	}
}

func (e *errWriter) copy(r io.Reader) {
	if e.err == nil {
		_, e.err = io.Copy(e.w, r)
	}
}
