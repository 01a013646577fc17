// Package extract implements seed 000's "keep recent, extract old": large
// values in entries older than the last keep-recent messages move to the
// blob store and leave [[extracted-<id>]] placeholders behind.
package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/rules"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/hugemem"
	"github.com/bstools/bs/internal/spool"
)

// Options configure a run. The zero value is not useful; see Defaults.
type Options struct {
	KeepRecent       int             // messages at the end that are never touched
	MinLength        int             // a value moves when it is longer than this many characters
	Types            transcript.Kind // kinds of values that move
	Rules            []*rules.Rule   // consulted when an entry has no _extractable
	KeepAfterRestore time.Duration   // protection after a restore
	Now              time.Time
	DryRun           bool // report what would move (report), change nothing
	Format           transcript.Dialect
	Store            blobstore.Store // required unless DryRun
	Workers          int             // concurrent blob writes; also bounds the cores parsing takes
	Log              *slog.Logger
	Session          string // for log records; "" means the transcript's own id
	LinesBefore      int    // lines of the file before r (a run that resumes past them): numbers count them
	// Before, for a run that resumes past them, is those lines: the
	// ledger calibrates on them as a run over the whole file would
	// (gauge.Ledger.Prime), reading no more than it needs.
	Before io.Reader

	// OnBadLine is told about each invalid line; returning an error stops
	// the run (--strict).
	OnBadLine func(*transcript.BadLineError) error

	// OnMoved, if set, is told about each value moved, with its text as
	// the raw JSON string it was in the line (nil for images), for the
	// search index. The slice is only valid during the call. It is not
	// called under DryRun.
	OnMoved func(Moved, []byte)
}

// ResumeKey names what a run's output depends on besides its input: an
// in-place run resumes where the last one's output became final only
// under the same key (internal/inplace.Resume), so a key, once written
// in a watermark, must keep its spelling.
func (o Options) ResumeKey() string {
	sources := make([]string, len(o.Rules))
	for i, r := range o.Rules {
		sources[i] = r.Source
	}
	return fmt.Sprintf("extract v1|%d|%d|%s|%s|%s|%s", o.KeepRecent, o.MinLength, o.Types,
		o.KeepAfterRestore, o.Format, strings.Join(sources, "\x00"))
}

// Defaults returns the contract's defaults.
func Defaults() Options {
	return Options{
		KeepRecent:       3,
		MinLength:        500,
		Types:            transcript.ToolCall | transcript.ToolResult | transcript.Thinking | transcript.Bookkeeping,
		KeepAfterRestore: 10 * time.Minute,
		Workers:          8,
	}
}

// Stats summarise a run.
type Stats struct {
	Lines     int   `json:"lines"`
	Entries   int   `json:"entries_extracted"`
	Values    int   `json:"values_extracted"`
	BytesIn   int64 `json:"bytes_in"`
	BytesOut  int64 `json:"bytes_out"`
	BadLines  int   `json:"bad_lines"`
	Protected int   `json:"entries_protected"`

	// Final is the output offset before which every line is final: a later
	// run with the same options over this output plus appended lines
	// leaves those bytes as they are. Lines after it wait for more
	// messages, are protected for a while after a restore, or are
	// unfinished. In-place runs resume from it (see cmd/bs).
	Final int64 `json:"-"`
	// Dialect is the transcript's dialect, detected or given.
	Dialect transcript.Dialect `json:"-"`
}

// Moved describes one value that moves (or would move, under --dry-run).
type Moved struct {
	Line    int    `json:"line"`
	EntryID string `json:"entry_id"`
	Pointer string `json:"pointer"`
	Kind    string `json:"kind"`
	Bytes   int    `json:"bytes"`
	Blob    string `json:"blob"`
	Tool    string `json:"tool,omitempty"`
	Time    string `json:"time,omitempty"`
}

// report is what --dry-run prints.
type report struct {
	File string `json:"file"` // the name the transcript was read under, "-" for standard input
	Stats
	Values []Moved `json:"values"`
}

// item is a line waiting for its fate: whether enough messages follow it.
type item struct {
	line    transcript.Line
	pending bool             // kept only for a while (protected after a restore)
	tree    *transcript.Tree // nil when nothing in the line can move
	entry   transcript.Entry
	chosen  []transcript.Value
	seq     int // messages seen up to and including this line
	need    int // messages that must follow before it may move
	acct    gauge.LedgerLine
	pre     *prepared // what the parsers worked out of the values that may move
	// spilled, when not -1, is where the line's bytes wait in the spill
	// file; the line holds no bytes and the item no tree meanwhile.
	spilled int64
	parsed  bool // a spilled line had a tree, parsed again when it comes back
}

type run struct {
	opt     Options
	preview bool // write the output, store nothing (Preview)
	src     *transcript.Source
	sink    *transcript.Sink
	batch   blobstore.Batcher // the store, when it can batch syncs
	stats   Stats
	report  *report
	session string
	warned  map[*rules.Rule]bool
	tools   transcript.ToolNamer // the tools of results whose lines do not name them
	// ledger carries what the run takes out of the context onto the
	// usage lines after it, so that the gauge of the output sees it.
	ledger    *gauge.Ledger
	est       gauge.Estimator
	measuring atomic.Bool // the ledger still reads estimates
	spill     spill       // lines waiting for their fate that memory cannot hold
}

// Run reads a transcript from r and writes it to w with old large values
// extracted. Under DryRun it writes a report as JSON to w instead.
func Run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	return runOn(ctx, name, r, w, opt, false)
}

// Preview writes to w the transcript exactly as Run would write it, with
// the same options, but stores nothing: opt.Store and DryRun are ignored,
// and OnMoved is told of each value that would move. It tells what
// extracting would change (bs stats measures it).
func Preview(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	opt.Store, opt.DryRun = nil, false
	return runOn(ctx, name, r, w, opt, true)
}

func runOn(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options, preview bool) (Stats, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	x := &run{opt: opt, preview: preview, session: opt.Session, warned: map[*rules.Rule]bool{}, est: gauge.CharsPer4{}}
	x.ledger = gauge.NewLedger(x.est)
	onBad := func(e *transcript.BadLineError) error {
		x.stats.BadLines++
		if opt.OnBadLine != nil {
			return opt.OnBadLine(e)
		}
		return nil
	}
	x.src = transcript.NewSource(name, r, opt.Format, onBad)
	x.src.NumberFrom(opt.LinesBefore + 1)
	x.src.Parallel(opt.Workers) // -j N bounds the parsers too
	x.src.KeepLines()           // the lines wait in the queue for their fate
	// What each line is to the gauge, read beside the parsing.
	// Estimating a line costs as much as parsing it: only while the
	// ledger's calibration reads the estimates (the parsers run ahead of
	// the ledger, so a line it reads in time has one).
	x.measuring.Store(true)
	x.src.Annotate(func(t *transcript.Tree, d transcript.Dialect) any {
		e := transcript.View(t, d)
		return note{acct: gauge.LedgerLineOf(t, d, x.est, x.measuring.Load()), entry: e, pre: x.prepare(&e, d)}
	})
	defer x.src.Close()
	defer x.spill.close()
	out := w
	if opt.DryRun {
		x.report = &report{File: name, Values: []Moved{}}
		out = io.Discard
	}
	var commit func() error
	if b, ok := opt.Store.(blobstore.Batcher); ok {
		x.batch = b
		commit = func() error { return b.Commit(ctx) }
	}
	x.sink = transcript.NewSink(out, opt.Workers, commit)
	x.stats.Final = -1
	if opt.Before != nil {
		if err := x.prime(name, opt.Before); err != nil {
			return x.stats, err
		}
	}
	err := x.loop(ctx)
	if x.stats.Final < 0 {
		x.stats.Final = x.stats.BytesOut
	}
	x.stats.Dialect = x.src.Dialect()
	if cerr := x.sink.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing output: %w", cerr)
	}
	if err == nil && x.report != nil {
		x.report.Stats = x.stats
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		err = enc.Encode(x.report)
	}
	return x.stats, err
}

func (x *run) loop(ctx context.Context) error {
	var queue []*item
	messages, queued := 0, 0
	spilled := 0 // the first spilled lines of the queue are in the spill file
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, tree, err := x.src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		x.stats.Lines++
		x.stats.BytesIn += int64(line.Len())
		it := &item{line: line, need: -1, spilled: -1}
		n, noted := x.src.Annotation().(note)
		if noted {
			it.acct, it.pre = n.acct, n.pre
		} else {
			it.acct = gauge.UnparsedLedgerLine(line.Body)
		}
		it.acct.Bytes = line.Len()
		if tree != nil { // a parsed line is always noted (Source.Annotate)
			it.entry = n.entry
			x.tools.Name(&it.entry)
			if x.session == "" && it.entry.SessionID != "" {
				x.session = it.entry.SessionID
			}
			if it.entry.Message {
				messages++
			}
			x.decide(it)
			if it.need >= 0 || it.acct.Carries() {
				// A usage line may have to carry what lines before it
				// gave up (gauge.Ledger).
				it.tree = tree.Clone()
				it.entry.Tree = it.tree
			}
		}
		it.seq = messages
		queue = append(queue, it)
		queued += line.Len()
		// Lines waiting for their fate beyond what memory may hold go to
		// the spill file, oldest first, and come back when it is final:
		// a huge value is the one most worth moving. The spilled lines
		// are the first spilled of the queue.
		for ; queued > maxQueued && spilled < len(queue); spilled++ {
			n := queue[spilled].line.Len()
			if err := x.spill.put(queue[spilled]); err != nil {
				x.opt.Log.Warn("cannot spill lines waiting for their fate to a temporary file; kept", "line", queue[spilled].line.Num, "error", err.Error())
				break
			}
			queued -= n
		}
		// Emit from the head every line whose fate is now final. A head
		// that waits for more messages than memory allows even spilled (an
		// entry with a huge _extractable count) is kept as it is instead:
		// memory stays bounded, and keeping is always safe.
		for len(queue) > 0 {
			h := queue[0]
			waiting := h.need >= 0 && messages-h.seq < h.need
			if waiting && queued <= maxQueued && len(queue) <= maxWaiting {
				break
			}
			if waiting {
				x.opt.Log.Warn("entry waits for more messages than memory allows; kept", "line", h.line.Num, "entry_id", h.entry.ID)
			}
			if spilled > 0 {
				spilled--
			} else {
				queued -= h.line.Len()
			}
			if err := x.emit(ctx, h, !waiting && h.need >= 0); err != nil {
				return err
			}
			queue[0] = nil
			queue = queue[1:]
		}
	}
	for _, it := range queue {
		if err := x.emit(ctx, it, it.need >= 0 && messages-it.seq >= it.need); err != nil {
			return err
		}
	}
	return nil
}

// maxQueued bounds the bytes of lines waiting for their fate in memory;
// the spill file takes the rest (a variable so that tests can spill every
// line). maxWaiting bounds how many lines wait at all (what each costs
// beside its bytes is small, but not nothing).
var maxQueued = 64 << 20

const maxWaiting = 1 << 16

// decide sets it.need and it.chosen: which values would move, and how many
// messages must follow the entry first. need stays -1 when nothing can.
func (x *run) decide(it *item) {
	e := &it.entry
	if len(e.Values) == 0 {
		return
	}
	t := e.Tree
	// bs's own members must be what bs wrote, or a splice could not be
	// undone exactly: leave such an entry alone.
	if (e.ID == "" && t.Get(0, "__id") >= 0) || (e.Extracted >= 0 && !ownExtracted(t, e.Extracted)) {
		x.opt.Log.Warn("entry has an __id or _extracted bs cannot use; left unchanged", "line", it.line.Num)
		return
	}
	// _extractable decides when it holds an opinion; null (or a value
	// that is not one, after a warning) counts as absent, and the rules
	// decide.
	verdict := rules.Verdict{Keep: -1}
	if e.Extractable >= 0 {
		var v any
		err := json.Unmarshal(t.Raw(e.Extractable), &v)
		if err == nil {
			verdict, err = rules.Interpret(v)
		}
		if err != nil {
			x.opt.Log.Warn("ignoring _extractable", "line", it.line.Num, "entry_id", e.ID, "error", err.Error())
		}
	}
	if !verdict.Opinion && len(x.opt.Rules) > 0 {
		verdict = x.evalRules(it)
	}
	if !verdict.Opinion {
		verdict = rules.Verdict{Keep: -1}
	}
	if verdict.Never {
		return
	}
	if e.ID != "" && !transcript.PlaceholderSafe(e.ID) {
		x.opt.Log.Warn("entry id cannot stand in a placeholder; its values stay", "line", it.line.Num, "entry_id", e.ID)
		return
	}
	if !verdict.Force && e.Restored >= 0 {
		if at, err := time.Parse(time.RFC3339, t.Str(e.Restored)); err == nil && x.opt.Now.Before(at.Add(x.opt.KeepAfterRestore)) {
			x.stats.Protected++
			it.pending = true
			return
		}
	}
	done := x.alreadyExtracted(e)
	for _, v := range e.Values {
		if done[v.Pointer] || isPlaceholder(t, v) {
			continue
		}
		raw := t.Raw(v.Measure)
		if verdict.Force {
			if len(raw) > 2 { // a non-empty string
				it.chosen = append(it.chosen, v)
			}
			continue
		}
		if x.bigEnough(t, v) {
			it.chosen = append(it.chosen, v)
		}
	}
	if len(it.chosen) == 0 {
		return
	}
	switch {
	case verdict.Force:
		it.need = 0
	case verdict.Keep >= 0:
		it.need = verdict.Keep
	default:
		it.need = x.opt.KeepRecent
	}
}

// bigEnough reports whether value v of line t moves unless the entry
// says otherwise: one of --types, longer than --min-length characters
// (seed 000's min_value_length).
func (x *run) bigEnough(t *transcript.Tree, v transcript.Value) bool {
	return v.Moves(x.opt.Types) && transcript.AtLeastChars(t.Raw(v.Measure), x.opt.MinLength+1)
}

func (x *run) evalRules(it *item) rules.Verdict {
	v, err := rules.Decode(it.line.Body)
	if err != nil {
		return rules.Verdict{Keep: -1}
	}
	for _, r := range x.opt.Rules {
		verdict, err := r.Eval(v)
		if err != nil {
			if !x.warned[r] {
				x.warned[r] = true
				x.opt.Log.Warn("rule gave no verdict; treating it as null", "line", it.line.Num, "error", err.Error())
			}
			continue
		}
		if verdict.Opinion {
			return verdict
		}
	}
	return rules.Verdict{Keep: -1}
}

// ownExtracted reports whether an entry's _extracted is one extract could
// have written: a non-empty object whose every pointer holds a placeholder.
func ownExtracted(t *transcript.Tree, ext int) bool {
	if t.Nodes[ext].Kind != '{' || t.Nodes[ext].First < 0 {
		return false
	}
	ok := true
	t.Children(ext, func(m, _ int) {
		n, err := t.Resolve(t.Key(m))
		ok = ok && err == nil && t.HoldsPlaceholder(n)
	})
	return ok
}

// alreadyExtracted returns the pointers the entry's _extracted names.
func (x *run) alreadyExtracted(e *transcript.Entry) map[string]bool {
	if e.Extracted < 0 {
		return nil
	}
	done := map[string]bool{}
	e.Tree.Children(e.Extracted, func(c, _ int) { done[e.Tree.Key(c)] = true })
	return done
}

// isPlaceholder reports whether a value already holds a placeholder, so
// that a forced entry never extracts its own placeholders.
func isPlaceholder(t *transcript.Tree, v transcript.Value) bool {
	return transcript.IsRawPlaceholder(t.Raw(v.Measure))
}

// emit writes the item, extracting its chosen values when move is true.
func (x *run) emit(ctx context.Context, it *item, move bool) error {
	if it.spilled >= 0 {
		if err := x.spill.take(it); err != nil {
			return fmt.Errorf("line %d: %w", it.line.Num, err)
		}
	}
	if x.stats.Final < 0 && (it.pending || !it.line.Newline || !move && it.need >= 0) {
		x.stats.Final = x.stats.BytesOut // the first line a later run may change
	}
	orig := it.line.Bytes()
	if !move || len(it.chosen) == 0 {
		if adj, ok := x.add(it.acct); ok && x.report == nil {
			// What the lines before gave up, if they did (Sink.WriteAfter).
			out, err := transcript.SpliceLine(it.line, []transcript.Edit{adj.Edit(it.tree)})
			if err != nil {
				return fmt.Errorf("line %d: %w", it.line.Num, err)
			}
			x.stats.BytesOut += int64(len(out))
			x.sink.WriteAfter(out, orig)
			return nil
		}
		x.stats.BytesOut += int64(len(orig))
		x.sink.Write(orig)
		return nil
	}
	t, e := it.tree, &it.entry
	pre := it.pre
	if !pre.covers(it.chosen) {
		pre = nil
	}
	id, generated := e.ID, false
	switch {
	case id != "":
	case pre != nil: // derived by the parsers
		id, generated = pre.id, true
	default:
		id, generated = transcript.DeriveIDOf(t), true
	}
	ph := transcript.Placeholder(id)
	var edits []transcript.Edit
	blobs := make([]blob, 0, len(it.chosen))
	meta := transcript.NewExtractedMeta(t, e.Extracted)
	sizes := map[string]int{}
	keys := make([]string, 0, len(it.chosen))
	// What moving the values takes out of the context, as the gauge
	// counts the line, and their digests: worked out by the parsers
	// when these are the values they expected to move.
	if pre == nil {
		pre = prepareMoves(t, x.src.Dialect(), x.est, id, it.chosen)
	}
	it.acct.Removed, it.acct.Added = max(pre.net, 0), max(-pre.net, 0)
	tokens := pre.tokens
	for i, v := range it.chosen {
		raw := t.Raw(v.Node)
		d := pre.digests[i]
		edits = append(edits, t.ReplaceValue(v.Node, transcript.PlaceholderValue(ph, v.Block)))
		blobs = append(blobs, blob{d, raw})
		meta.Add(v.Pointer, d.String(), len(raw), tokens[i])
		sizes[v.Pointer] = len(raw)
		keys = append(keys, v.Pointer)
		m := Moved{Line: it.line.Num, EntryID: id, Pointer: v.Pointer, Kind: v.Kind.String(), Bytes: len(raw), Blob: d.String(), Tool: transcript.ToolOf(e, v), Time: e.Time}
		if x.report != nil {
			x.report.Values = append(x.report.Values, m)
		} else if x.opt.OnMoved != nil {
			x.opt.OnMoved(m, valueText(t, v))
		}
	}
	if generated {
		edits = append(edits, t.InsertMember(0, "__id", transcript.AppendQuote(nil, id)))
	}
	edits = append(edits, meta.Edit())
	adj, after := x.add(it.acct)
	if after {
		edits = append(edits, adj.Edit(t))
	}
	out, err := transcript.SpliceLine(it.line, edits)
	if err != nil {
		return fmt.Errorf("line %d: %w", it.line.Num, err)
	}
	x.stats.Entries++
	x.stats.Values += len(it.chosen)
	x.stats.BytesOut += int64(len(out))
	msg := "extracted"
	if x.report != nil {
		msg = "would extract"
	}
	x.opt.Log.Debug(msg, "module", "extraction", "entry_id", id, "keys_extracted", keys, "sizes_bytes", sizes, "session", x.sessionName(), "line", it.line.Num)
	if x.report != nil {
		x.sink.Write(orig)
		return nil
	}
	if x.preview {
		x.sink.Write(out)
		return nil
	}
	do := x.sink.Go
	if after {
		do = x.sink.GoAfter
	}
	do(ctx, len(out)+len(orig), func(ctx context.Context) ([]byte, []byte, error) {
		for _, b := range blobs {
			if err := x.store(ctx, b); err != nil {
				return nil, orig, fmt.Errorf("line %d: entry %s: storing %s: %w", it.line.Num, id, b.d, err)
			}
		}
		return out, orig, nil
	})
	return nil
}

// note is what the parsers make of a line beside parsing it
// (Source.Annotate): what it is to the gauge's ledger, its view, and the
// values that may move, prepared.
type note struct {
	acct  gauge.LedgerLine
	entry transcript.Entry
	pre   *prepared
}

// prepared is what moving some values of a line needs beside the line
// itself: their digests, and what moving them takes out of the context
// as the gauge counts the line (gauge.Replaced), in total and each.
// Hashing and counting every value that moves is a good part of a run's
// work; the parsers do it beside the parsing, on every core, for the
// values a line would move by the size and type options, instead of the
// one goroutine that takes the lines in order.
type prepared struct {
	id      string // the entry's id, derived from the line when it has none
	nodes   []int
	digests []blobstore.Digest
	net     int
	tokens  []int
}

// prepare is what the parsers work out of the line e views: the values
// big enough to move (bigEnough: what decide chooses unless the entry's
// _extractable, a rule or an earlier extraction says otherwise), prepared
// (prepareMoves). nil when there are none.
func (x *run) prepare(e *transcript.Entry, d transcript.Dialect) *prepared {
	t := e.Tree
	var moves []transcript.Value
	for _, v := range e.Values {
		if !isPlaceholder(t, v) && x.bigEnough(t, v) {
			moves = append(moves, v)
		}
	}
	if len(moves) == 0 {
		return nil
	}
	id := e.ID
	if id == "" {
		id = transcript.DeriveIDOf(t)
	}
	return prepareMoves(t, d, x.est, id, moves)
}

// prepareMoves prepares moving the values vs of line t, entry id, each
// replaced by the id's placeholder.
func prepareMoves(t *transcript.Tree, d transcript.Dialect, est gauge.Estimator, id string, vs []transcript.Value) *prepared {
	p := &prepared{id: id, nodes: make([]int, len(vs)), digests: make([]blobstore.Digest, len(vs))}
	ph := transcript.Placeholder(id)
	reps := make([]gauge.Replacement, len(vs))
	for i, v := range vs {
		p.nodes[i] = v.Node
		p.digests[i] = blobstore.Sum(t.Raw(v.Node))
		reps[i] = gauge.Replacement{Node: v.Node, Text: ph}
	}
	p.net, p.tokens = gauge.Replaced(t, d, est, reps)
	return p
}

// covers reports whether p was prepared for exactly the values vs, in
// their order (what counts for one value may depend on the others).
func (p *prepared) covers(vs []transcript.Value) bool {
	if p == nil || len(p.nodes) != len(vs) {
		return false
	}
	for i, v := range vs {
		if p.nodes[i] != v.Node {
			return false
		}
	}
	return true
}

// valueText is the text a moved value holds, for search, as a raw JSON
// string: the value itself, or the text inside a thinking block; nothing
// for an image. Handing on the raw bytes spares decoding and re-encoding
// everything that moves.
func valueText(t *transcript.Tree, v transcript.Value) []byte {
	if v.Kind == transcript.Image {
		return nil
	}
	return t.Raw(v.Measure)
}

// spill is an unlinked temp file that lines waiting for their fate are
// written to when memory cannot hold them all, and read back from, in
// order, when their fate is final.
type spill struct {
	f   *os.File
	end int64
}

// put moves it's line to the spill file: the item keeps what was decided
// about it, and drops its bytes and its tree.
func (s *spill) put(it *item) error {
	if s.f == nil {
		f, err := spool.Temp("bs-extract-*")
		if err != nil {
			return err
		}
		s.f = f
	}
	b := it.line.Bytes()
	if _, err := s.f.WriteAt(b, s.end); err != nil {
		return err
	}
	it.spilled = s.end
	s.end += int64(len(b))
	it.parsed = it.tree != nil
	// nil, not an empty slice of the line: any slice of it, even of no
	// length and no capacity, points into its memory and keeps all of it.
	it.line.Body = nil
	it.tree, it.entry.Tree = nil, nil
	return nil
}

// take reads a spilled line back, and parses it again if it had a tree:
// the same bytes give the same tree, so what was decided still holds.
func (s *spill) take(it *item) error {
	n := it.acct.Bytes
	b := hugemem.Make(n, n)
	if _, err := s.f.ReadAt(b, it.spilled); err != nil {
		return fmt.Errorf("reading back from the spill file: %w", err)
	}
	it.spilled = -1
	if it.line.Newline {
		b = b[: n-1 : n] // the line feed follows in the same allocation (Line.Bytes)
	}
	it.line.Body = b
	if it.parsed {
		var p transcript.Parser
		t, err := p.Parse(b)
		if err != nil {
			return fmt.Errorf("parsing a spilled line again: %w", err)
		}
		it.tree = t
		it.entry.Tree = t
	}
	return nil
}

func (s *spill) close() {
	if s.f != nil {
		s.f.Close()
	}
}

// blob is a value on its way to the store.
type blob struct {
	d    blobstore.Digest
	data []byte
}

// store writes a blob: pending until the sink's next commit when the store
// batches syncs, durable at once otherwise.
func (x *run) store(ctx context.Context, b blob) error {
	if x.batch != nil {
		return x.batch.PutPending(ctx, b.d, b.data)
	}
	_, err := x.opt.Store.Put(ctx, b.data)
	return err
}

func (x *run) sessionName() string {
	if x.session == "" {
		return "-"
	}
	return x.session
}

// add gives the ledger the next line, and tells the parsers when it stops
// reading estimates.
func (x *run) add(l gauge.LedgerLine) (gauge.Adjustment, bool) {
	adj, ok := x.ledger.Add(l)
	if !x.ledger.Measuring() {
		x.measuring.Store(false)
	}
	return adj, ok
}

// prime gives the ledger the lines before the ones the run reads, for its
// calibration, until it has all it needs of them.
func (x *run) prime(name string, before io.Reader) error {
	src := transcript.NewSource(name, before, x.opt.Format, func(*transcript.BadLineError) error { return nil })
	for x.ledger.Measuring() {
		line, t, err := src.NextView()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		l := gauge.UnparsedLedgerLine(line.Body)
		if t != nil {
			l = gauge.LedgerLineOf(t, src.Dialect(), x.est, true)
		}
		x.ledger.Prime(l)
	}
	return nil
}
