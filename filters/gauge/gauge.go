package gauge

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/spool"
)

// defaultWindow is the context window assumed when neither the flag, the
// transcript nor the model table says.
const defaultWindow = 200000

// Options configure a measurement.
type Options struct {
	Window    int // --context-window; 0: from the transcript or the model table
	Estimator Estimator
	Format    transcript.Dialect
	OnBadLine func(*transcript.BadLineError) error
	// Name is what MeasureFile calls the file in the errors of its bad
	// lines ("-" for standard input); its path when empty.
	Name string

	// What the lines before the input named, when the input is the rest
	// of a file (MeasureFile from a roll note): the model and window a
	// stream of the whole file would know by then.
	model  string
	window int
	// onPath, when not nil, holds the ids of the pi entries on the path
	// from the file's last entry to the root: an entry with another id is
	// on a branch the context has left, and counts for nothing.
	onPath map[string]bool
	// thread, for Claude Code, is which thread the file is: its first
	// message's. A subagent's lines (isSidechain), which older Claude
	// Code wrote into the main file, are not in the main thread's context.
	thread thread
	// runtime makes Measure estimate the context as the runtime would
	// load it, ignoring every usage and reading bs roll's lines in the
	// runtime's shape (runtimeLine): what tests check the gauge against.
	runtime bool
}

// classify is what a line contributes to this reading.
func (o *Options) classify(t *transcript.Tree, d transcript.Dialect) Line {
	if o.runtime {
		return runtimeLine(t, d, o.Estimator)
	}
	return classify(t, d, o.Estimator, false, nil)
}

type thread int8

const (
	threadUnknown thread = iota
	threadMain
	threadSidechain
)

// threads is the thread of a message line, as its dialect links it.
var threads = [...]thread{transcript.NoThread: threadUnknown, transcript.MainThread: threadMain, transcript.SideThread: threadSidechain}

// skip reports whether a parsed line is out of the context the reading
// follows: off a pi path, or a Claude Code line of another thread (which
// it learns from the first message line when it does not know it yet).
func (o *Options) skip(t *transcript.Tree, d transcript.Dialect) bool {
	if d.Threads() != transcript.ParentChains {
		return o.offPath(t, d)
	}
	link := d.Link(t)
	if o.onPath != nil {
		if id := link.ID; id != "" && !o.onPath[id] {
			return true
		}
	}
	th := threads[link.Thread]
	if o.thread == threadUnknown {
		o.thread = th
	}
	return th != threadUnknown && o.thread != threadUnknown && th != o.thread
}

// Result is the gauge's reading.
type Result struct {
	Tokens          int     `json:"tokens"`
	Window          int     `json:"window"`
	Ratio           float64 `json:"ratio"`
	Source          string  `json:"source"` // usage or estimate
	UsageTokens     int     `json:"usage_tokens"`
	EstimatedTokens int     `json:"estimated_tokens"`
	Model           string  `json:"model,omitempty"`
	Estimator       string  `json:"estimator"`
	// RollEstimator names the estimator of the bs roll note the figure
	// starts from, when it is not Estimator: that part of the estimate is
	// roll's, made with it.
	RollEstimator string `json:"roll_estimator,omitempty"`

	// Adjusted says what the figure takes off the provider's count, or
	// adds to it, for what bs changed in the context it covered since it
	// was recorded; nil when nothing.
	Adjusted *Adjusted `json:"adjusted,omitempty"`

	// OffPath says that a stream of a pi session (v2+) or a Claude Code
	// session was read in file order although the path from its last
	// entry leaves the line whose usage or compaction the reading started
	// from: the user went back to an earlier entry (Claude Code's rewind).
	// MeasureFile reads such a file along the path.
	OffPath bool `json:"-"`
}

// Adjusted is what bs took out of the context a usage counted, and put
// back into it, since the provider counted it: in provider tokens, from
// counts of Estimator worth Scale each (gauge.Adjustment).
type Adjusted struct {
	Removed   int     `json:"removed_tokens"`
	Added     int     `json:"added_tokens"`
	Estimator string  `json:"estimator"`
	Scale     float64 `json:"scale"`
}

// String renders the one-line gauge of seed 003 §6.4.
func (r Result) String() string {
	return fmt.Sprintf("[Context: %d%% | %s/%s tokens]", int(math.Round(100*r.Ratio)), kilo(r.Tokens), kilo(r.Window))
}

func kilo(n int) string {
	if n < 1000 {
		return fmt.Sprint(n)
	}
	return fmt.Sprintf("%dk", (n+500)/1000)
}

// State accumulates the accounting line by line. Roll uses it too, so that
// a gauge of roll's output reads what roll aimed for.
type State struct {
	HasUsage bool
	Usage    int // the last usage recorded (valid when HasUsage)
	Estimate int // estimated tokens since the last usage or compaction
	Model    string
	Window   int // a window the transcript states
	scope    int // lines still inside a roll note's accounting
	// The estimator of the roll note the estimate starts from, if any.
	noteEstimator string
	// The rolls whose marker came and whose note did not (Line.RollStart):
	// usage here is from before them.
	open []openRoll
	// adj is the last usage's _adjusted.
	adj Adjustment
	// note is the roll note the estimate starts from, when it says what
	// bs had taken out of the lines of its scope; scopeExtracted is what
	// those lines say now.
	note           *Line
	scopeExtracted int
}

// openRoll is a roll whose marker the reading passed: usage recorded
// before its note counts discount too many, the tokens it evicted less
// the marker's note.
type openRoll struct {
	marker   string
	discount int
}

// Add accounts for one line.
// A line that cannot be parsed (blank, bad) still counts as a line: add
// Line{} for it, so a roll note's scope covers the same lines roll counted.
func (s *State) Add(l Line) {
	switch {
	case l.RollStart:
		s.open = slices.DeleteFunc(s.open, func(r openRoll) bool { return slices.Contains(l.Closes, r.marker) })
		s.open = append(s.open, openRoll{l.Marker, l.Evicted - l.Estimate})
	case l.RollEnd && l.Marker == "":
		s.open = nil // a note of another dialect, or from before notes named their marker
	case l.RollEnd:
		s.open = slices.DeleteFunc(s.open, func(r openRoll) bool { return r.marker == l.Marker })
	case l.Role == Usage:
		// The provider counted the messages those rolls have since
		// evicted, as roll's own figure does (its note states the usage
		// less them).
		for _, r := range s.open {
			l.Tokens = max(l.Tokens-r.discount, 0)
		}
	}
	if s.scope > 0 && l.Role != Compaction {
		// Counted in the roll note already; its usage predates the roll.
		s.scope--
		s.scopeExtracted += l.Extracted
		if l.Model != "" {
			s.Model = l.Model
		}
		if l.Window > 0 {
			s.Window = l.Window
		}
		return
	}
	s.scope = l.Scope
	switch l.Role {
	case Usage:
		// What bs took out of the context the usage covered since the
		// provider counted it is no longer there.
		s.HasUsage, s.Usage, s.Estimate = true, max(l.Tokens-l.Adj.Net(), 0), 0
		s.noteEstimator = ""
		s.adj, s.note = l.Adj, nil
	case Compaction:
		// Usage recorded before a compaction is stale: estimate from here
		// (for pi, the line's Estimate includes the entries it keeps). A
		// roll note after the entries it kept (pi's) carries what bs took
		// out of them since (_adjusted), as a usage does.
		s.HasUsage, s.Usage, s.Estimate = false, 0, max(l.Estimate-l.Adj.Net(), 0)
		s.noteEstimator = l.Estimator
		s.adj, s.note, s.scopeExtracted = l.Adj, nil, 0
		if l.RollEnd && l.KeptExtracted >= 0 && l.NoteScale > 0 {
			s.note = &Line{KeptExtracted: l.KeptExtracted, NoteScale: l.NoteScale, Estimator: l.Estimator}
		}
	case Content:
		s.Estimate += l.Estimate
	}
	if l.Model != "" {
		s.Model = l.Model
	}
	if l.Window > 0 {
		s.Window = l.Window
	}
}

// rollNote reports whether t is a bs roll note, and its marker's id
// (Line.RollEnd), read without classifying it.
func rollNote(t *transcript.Tree) (note bool, marker string) {
	r := t.Get(0, transcript.RolledField)
	if r < 0 || t.Get(r, "tokens") < 0 {
		return false, ""
	}
	return true, t.Str(t.Get(r, "marker"))
}

// tokens is the current context size.
func (s *State) tokens() int { return max(s.Usage+s.Estimate-s.scopeChange(), 0) }

// scopeChange is what bs took out of the lines of the roll note's scope
// since roll counted them (negative: what it put back), in provider tokens.
func (s *State) scopeChange() int {
	if s.note == nil {
		return 0
	}
	return Worth(s.scopeExtracted-s.note.KeptExtracted, s.note.NoteScale)
}

// adjusted reports what the reading takes off for what bs changed since
// the figure it starts from was made, nil for nothing.
func (s *State) adjusted() *Adjusted {
	switch {
	case s.adj.Present() && (s.adj.Removed != 0 || s.adj.Added != 0):
		return &Adjusted{Removed: Worth(s.adj.Removed, s.adj.Scale), Added: Worth(s.adj.Added, s.adj.Scale), Estimator: s.adj.Estimator, Scale: s.adj.Scale}
	case s.note != nil && s.scopeExtracted != s.note.KeptExtracted:
		a := &Adjusted{Estimator: s.note.Estimator, Scale: s.note.NoteScale}
		if n := s.scopeChange(); n > 0 {
			a.Removed = n
		} else {
			a.Added = -n
		}
		return a
	}
	return nil
}

// Result turns the state into a reading.
func (s *State) Result(opt Options) Result {
	r := Result{Tokens: s.tokens(), UsageTokens: s.Usage, EstimatedTokens: s.Estimate - s.scopeChange(), Model: s.Model, Source: "estimate", Estimator: opt.Estimator.Name(), Adjusted: s.adjusted()}
	if s.noteEstimator != r.Estimator {
		r.RollEstimator = s.noteEstimator
	}
	if s.HasUsage {
		r.Source = "usage"
	}
	r.Window = opt.Window
	if r.Window == 0 {
		r.Window = s.Window
	}
	if r.Window == 0 {
		r.Window = WindowFor(s.Model)
	}
	r.Ratio = float64(r.Tokens) / float64(r.Window)
	return r
}

// Measure reads a whole transcript from r. If tee is not nil, every byte
// read is copied to it unchanged.
//
// Only lines that can reset the accounting (usage, compaction) or name a
// model are parsed as they stream by; the others are kept aside, in memory
// up to tailMemory and in a temp file beyond, and only those still after
// the last reset at the end are parsed and estimated. That is what makes a
// pipe fast: most bytes are tool output that a later usage makes moot.
func Measure(name string, r io.Reader, tee io.Writer, opt Options) (Result, error) {
	opt = withDefaults(opt)
	if tee != nil {
		// The Source reads on a goroutine of its own, which Close does
		// not wait for (it may be blocked on a live pipe): once Measure
		// has returned, the tee is the caller's again.
		g := &untilStopped{w: tee}
		defer g.stop()
		r = io.TeeReader(r, g)
	}
	// Most lines cannot hold a usage (mayReset), and go to the tail
	// unparsed. Telling them apart and parsing the others is most of the
	// work, and needs nothing but the line: the Source does it on every
	// core, ahead of the loop below, which takes the lines in order.
	src := transcript.NewSource(name, r, opt.Format, opt.OnBadLine)
	src.ParseIf(newResetMarks(transcript.RegisteredMarks()).mayReset)
	src.Parallel(runtime.GOMAXPROCS(0))
	defer src.Close()
	var (
		s    = State{Model: opt.model, Window: opt.window}
		p    transcript.Parser
		d    transcript.Dialect
		tail tailBuffer
		ring keptRing   // for a pi compaction to look back into
		tree streamTree // does the path from the last entry reach the reset?
	)
	defer tail.close()
	parse := func(line transcript.Line) (*transcript.Tree, error) {
		if len(bytes.TrimSpace(line.Body)) == 0 {
			return nil, nil
		}
		t, err := p.Parse(line.Body)
		if err != nil {
			return nil, opt.OnBadLine(&transcript.BadLineError{Name: name, Line: line.Num, Err: err})
		}
		return t, nil
	}
	// handle takes a line and its tree, which is nil for a blank or bad
	// line, or one the Source left unparsed (skipped).
	handle := func(line transcript.Line, t *transcript.Tree, skipped bool) error {
		valid := -1                               // for the ring: whether the line parses, if known
		if d.Threads() == transcript.ParentTree { // a compaction keeps entries before it
			defer func() { ring.add(line.Body, valid, d) }()
		}
		if skipped {
			// Inside a roll note's scope lines are counted one by one,
			// in order.
			if s.scope == 0 {
				return tail.add(line)
			}
			var err error
			if t, err = parse(line); err != nil {
				return err
			}
		}
		if t == nil {
			valid = 0
			s.Add(Line{}) // it is still a line of a roll note's scope
			return nil
		}
		valid = 1
		if opt.skip(t, d) {
			// A roll note off the path still ends what came before it.
			note, marker := rollNote(t)
			s.Add(Line{RollEnd: note, Marker: marker})
			return nil
		}
		l := opt.classify(t, d)
		if n, ok := treeNode(t, d); ok {
			tree.add(n, d, line.Num, l.Role == Usage || l.Role == Compaction)
		}
		if l.Role == Usage || l.Role == Compaction {
			tail.reset()
		}
		if l.Role == Compaction {
			l.Estimate += ring.kept(l, d, opt.Estimator)
		}
		s.Add(l)
		return nil
	}
	for {
		line, t, err := src.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			return Result{}, err
		}
		d = src.Dialect()
		if err := handle(line, t, src.Skipped()); err != nil {
			return Result{}, err
		}
	}
	if d == nil {
		d = transcript.Fallback() // no lines
	}
	// The lines after the last reset are in context: estimate them now.
	err := tail.each(func(line transcript.Line) error {
		t, err := parse(line)
		if err != nil || t == nil || opt.skip(t, d) {
			return err
		}
		if n, ok := treeNode(t, d); ok {
			tree.add(n, d, line.Num, false)
		}
		s.Add(opt.classify(t, d))
		return nil
	})
	if err != nil {
		return Result{}, err
	}
	res := s.Result(opt)
	res.OffPath = opt.onPath == nil && tree.offPath()
	return res, nil
}

// streamTree keeps the ids and parents of the entries after the line the
// reading starts from (the last usage or compaction), so that at the end
// of a stream the gauge can tell whether the path from the last entry runs
// back to that line: pi's tree of parentIds, Claude Code's chain of
// parentUuids, which a rewind leaves. Only the lines after it are kept.
type streamTree struct {
	resetID string
	// Claude Code writes one response over several lines, each with its
	// usage: the chain may pass through any of the response's lines.
	resetMsg string
	group    map[string]bool
	parents  map[string]string
	leaf     string
	leafNum  int // the lines after the reset that are not parsed on the way come last

	// Claude Code reads a chain it cannot follow (a parent not in the
	// file, a single line) as the whole main thread (transcript.ChainContext):
	// that leaves nothing. A parent before the reset is one the stream
	// parsed (a line that can reset the gauge, as the answers a rewind
	// goes back to): their ids, hashed; nil for pi.
	seed  maphash.Seed
	known map[uint64]bool
}

// treeNode is what streamTree takes of a line of dialect d, if anything.
func treeNode(t *transcript.Tree, d transcript.Dialect) (transcript.ChainNode, bool) {
	switch d.Threads() {
	case transcript.ParentTree:
		l := d.Link(t)
		return transcript.ChainNode{ID: l.ID, Parent: l.Parent}, true
	case transcript.ParentChains:
		return transcript.ChainNodeOf(t, d), true
	}
	return transcript.ChainNode{}, false
}

func (s *streamTree) add(n transcript.ChainNode, d transcript.Dialect, num int, reset bool) {
	if n.ID == "" {
		return
	}
	if d.Threads() == transcript.ParentChains {
		if s.known == nil {
			s.seed, s.known = maphash.MakeSeed(), map[uint64]bool{}
		}
		s.known[maphash.String(s.seed, n.ID)] = true
	}
	if reset {
		if n.MsgID == "" || n.MsgID != s.resetMsg {
			s.group = map[string]bool{}
		}
		s.resetID, s.resetMsg = n.ID, n.MsgID
		s.group[n.ID] = true
		clear(s.parents)
		if n.Ours {
			s.leaf = "" // a note of bs roll's: the chain starts after it
		}
	} else {
		if s.parents == nil {
			s.parents = map[string]string{}
		}
		s.parents[n.ID] = n.Parent
	}
	if num >= s.leafNum && !n.Ours {
		s.leaf, s.leafNum = n.ID, num
	}
}

// offPath reports whether the path from the last entry leaves the lines
// after the reset anywhere but at it.
func (s *streamTree) offPath() bool {
	if s.resetID == "" || s.leaf == "" {
		return false // read from the start, or nothing after the reset to leave it
	}
	x := s.leaf
	for steps := 0; steps <= len(s.parents); steps++ {
		if s.group[x] {
			return false
		}
		p, ok := s.parents[x]
		if !ok {
			if s.known == nil { // pi
				return true // before the reset, or the root: not through it
			}
			if x == "" {
				return steps > 1 // a root; the leaf alone is no chain
			}
			return s.known[maphash.String(s.seed, x)] // else not in the file
		}
		x = p
	}
	return s.known == nil // a loop: Claude Code's chain cannot be read
}

// A line can reset the gauge, or name the model or window, only through a
// member whose key is one of the keys of resetMarks or whose string value
// starts with one of its values (see classify; "model" is among the keys
// so that every line naming a model is taken in order, and the last one
// named wins). Both sit at a colon outside any string: a key right before
// it, a value right after it (JSON allows white space on either side).
// mayReset stops only at colons, which are several times rarer than
// quotes (40 quotes against 4 colons a KB in the benchmark session, 2 to
// 3 times rarer in the corpus), so most lines are passed over at the
// speed of bytes.IndexByte. A colon inside a string can only add a false
// positive, which costs a parse. Keys and values are compared as they
// decode, so a \u escape in one (which no runtime writes, but JSON
// allows) is no way around it.
type resetMarks struct {
	keys, values markers
	// maxKey is the most bytes a key marker and its quotes can take,
	// every character written as a \u escape.
	maxKey int
}

// newResetMarks are the marks of the registered dialects' lines that
// record a usage, a window, a compaction or a model, and bs's roll notes.
func newResetMarks(m transcript.Marks) *resetMarks {
	r := &resetMarks{}
	r.keys.add(transcript.RolledField + `"`)
	for _, mk := range slices.Concat(m.Usage, m.Reset, m.Model) {
		if mk.Name {
			r.keys.add(mk.Text)
			r.maxKey = max(r.maxKey, 6*len(mk.Text)+2)
		} else {
			r.values.add(mk.Text)
		}
	}
	r.maxKey = max(r.maxKey, 6*len(transcript.RolledField)+2)
	return r
}

// markers are strings a JSON string may begin with as it decodes.
type markers struct {
	texts []string
	// first are the bytes a marker's JSON may start with: its first
	// character, or the backslash of an escape.
	first [256]bool
}

func (ms *markers) add(text string) {
	if !slices.Contains(ms.texts, text) {
		ms.texts = append(ms.texts, text)
	}
	ms.first[text[0]], ms.first['\\'] = true, true
}

// mayReset reports whether line may hold a usage, a compaction, a roll
// note or a model: false means it certainly does not.
func (r *resetMarks) mayReset(line []byte) bool {
	for i := 0; ; {
		j := bytes.IndexByte(line[i:], ':')
		if j < 0 {
			return false
		}
		colon := i + j
		i = colon + 1
		k := colon
		for k > 0 && transcript.IsSpace(line[k-1]) {
			k--
		}
		if k > 0 && line[k-1] == '"' {
			if key := keyBefore(line, k, r.maxKey); key >= 0 && r.keys.begin(line[key:k]) {
				return true
			}
		}
		v := i
		for v < len(line) && transcript.IsSpace(line[v]) {
			v++
		}
		if v < len(line) && line[v] == '"' && r.values.begin(line[v+1:]) {
			return true
		}
	}
}

// keyBefore returns where the name ends at line[:k] (a quote at k-1)
// begins, just after its opening quote, or -1 when that quote is escaped
// (the colon is inside a string) or the name is longer than maxKey, the
// longest any marker can be written.
func keyBefore(line []byte, k, maxKey int) int {
	if escaped(line, k-1) {
		return -1
	}
	for q := k - 2; q >= 0 && q >= k-maxKey; q-- {
		if line[q] == '"' && !escaped(line, q) {
			return q + 1
		}
	}
	return -1
}

// escaped reports whether the byte at i follows an odd run of
// backslashes.
func escaped(line []byte, i int) bool {
	n := 0
	for i > 0 && line[i-1] == '\\' {
		n++
		i--
	}
	return n%2 == 1
}

// begin reports whether b, the inside of a JSON string from its start,
// begins with one of the markers as it decodes. A marker's closing quote
// must be the string's own end.
func (ms *markers) begin(b []byte) bool {
	if len(b) == 0 || !ms.first[b[0]] {
		return false // no marker starts so, plainly or escaped
	}
	for _, m := range ms.texts {
		if decodesTo(b, m) {
			return true
		}
	}
	return false
}

// decodesTo reports whether the JSON string bytes b begin with m once
// \u escapes are decoded (m is ASCII letters and _, and perhaps a closing
// quote, which must be written as is: an escaped one is inside the
// string).
func decodesTo(b []byte, m string) bool {
	for i := 0; i < len(m); i++ {
		switch {
		case len(b) == 0:
			return false
		case b[0] == m[i]:
			b = b[1:]
		case m[i] != '"' && len(b) >= 6 && b[0] == '\\' && b[1] == 'u':
			r, err := strconv.ParseUint(string(b[2:6]), 16, 16)
			if err != nil || r != uint64(m[i]) {
				return false
			}
			b = b[6:]
		default:
			return false
		}
	}
	return true
}

// tailBuffer keeps the lines seen since the last reset, in one reused
// arena in memory up to tailMemory and spilling to a temp file beyond, so
// memory stays bounded on a transcript with no usage at all, and most lines
// cost a copy but no allocation. A line in memory costs its bytes and its
// place (tailLineCost), so that millions of short lines fill the memory
// too; a spilled line's number and length go to the file before it.
type tailBuffer struct {
	arena   []byte
	lines   []tailLine
	spill   *os.File
	w       *bufio.Writer
	spilled int // lines in the file
}

type tailLine struct {
	off, n, num int
}

const (
	tailMemory   = 32 << 20
	tailLineCost = int(unsafe.Sizeof(tailLine{}))
)

func (b *tailBuffer) add(l transcript.Line) error {
	if b.spill == nil && len(b.arena)+len(l.Body)+tailLineCost*(len(b.lines)+1) <= tailMemory {
		b.lines = append(b.lines, tailLine{off: len(b.arena), n: len(l.Body), num: l.Num})
		b.arena = append(b.arena, l.Body...)
		return nil
	}
	if b.spill == nil {
		f, err := spool.Temp("bs-gauge-*")
		if err != nil {
			return err
		}
		b.spill, b.w = f, bufio.NewWriterSize(f, 1<<20)
	}
	var head [2 * binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(l.Num))
	n += binary.PutUvarint(head[n:], uint64(len(l.Body)))
	b.spilled++
	if _, err := b.w.Write(head[:n]); err != nil {
		return err
	}
	_, err := b.w.Write(l.Body)
	return err
}

func (b *tailBuffer) reset() {
	b.arena, b.lines = b.arena[:0], b.lines[:0]
	if b.spill != nil {
		b.spill.Close()
		b.spill, b.w, b.spilled = nil, nil, 0
	}
}

// each calls fn with every line kept, in order: those in memory, then
// the spilled ones, which all came after them.
func (b *tailBuffer) each(fn func(transcript.Line) error) error {
	for _, tl := range b.lines {
		if err := fn(transcript.Line{Num: tl.num, Body: b.arena[tl.off : tl.off+tl.n : tl.off+tl.n]}); err != nil {
			return err
		}
	}
	if b.spill == nil {
		return nil
	}
	if err := b.w.Flush(); err != nil {
		return err
	}
	if _, err := b.spill.Seek(0, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(b.spill, 1<<20)
	var body []byte
	for range b.spilled {
		num, err := binary.ReadUvarint(r)
		var n uint64
		if err == nil {
			n, err = binary.ReadUvarint(r)
		}
		if err == nil {
			body = slices.Grow(body[:0], int(n))[:n]
			_, err = io.ReadFull(r, body)
		}
		if err != nil {
			return fmt.Errorf("reading back the lines after the last usage: %w", err)
		}
		if err := fn(transcript.Line{Num: int(num), Body: body}); err != nil {
			return err
		}
	}
	return nil
}

func (b *tailBuffer) close() {
	if b.spill != nil {
		b.spill.Close()
	}
}

func withDefaults(opt Options) Options {
	if opt.Estimator == nil {
		opt.Estimator = CharsPer4{}
	}
	if opt.OnBadLine == nil {
		opt.OnBadLine = func(*transcript.BadLineError) error { return nil }
	}
	return opt
}

// tailChunk is how much MeasureFile reads at a time, backwards. Small on
// purpose: gauge FILE runs once per process, where every page of a fresh
// buffer is a page fault (a 1 MiB chunk cost 5 ms to first touch, more
// than reading 16 MiB through a 64 KiB one), and a small buffer stays in
// cache while it is searched.
const tailChunk = 64 << 10

// MeasureFile gauges a transcript file reading from its end: only the
// lines after the last usage (or compaction) are parsed, so a 1 GiB file
// costs about what a small one does. It gives the same result as Measure.
func MeasureFile(f *os.File, opt Options) (Result, error) {
	opt = withDefaults(opt)
	info, err := f.Stat()
	if err != nil {
		return Result{}, err
	}
	if !info.Mode().IsRegular() {
		return Measure(opt.name(f), f, nil, opt)
	}
	d := opt.Format
	var headModel string
	if d == nil { // auto
		d, headModel, err = detectHead(f, opt)
		if err != nil {
			return Result{}, err
		}
	}
	if d.Threads() == transcript.ParentChains && opt.thread == threadUnknown {
		opt.thread = headThread(f, d)
	}
	// Walk lines backwards, newest first, until one ends the accounting.
	var lines []Line // newest first
	var p transcript.Parser
	stop := false
	var walked int64 // bytes walked back from the end
	path := treePath{d: d}
	var chain chainWalk
	var reset transcript.ChainNode // the line the walk stopped at, for Claude Code
	passedRoll := false            // a roll's note off the path was walked over
	badLine := false               // a line before the last is not valid JSON
	err = backwardLines(f, info.Size(), func(line []byte) bool {
		last := walked == 0
		walked += int64(len(line)) + 1
		if len(bytes.TrimSpace(line)) == 0 {
			if walked > 1 { // not the empty piece after a final newline
				lines = append(lines, Line{})
			}
			return true
		}
		t, err := p.Parse(line)
		if err != nil {
			if !last {
				// Read forwards, so that each bad line is reported with
				// its number as in a stream. (A last line cut short is
				// an agent still writing it: no reason to read it all.)
				badLine = true
				return false
			}
			lines = append(lines, Line{}) // counts for nothing but a line, as in Measure
			return true
		}
		if d.Threads() == transcript.ParentTree && !path.back(t) || opt.skip(t, d) {
			lines = append(lines, Line{}) // on a branch, or another thread: not in context
			note, _ := rollNote(t)
			passedRoll = passedRoll || note && d.Threads() == transcript.ParentTree // the path below is the tree's
			return true
		}
		l := classify(t, d, opt.Estimator, false, nil)
		lines = append(lines, l)
		if d.Threads() == transcript.ParentChains {
			n := transcript.ChainNodeOf(t, d)
			chain.add(n)
			reset = n // the last one, when the walk stops
		}
		if l.Role == Usage || l.Role == Compaction {
			stop = true
			return false
		}
		return true
	})
	if err != nil {
		return Result{}, err
	}
	if badLine {
		return measureFrom(f, 0, opt)
	}
	opt.Format = d // for the readings forwards below
	// The chain from the last message does not run back to the usage read
	// (it reaches neither that line nor, read only then, another line of
	// its response): a rewind left it on a branch. Read the whole file
	// along the chain, as roll does.
	if d.Threads() == transcript.ParentChains && stop && !chain.reaches(reset, nil) && !chain.reaches(reset, responseBefore(f, info.Size()-walked, reset.MsgID, d)) {
		if on := chainPath(f, info.Size(), d); on != nil {
			o := opt
			o.onPath = on
			return measureFrom(f, 0, o)
		}
	}
	if stop && passedRoll && lines[len(lines)-1].Role == Usage {
		// The path leaves a roll's note behind: the usage read may be
		// from before that roll, on a kept entry the user went back to
		// (Line.RollStart). Read the whole file along the path.
		o := opt
		o.onPath = pathFrom(f, 0, info.Size(), d)
		return measureFrom(f, 0, o)
	}
	if stop {
		last := &lines[len(lines)-1]
		if last.KeptIndex > 0 && last.KeptID == "" {
			// A v1 compaction numbers its first kept entry from the start
			// of the file: read it forwards.
			return measureFrom(f, 0, opt)
		} else if k := newKeptSum(*last, d, opt.Estimator); k != nil {
			backwardLines(f, info.Size()-walked, func(line []byte) bool { return k.add(line, -1) })
			last.Estimate += k.tokens()
		}
	}
	if stop && lines[len(lines)-1].Role == Usage {
		// That usage may predate a roll whose note comes before it: look
		// back, within reason, for a note, and measure from it if found.
		if at := rollNoteBefore(f, info.Size(), walked); at >= 0 {
			o := opt
			if path.tree {
				o.onPath = pathFrom(f, at, info.Size(), d)
			}
			// The model and window named before the note, as a stream
			// of the whole file would know them.
			o.model, o.window = lastModel(f, at, d, opt)
			if o.model == "" {
				o.model = headModel
			}
			return measureFrom(f, at, o)
		}
	}
	var s State
	s.Model = headModel
	for i := len(lines) - 1; i >= 0; i-- {
		s.Add(lines[i])
	}
	if s.Model == headModel || s.Window == 0 {
		// The model may be named only before the walked lines.
		m, w := lastModel(f, info.Size(), d, opt)
		if s.Model == headModel && m != "" {
			s.Model = m
		}
		if s.Window == 0 {
			s.Window = w
		}
	}
	return s.Result(opt), nil
}

// rollLookback bounds how far before the last usage MeasureFile looks for a
// bs roll note. A roll leaves at most its target of context after the note:
// at four bytes a token, 2.4 MB for 60% of a million tokens, so 16 MiB
// leaves room for images, whose bytes far outnumber their tokens. Every
// gauge of a transcript that was never rolled reads this far back, so the
// bound is a good part of what `bs gauge FILE` costs beyond starting up
// (about 2 ms of 5).
const rollLookback = 16 << 20

// rollNoteBefore returns the offset of the start of the last line holding
// a roll note in f[size-walked-rollLookback : size-walked], or -1. It
// searches a chunk at a time (overlapping by the marker's length), so
// memory stays small and the search runs at memory speed.
func rollNoteBefore(f *os.File, size, walked int64) int64 {
	end := size - walked
	limit := max(end-rollLookback, 0)
	buf := make([]byte, tailChunk+len(rollMarker))
	for hi := end; hi > limit; {
		lo := max(hi-tailChunk, limit)
		top := min(hi+int64(len(rollMarker)), end)
		chunk := buf[:top-lo]
		if _, err := f.ReadAt(chunk, lo); err != nil && err != io.EOF {
			return -1
		}
		if i := lastRollMarker(chunk); i >= 0 {
			// The line starts after the last line feed before the marker.
			return lineStart(f, lo+int64(i))
		}
		hi = lo
	}
	return -1
}

// rollMarker is how a roll note's accounting begins, and rollMarkerKey the
// part of it the search looks for first: it starts with a byte rarer in
// transcripts than a quote, which is what bytes.Index goes by.
var (
	rollMarker      = []byte(`"` + transcript.RolledField + `":{"by":"` + transcript.RolledBy + `","tokens"`)
	rollMarkerKey   = []byte(transcript.RolledField + `":{"by":"` + transcript.RolledBy)
	rollMarkerKeyAt = bytes.Index(rollMarker, rollMarkerKey)
)

// lastRollMarker returns the offset of the last rollMarker in b, or -1.
// bytes.LastIndex of the whole marker runs at about 400 MB/s here, and a
// transcript without a roll is searched through rollLookback bytes on
// every gauge; looking forward for the key, and checking the marker
// around each hit, runs at 3 to 10 GB/s.
func lastRollMarker(b []byte) int {
	last := -1
	for off := 0; ; {
		i := bytes.Index(b[off:], rollMarkerKey)
		if i < 0 {
			return last
		}
		if at := off + i - rollMarkerKeyAt; at >= 0 && bytes.HasPrefix(b[at:], rollMarker) {
			last = at
		}
		off += i + 1
	}
}

// lineStart returns the offset where the line holding offset at begins.
func lineStart(f *os.File, at int64) int64 {
	buf := make([]byte, 64<<10)
	for hi := at; hi > 0; {
		lo := max(hi-int64(len(buf)), 0)
		chunk := buf[:hi-lo]
		if _, err := f.ReadAt(chunk, lo); err != nil && err != io.EOF {
			return -1
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			return lo + int64(i) + 1
		}
		hi = lo
	}
	return 0
}

// detectHead detects the dialect from the first lines, and a model named
// in the header.
func detectHead(f *os.File, opt Options) (transcript.Dialect, string, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, "", err
	}
	src := transcript.NewSource(f.Name(), io.LimitReader(f, 4<<20), nil, func(*transcript.BadLineError) error { return nil })
	_, t, err := src.Next()
	if err != nil && err != io.EOF {
		return nil, "", err
	}
	model := ""
	if t != nil {
		model = Classify(t, src.Dialect(), opt.Estimator).Model
	}
	return src.Dialect(), model, nil
}

// measureFrom is Measure of the file from byte at on. A bad line is
// reported by its number in the file: the lines before at are counted
// only then, as most files have none.
func measureFrom(f *os.File, at int64, opt Options) (Result, error) {
	if _, err := f.Seek(at, io.SeekStart); err != nil {
		return Result{}, err
	}
	if onBad := withDefaults(opt).OnBadLine; at > 0 {
		before := -1
		opt.OnBadLine = func(e *transcript.BadLineError) error {
			if before < 0 {
				before = transcript.LinesBefore(f, at)
			}
			e.Line += before
			return onBad(e)
		}
	}
	return Measure(opt.name(f), f, nil, opt)
}

// name is what the errors of MeasureFile call f.
func (o *Options) name(f *os.File) string {
	if o.Name != "" {
		return o.Name
	}
	return f.Name()
}

// headThread is the thread of the first message line of dialect d within
// the first 4 MiB.
func headThread(f *os.File, d transcript.Dialect) thread {
	src := transcript.NewSource(f.Name(), io.NewSectionReader(f, 0, 4<<20), d, func(*transcript.BadLineError) error { return nil })
	for {
		_, t, err := src.Next()
		if err != nil {
			return threadUnknown
		}
		if t != nil {
			if th := threads[d.Link(t).Thread]; th != threadUnknown {
				return th
			}
		}
	}
}

// lastModel scans back (at most 8 MiB) for the last line naming a model or
// stating a window.
func lastModel(f *os.File, size int64, d transcript.Dialect, opt Options) (string, int) {
	var p transcript.Parser
	model, window := "", 0
	scanned := 0
	backwardLines(f, size, func(line []byte) bool {
		scanned += len(line)
		if bytes.Contains(line, []byte(`"model`)) {
			if t, err := p.Parse(line); err == nil {
				l := Classify(t, d, opt.Estimator)
				if model == "" {
					model = l.Model
				}
				if window == 0 {
					window = l.Window
				}
			}
		}
		return (model == "" || (d.StatesWindow() && window == 0)) && scanned < 8<<20
	})
	return model, window
}

// backwardLines calls fn with each line of f[0:size), last line first,
// until fn returns false. A line longer than the chunk is assembled whole,
// once: its pieces are kept as they are read and joined when its start is
// found, so a line of many chunks costs its length, not its length times
// the number of chunks. The line given to fn is valid only during the
// call.
func backwardLines(f io.ReaderAt, size int64, fn func([]byte) bool) error {
	var rest [][]byte // the end of a line that starts before pos, last piece first
	pos := size
	for pos > 0 {
		n := min(int64(tailChunk), pos)
		pos -= n
		chunk := make([]byte, n) // pieces of it may be kept in rest
		if _, err := f.ReadAt(chunk, pos); err != nil && err != io.EOF {
			return err
		}
		i := bytes.LastIndexByte(chunk, '\n')
		if i < 0 {
			rest = append(rest, chunk)
			continue
		}
		if !fn(joinLine(chunk[i+1:], rest)) {
			return nil
		}
		data := chunk[:i]
		for {
			j := bytes.LastIndexByte(data, '\n')
			if j < 0 {
				break
			}
			if !fn(data[j+1:]) {
				return nil
			}
			data = data[:j]
		}
		rest = append(rest[:0], data)
	}
	if line := joinLine(nil, rest); len(line) > 0 {
		fn(line)
	}
	return nil
}

// joinLine returns head followed by the pieces of rest, which are in
// reverse order; head itself when rest is empty.
func joinLine(head []byte, rest [][]byte) []byte {
	if len(rest) == 0 {
		return head
	}
	n := len(head)
	for _, p := range rest {
		n += len(p)
	}
	line := append(make([]byte, 0, n), head...)
	for i := len(rest) - 1; i >= 0; i-- {
		line = append(line, rest[i]...)
	}
	return line
}

// WindowFor returns the context window of a model named in a transcript,
// from a table of common models, or defaultWindow.
func WindowFor(model string) int {
	m := strings.ToLower(model)
	for _, w := range modelWindows {
		if strings.Contains(m, w.prefix) {
			return w.window
		}
	}
	return defaultWindow
}

// modelWindows is checked in order, so more specific names come first.
var modelWindows = []struct {
	prefix string
	window int
}{
	{"gpt-4.1", 1047576},
	{"gpt-4o", 128000},
	{"gpt-4-turbo", 128000},
	{"gpt-5", 400000},
	{"o3", 200000},
	{"o4-mini", 200000},
	{"codex", 400000},
	{"claude", 200000},
	{"gemini-2", 1048576},
	{"gemini-1.5", 1048576},
	{"qwen3", 262144},
	{"qwen", 131072},
	{"deepseek", 128000},
	{"llama", 128000},
}

// EstimateAll is the gauge's estimate of a whole transcript as if no usage
// had been recorded and nothing compacted: the sum of Contents over every
// line. On a transcript with no usage, no compaction and no bs roll note it
// is what Measure reports (source estimate); bs stats breaks it down.
func EstimateAll(name string, r io.Reader, opt Options) (int, error) {
	opt = withDefaults(opt)
	src := transcript.NewSource(name, r, opt.Format, opt.OnBadLine)
	total := 0
	for {
		_, t, err := src.NextView()
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
		if t != nil {
			total += Contents(t, src.Dialect(), opt.Estimator, nil)
		}
	}
}

// treePath follows a ParentTree (pi v2+) backwards from the last entry of the
// file: the context is the path from that entry up its parents, and an
// entry off it is on a branch the user went back from. Parents come before
// their children in the file, so one walk back finds the path.
type treePath struct {
	d    transcript.Dialect
	tree bool   // an entry with an id was seen
	want string // the id of the next entry on the path
}

// back takes the next line back and reports whether it is on the path
// (a line without an id, as the header, is on no branch).
func (p *treePath) back(t *transcript.Tree) bool {
	link := p.d.Link(t)
	id := link.ID
	if id == "" {
		return true
	}
	if !p.tree {
		p.tree, p.want = true, id // the last entry: the leaf
	}
	if id != p.want {
		return false
	}
	p.want = link.Parent
	return true
}

// pathFrom is the set of ids on the path from the last entry back to the
// bytes at off, for a Measure from off to the end.
func pathFrom(f *os.File, off, size int64, d transcript.Dialect) map[string]bool {
	on := map[string]bool{}
	path := treePath{d: d}
	var p transcript.Parser
	backwardLines(f, size, func(line []byte) bool {
		size -= int64(len(line)) + 1
		if t, err := p.Parse(line); err == nil && path.back(t) {
			if id := d.Link(t).ID; id != "" {
				on[id] = true
			}
		}
		return size > off
	})
	return on
}

// offPath reports whether t is a pi entry off Options.onPath.
func (o Options) offPath(t *transcript.Tree, d transcript.Dialect) bool {
	if o.onPath == nil {
		return false
	}
	id := d.Link(t).ID
	return id != "" && !o.onPath[id]
}

// untilStopped passes writes on to w until stop is called, and refuses
// them after.
type untilStopped struct {
	mu      sync.Mutex
	w       io.Writer
	stopped bool
}

func (u *untilStopped) Write(b []byte) (int, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.stopped {
		return 0, io.ErrClosedPipe
	}
	return u.w.Write(b)
}

func (u *untilStopped) stop() {
	u.mu.Lock()
	u.stopped = true
	u.mu.Unlock()
}
