// Package archive implements seed 002's retroactive extraction as a
// filter: a finished turn whose slice is large (tokens or tool calls) or
// that stopped at a max-turns limit collapses into a holder transcript,
// the turn's original lines byte for byte, kept in the blob store; the
// parent keeps the user prompt and one synthetic assistant entry,
// "[archived turn]\nsubagent_id: <id>\n\n<summary>" ending with seed 002's
// "[archived: <id>]" line, which bs restore --all turns back into the
// original lines. A transcript's live holders are read back from its
// markers (Markers, FindHolder) for bs archive list and show.
package archive

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/internal/par"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/spool"
)

// Options configure an archive run.
type Options struct {
	TokenThreshold    int  // archive a turn of more than this many estimated tokens; 0: never for its size
	ToolCallThreshold int  // archive a turn with at least this many tool-use pairs; 0: never for its calls
	OnMaxTurns        bool // archive a turn that stopped at a max-turns limit
	DepthCap          int  // a turn holding a holder at this depth is never archived again
	KeepRecent        int  // the last N turns are never archived

	Style            string // Structured or Paragraph
	SummarizeCmd     string // run with sh -c, the holder on stdin; its stdout is the summary
	SummarizeTimeout time.Duration
	HoldersDir       string // also write each holder as DIR/<id>.jsonl

	Now       time.Time
	Format    transcript.Dialect
	Store     blobstore.Store
	Log       *slog.Logger
	Estimator gauge.Estimator
	Workers   int // turns stored concurrently
	OnBadLine func(*transcript.BadLineError) error

	// OnArchived is told about each archived turn once its line is written.
	OnArchived func(Archived)
	// OnIndex receives each message of an archived turn (after its user
	// prompt, which stays in place), for the search index.
	OnIndex func(Indexed)
	// OnSkip is told about a turn a trigger fired for that was not archived.
	OnSkip func(Skip)
	// OnSummaryFailed is told when --summarize-cmd failed and the
	// mechanical summary was used instead.
	OnSummaryFailed func(id string, err error)
}

// Defaults returns the contract's defaults (seed 002 and issue 5).
func Defaults() Options {
	return Options{TokenThreshold: 8000, ToolCallThreshold: 10, OnMaxTurns: true, DepthCap: 3, KeepRecent: 1,
		Style: Structured, SummarizeTimeout: 60 * time.Second}
}

// Archived describes one archived turn.
type Archived struct {
	Marker
	Line    int    // the user prompt's line in the input
	Summary string // the summary the synthetic entry carries
}

// Indexed is one archived entry, for the search index.
type Indexed struct {
	Holder                    string // the holder's id
	EntryID, Time, Tool, Blob string
	// Text is the entry's text (its strings, without image data or
	// signatures) as a JSON string, encoded on the workers.
	Text []byte
}

// Skip is a turn a trigger fired for that archive refused.
type Skip struct {
	Line     int // the user prompt's line
	Triggers []string
	Reason   string
}

// Stats summarise a run.
type Stats struct {
	Turns    int   // turns seen
	Archived int   // turns archived
	Skipped  int   // turns a trigger fired for that were refused
	Bytes    int64 // bytes replaced by synthetic entries
	Tokens   int   // estimated tokens of the archived turns
}

// chunkSize is the most bytes of a holder one blob holds (a single longer
// line is a blob of its own), as for bs roll.
const chunkSize = 1 << 20

// commitEvery is how many archived bytes are stored before they are made
// durable together and their synthetic entries written.
const commitEvery = 8 << 20

// turn is what archive keeps of one turn: offsets and small facts, never
// its lines.
type turn struct {
	index            int
	d                transcript.Dialect
	line             int   // the prompt's line number
	start, promptEnd int64 // the prompt line
	end              int64 // the end of the turn's last message line
	endNewline       bool
	chunks           []int64 // blob boundaries inside (start, end)
	// spends are the offsets of the lines that carry what cost reports
	// read (transcript.Spends), as the scanner saw them: the worker
	// parses only these again, for their spend records.
	spends              []int64
	entries, tokens     int
	pairs               int
	depth               int
	maxTurns, finished  bool
	openCall            bool
	blocked             string
	promptID, lastID    string
	standIn             transcript.StandIn // what the synthetic entry repeats of the turn's lines
	notes               notes
	echoPrompt          bool // the prompt is an echo (transcript.Turn.Echo)
	msgsSincePrompt     int
	issued              map[string]bool
	id                  string
	triggers            []string
	pendBlocked         string // blockers after the last message: inside only if another message follows
	pendTokens, pendEnd int
	promptTokens        int // the prompt's share of tokens: it stays
	// The entries pi numbers (v1) after the prompt and after the last
	// message: the turn's entries that collapse.
	entryFrom, entryEnd int
}

// Run archives the transcript from r to w.
func Run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	// The output is many short writes: the spend records of each turn,
	// and each usage line after an archived turn with the ranges between
	// (43,000 write calls on the 256 MiB bench session unbuffered). What
	// a failed run wrote is flushed too, as it was written unbuffered.
	bw := bufio.NewWriterSize(w, 256<<10)
	st, err := run(ctx, name, r, bw, opt)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return st, err
}

func run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Estimator == nil {
		opt.Estimator = gauge.CharsPer4{}
	}
	if opt.OnBadLine == nil {
		opt.OnBadLine = func(*transcript.BadLineError) error { return nil }
	}
	if opt.Workers < 1 {
		opt.Workers = runtime.GOMAXPROCS(0)
	}
	if opt.Style == "" {
		opt.Style = Structured
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	sp, src, err := spool.Tee(r, "bs-archive-*")
	if err != nil {
		return Stats{}, err
	}
	defer sp.Close()

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	p := &pipeline{opt: opt, sp: sp, w: w, jobs: make(chan *job, opt.Workers), futures: make(chan *job, 64), ledger: newLedger(opt.Estimator, sp)}
	var wg sync.WaitGroup
	for range opt.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wk := worker{p: p}
			for j := range p.jobs {
				par.Yield() // the scanner, on which every worker waits, may be what the take woke
				wk.do(ctx, j)
				close(j.done)
			}
		}()
	}
	collected := make(chan error, 1)
	go func() {
		err := p.collect(ctx)
		if err != nil {
			cancel(err)
		}
		collected <- err
	}()
	s := &scanner{opt: opt, p: p}
	size, serr := s.scan(ctx, name, src)
	close(p.futures)
	close(p.jobs)
	cerr := <-collected
	wg.Wait()
	p.stats.Turns, p.stats.Skipped = s.turns, s.skipped
	if serr != nil {
		if cerr != nil && errors.Is(serr, context.Canceled) {
			return p.stats, cerr
		}
		return p.stats, serr
	}
	if cerr != nil {
		return p.stats, cerr
	}
	// Everything after the last archived turn goes through as it was.
	if err := p.copyTo(size); err != nil {
		return p.stats, err
	}
	return p.stats, errors.Join(p.errs...)
}

// scanner reads the input line by line and cuts it into turns.
type scanner struct {
	entries int // pi's number of the next entry
	opt     Options
	p       *pipeline
	cur     *turn
	turns   int
	skipped int
	waiting []*turn // candidates among the last KeepRecent turns
}

func (s *scanner) scan(ctx context.Context, name string, r io.Reader) (int64, error) {
	src := transcript.NewSource(name, r, s.opt.Format, s.opt.OnBadLine)
	// The scanner, which takes the lines in order, is what every other
	// part of the run waits on: the lines are parsed and looked at on
	// every core ahead of it.
	src.Parallel(s.opt.Workers)
	src.Annotate(func(t *transcript.Tree, d transcript.Dialect) any { return s.look(t, d) })
	defer src.Close()
	var off int64
	for {
		if err := ctx.Err(); err != nil {
			return off, context.Cause(ctx)
		}
		l, t, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return off, err
		}
		look, _ := src.Annotation().(*look)
		if err := s.line(ctx, l, t, look, src.Dialect(), off); err != nil {
			return off, err
		}
		off += int64(l.Len())
	}
	s.finish(ctx)
	for _, tu := range s.waiting {
		s.opt.Log.Debug("turn kept: among the last --keep-recent", "line", tu.line)
	}
	return off, nil
}

// look is what the scanner makes of a parsed line that needs nothing but
// the line: what it is to the gauge, its view and its kind.
type look struct {
	acct   gauge.Line
	ledger gauge.LedgerLine
	kept   int  // v1KeptIndex
	spent  bool // a spend record
	e      transcript.Entry
	k      lineKind
}

func (s *scanner) look(t *transcript.Tree, d transcript.Dialect) *look {
	lk := &look{acct: gauge.Classify(t, d, s.opt.Estimator)}
	lk.ledger, lk.kept = gauge.NewLedgerLine(lk.acct, t, d), v1KeptIndex(t, d)
	if lk.spent = t.Get(0, transcript.SpentField) >= 0; !lk.spent {
		lk.e = transcript.View(t, d)
		lk.k = classify(t, d, &lk.e, lk.acct)
	}
	return lk
}

// line takes the next line, at offset off, and its tree and look: the
// Source annotates every line it parses, so both are nil or neither.
func (s *scanner) line(ctx context.Context, l transcript.Line, t *transcript.Tree, lk *look, d transcript.Dialect, off int64) error {
	n := int64(l.Len())
	if t != nil || len(l.Body) > 0 && !isBlank(l.Body) && transcript.JSONLossily(l.Body) {
		s.entries++ // a line pi reads
	}
	if t == nil {
		s.p.ledger.observe(gauge.UnparsedLedgerLine(l.Body), off, int(n), 0, nil)
		if s.cur != nil {
			s.cur.addChunk(off, n)
			if len(l.Body) > 0 && !isBlank(l.Body) {
				s.cur.pendBlocked = "it holds a line that is not valid JSON"
			}
		}
		return nil
	}
	acct := lk.acct
	s.p.ledger.observe(lk.ledger, off, int(n), lk.kept, d)
	if s.cur != nil && transcript.Spends(t, s.cur.d) {
		// A line that starts the next turn is past this one's end: the
		// worker takes only those inside.
		s.cur.spends = append(s.cur.spends, off)
	}
	if lk.spent {
		// A spend record is no message: it goes with the turn around it,
		// and stands again after the synthetic entry if that is archived.
		if s.cur != nil {
			s.cur.addChunk(off, n)
		}
		return nil
	}
	e, k := lk.e, lk.k
	prompt := k.prompt
	if s.cur != nil && s.cur.msgsSincePrompt == 0 {
		// A runtime may write a user message twice (Codex: a response item and an
		// event, the Echo). The second of the pair belongs to the first's turn.
		if k.prompt && s.cur.echoPrompt || k.echo && !s.cur.echoPrompt {
			prompt, k.echo = false, false
		}
	}
	if k.echo {
		prompt = true
	}
	if prompt {
		s.finish(ctx)
		s.turns++
		tu := &turn{index: s.turns - 1, d: d, line: l.Num, start: off, promptEnd: off + n, end: off + n, endNewline: l.Newline,
			entries: 1, tokens: acct.Estimate, promptTokens: acct.Estimate, promptID: e.ID, echoPrompt: k.echo, issued: map[string]bool{},
			entryFrom: s.entries, entryEnd: s.entries}
		if strings.HasPrefix(e.ID, transcript.GeneratedIDPrefix) {
			tu.promptID = ""
		}
		tu.notes.addPrompt(t, &e)
		tu.addChunk(off, n)
		s.cur = tu
		s.release(ctx)
		return nil
	}
	tu := s.cur
	if tu == nil {
		return nil // before the first user message: never archived
	}
	tu.addChunk(off, n)
	if k.maxTurns {
		tu.maxTurns = true
	}
	if !k.msg {
		if k.blocked != "" {
			tu.pendBlocked = k.blocked
		}
		tu.pendTokens += acct.Estimate
		return nil
	}
	// A message: everything since the last one is inside the turn.
	if tu.pendBlocked != "" && tu.blocked == "" {
		tu.blocked = tu.pendBlocked
	}
	if k.blocked != "" && tu.blocked == "" {
		tu.blocked = k.blocked
	}
	tu.pendBlocked = ""
	tu.tokens += tu.pendTokens + acct.Estimate
	tu.pendTokens = 0
	tu.end, tu.endNewline = off+n, l.Newline
	tu.entryEnd = s.entries
	tu.entries++
	tu.msgsSincePrompt++
	tu.depth = max(tu.depth, k.depth)
	for _, id := range k.issued {
		tu.issued[id] = true
	}
	for _, id := range k.answered {
		if tu.issued[id] {
			delete(tu.issued, id)
			tu.pairs++
		}
	}
	if k.byOrder {
		tu.pairs++
	}
	tu.openCall = k.isCall // a call without an id, unanswered until a result follows
	tu.finished = k.assistant || k.interrupt
	tu.notes.add(t, d, &e, &k)
	if k.depth == 0 { // a holder's text never counts as a max-turns stop
		if k.assistant && hasMaxTurnsText(l.Body) {
			if strings.Contains(transcript.EntryText(t, &e, maxLastText), maxTurnsText) {
				tu.maxTurns = true
			}
		}
	}
	if e.ID != "" {
		tu.lastID = e.ID
		if strings.HasPrefix(e.ID, transcript.GeneratedIDPrefix) {
			tu.lastID = ""
		}
	}
	d.FollowTurn(t, k.assistant && k.depth == 0, &tu.standIn)
	return nil
}

func isBlank(b []byte) bool {
	for _, c := range b {
		if c != ' ' && c != '\t' && c != '\r' {
			return false
		}
	}
	return true
}

// addChunk counts a line into the turn's blobs: a new blob starts where
// the current one would grow past chunkSize.
func (tu *turn) addChunk(off, n int64) {
	last := tu.start
	if len(tu.chunks) > 0 {
		last = tu.chunks[len(tu.chunks)-1]
	}
	if off > last && off+n-last > chunkSize {
		tu.chunks = append(tu.chunks, off)
	}
}

// finish decides the current turn's fate: archived (once it is no longer
// among the last KeepRecent turns), or kept, with the reason logged when a
// trigger fired.
func (s *scanner) finish(ctx context.Context) {
	tu := s.cur
	if tu == nil {
		return
	}
	s.cur = nil
	for len(tu.chunks) > 0 && tu.chunks[len(tu.chunks)-1] >= tu.end {
		tu.chunks = tu.chunks[:len(tu.chunks)-1]
	}
	o := s.opt
	if o.TokenThreshold > 0 && tu.tokens > o.TokenThreshold {
		tu.triggers = append(tu.triggers, "token-threshold")
	}
	if o.ToolCallThreshold > 0 && tu.pairs >= o.ToolCallThreshold {
		tu.triggers = append(tu.triggers, "tool-call-threshold")
	}
	if o.OnMaxTurns && tu.maxTurns {
		tu.triggers = append(tu.triggers, "on-max-turns")
	}
	if len(tu.triggers) == 0 {
		return
	}
	reason := ""
	switch {
	case tu.msgsSincePrompt == 0:
		reason = "it has no reply"
	case tu.blocked != "":
		reason = tu.blocked
	case tu.depth >= o.DepthCap:
		reason = fmt.Sprintf("it holds a holder at depth %d, the --depth-cap", tu.depth)
	case len(tu.issued) > 0 || tu.openCall:
		reason = "it ends on a tool call with no result"
	case !tu.finished && !tu.maxTurns:
		reason = "it is unfinished: no final assistant reply"
	case !tu.endNewline:
		reason = "its last line is unfinished (no line feed)"
	}
	if reason != "" {
		s.skipped++
		o.Log.Info("turn not archived", "line", tu.line, "triggers", tu.triggers, "reason", reason)
		if o.OnSkip != nil {
			o.OnSkip(Skip{Line: tu.line, Triggers: tu.triggers, Reason: reason})
		}
		return
	}
	tu.issued = nil
	s.waiting = append(s.waiting, tu)
	s.release(ctx)
}

// release hands the candidates that are no longer among the last
// KeepRecent turns to the pipeline.
func (s *scanner) release(ctx context.Context) {
	for len(s.waiting) > 0 && s.waiting[0].index+s.opt.KeepRecent < s.turns {
		tu := s.waiting[0]
		s.waiting = s.waiting[1:]
		j := &job{tu: tu, done: make(chan struct{})}
		select {
		case s.p.futures <- j:
		case <-ctx.Done():
			return
		}
		select {
		case s.p.jobs <- j:
		case <-ctx.Done():
			close(j.done)
			return
		}
	}
}

// pipeline stores turns on workers and writes the output in order.
type pipeline struct {
	opt     Options
	sp      *spool.Spool
	w       io.Writer
	jobs    chan *job
	futures chan *job
	written int64 // input bytes accounted for in the output
	stats   Stats
	errs    []error
	ledger  *ledger
}

type job struct {
	tu      *turn
	done    chan struct{}
	digests []blobstore.Digest
	pending bool // some blobs await the store's Commit
	line    []byte
	summary string
	rows    []Indexed
	err     error
	added   int      // what the synthetic entry puts in context, as the gauge counts it
	spent   [][]byte // the spend records of the turn's lines (transcript.SpendRecord)
}

// collect takes the stored turns in order and, once a batch is durable,
// writes the input up to each with its synthetic entry.
func (p *pipeline) collect(ctx context.Context) error {
	var batch []*job
	var size int64
	for j := range p.futures {
		select {
		case <-j.done:
		case <-ctx.Done():
			return context.Cause(ctx)
		}
		batch = append(batch, j)
		size += j.tu.end - j.tu.start
		if size >= commitEvery {
			if err := p.flush(ctx, batch); err != nil {
				return err
			}
			batch, size = batch[:0], 0
		}
	}
	return p.flush(ctx, batch)
}

func (p *pipeline) flush(ctx context.Context, batch []*job) error {
	if len(batch) == 0 {
		return nil
	}
	if b, ok := p.opt.Store.(blobstore.Batcher); ok {
		pending := false
		for _, j := range batch {
			pending = pending || (j.pending && j.err == nil)
		}
		if pending {
			if err := b.Commit(ctx); err != nil {
				for _, j := range batch {
					if j.err == nil {
						j.err = err
					}
				}
			}
		}
	}
	for _, j := range batch {
		if j.err != nil {
			// The turn stays as it was; the run reports the failure.
			p.errs = append(p.errs, fmt.Errorf("line %d: turn not archived: %w", j.tu.line, j.err))
			continue
		}
		if err := p.copyTo(j.tu.promptEnd); err != nil {
			return err
		}
		// The spend records stand before the synthetic entry, so that the
		// last line of a tree is never one (pi resumes from the last).
		for _, r := range j.spent {
			if _, err := p.w.Write(r); err != nil {
				return err
			}
		}
		if _, err := p.w.Write(j.line); err != nil {
			return err
		}
		p.ledger.archived(j.tu.promptEnd, j.tu.end, j.tu.tokens-j.tu.promptTokens, j.added, collapsed{j.tu.entryFrom, j.tu.entryEnd - j.tu.entryFrom, 1 + len(j.spent)})
		p.written = j.tu.end
		p.stats.Archived++
		p.stats.Bytes += j.tu.end - j.tu.promptEnd
		p.stats.Tokens += j.tu.tokens
		if p.opt.OnIndex != nil {
			for _, r := range j.rows {
				p.opt.OnIndex(r)
			}
		}
		if p.opt.OnArchived != nil {
			p.opt.OnArchived(Archived{Marker: j.marker(), Line: j.tu.line, Summary: j.summary})
		}
		p.opt.Log.Info("turn archived", "line", j.tu.line, "id", j.tu.id, "triggers", j.tu.triggers, "entries", j.tu.entries, "tokens", j.tu.tokens, "bytes", j.tu.end-j.tu.start)
		j.rows = nil
	}
	return nil
}

// copyTo copies the input from what is written up to offset to, the
// usage lines among it carrying what archiving took out before them.
func (p *pipeline) copyTo(to int64) error {
	if to <= p.written {
		return nil
	}
	err := p.ledger.copyTo(p.w, p.written, to)
	p.written = to
	return err
}

func (j *job) marker() Marker {
	tu := j.tu
	return Marker{ID: tu.id, Depth: tu.depth + 1, Blobs: j.digests, Bytes: tu.end - tu.start, From: tu.promptEnd - tu.start,
		Entries: tu.entries, Tokens: tu.tokens, ToolCalls: tu.pairs, Task: tu.notes.task}
}

// worker stores one turn at a time.
type worker struct {
	p   *pipeline
	buf []byte
	tp  transcript.Parser
}

func (wk *worker) do(ctx context.Context, j *job) {
	if ctx.Err() != nil {
		j.err = context.Cause(ctx)
		return
	}
	opt := wk.p.opt
	tu := j.tu
	bounds := append(append([]int64{tu.start}, tu.chunks...), tu.end)
	batcher, _ := opt.Store.(blobstore.Batcher)
	h := sha256.New()
	for i := 0; i+1 < len(bounds); i++ {
		a, b := bounds[i], bounds[i+1]
		if int64(cap(wk.buf)) < b-a {
			wk.buf = make([]byte, b-a)
		}
		chunk := wk.buf[:b-a]
		if _, err := wk.p.sp.ReadAt(chunk, a); err != nil {
			j.err = fmt.Errorf("reading the turn back: %w", err)
			return
		}
		d := blobstore.Sum(chunk)
		var err error
		if batcher != nil {
			err = batcher.PutPending(ctx, d, chunk)
			j.pending = true
		} else {
			_, err = opt.Store.Put(ctx, chunk)
		}
		if err != nil {
			j.err = fmt.Errorf("storing the holder: %w", err)
			return
		}
		j.digests = append(j.digests, d)
		h.Write(d[:])
		if opt.OnIndex != nil {
			wk.index(j, chunk, a, d)
		}
		wk.spend(j, chunk, a)
	}
	tu.id = hex.EncodeToString(h.Sum(nil)[:8])
	for i := range j.rows {
		j.rows[i].Holder = tu.id
	}
	if opt.HoldersDir != "" {
		if err := wk.writeHolder(tu); err != nil {
			j.err = fmt.Errorf("writing the holder file: %w", err)
			return
		}
	}
	j.summary = tu.notes.mechanical(opt.Style, tu.maxTurns)
	if opt.SummarizeCmd != "" {
		env := append(os.Environ(), "BS_HOLDER_ID="+tu.id, "BS_TASK="+tu.notes.task, "BS_SUMMARY_STYLE="+opt.Style)
		s, err := runSummarizer(ctx, opt.SummarizeCmd, opt.SummarizeTimeout, io.NewSectionReader(wk.p.sp, tu.start, tu.end-tu.start), env)
		if err != nil {
			if ctx.Err() != nil {
				j.err = context.Cause(ctx)
				return
			}
			opt.Log.Warn("summarize command failed: using the mechanical summary", "id", tu.id, "error", err.Error())
			if opt.OnSummaryFailed != nil {
				opt.OnSummaryFailed(tu.id, err)
			}
		} else {
			j.summary = s
		}
	}
	m := j.marker()
	si := tu.standIn
	si.ID, si.Parent, si.Key = tu.lastID, tu.promptID, tu.id
	j.line = tu.d.StandInEntry(&si, transcript.StandInNote{Text: markerText(tu.id, j.summary), Field: transcript.ArchivedField, Meta: metaJSON(m, opt.Now), Now: opt.Now})
	if t, err := wk.tp.Parse(bytes.TrimSuffix(j.line, []byte{'\n'})); err == nil {
		j.added = gauge.Contents(t, tu.d, opt.Estimator, nil)
	}
}

// spend adds to j the spend records of the lines of an archived chunk
// (after the user prompt) that carry what cost reports read: they go
// before the synthetic entry. In a pi tree they hang off the prompt,
// beside the synthetic entry, off the path. The scanner found them
// (turn.spends), having parsed every line already.
func (wk *worker) spend(j *job, chunk []byte, off int64) {
	tu := j.tu
	end := off + int64(len(chunk)) // at most tu.end: the turn's chunks end there
	for _, at := range tu.spends { // in file order
		if at >= end {
			break
		}
		if at < max(off, tu.promptEnd) {
			continue
		}
		line := chunk[at-off:]
		if n := bytes.IndexByte(line, '\n'); n >= 0 {
			line = line[:n]
		}
		t, err := wk.tp.Parse(line)
		if err != nil {
			continue
		}
		id, parent := "", ""
		if tu.lastID != "" { // a tree's records hang from the prompt (the others ignore ids)
			sum := sha256.Sum256(fmt.Appendf(nil, "%s-%d-%d", tu.promptID, tu.start, at))
			id, parent = hex.EncodeToString(sum[:4]), tu.promptID
		}
		if r := transcript.SpendRecord(t, tu.d, archivedBy, id, parent); r != nil {
			j.spent = append(j.spent, append(r, '\n'))
		}
	}
}

// afterPrompt calls fn with each line of a chunk of turn tu that starts
// at offset off, without its line feed, and the line's offset, from the
// line after the user prompt on.
func afterPrompt(tu *turn, chunk []byte, off int64, fn func(line []byte, at int64)) {
	for len(chunk) > 0 {
		n := bytes.IndexByte(chunk, '\n')
		line := chunk
		if n >= 0 {
			line, chunk = chunk[:n], chunk[n+1:]
		} else {
			chunk = nil
		}
		at := off
		off += int64(len(line)) + 1
		if at >= tu.promptEnd {
			fn(line, at)
		}
	}
}

// archivedBy names bs archive in the spend records it writes.
const archivedBy = "bs archive"

// index reads the messages of an archived chunk (after the user prompt)
// for the search index.
func (wk *worker) index(j *job, chunk []byte, off int64, d blobstore.Digest) {
	tu := j.tu
	afterPrompt(tu, chunk, off, func(line []byte, _ int64) {
		if isBlank(line) {
			return
		}
		t, err := wk.tp.Parse(line)
		if err != nil {
			return
		}
		e := transcript.View(t, tu.d)
		if !e.Message {
			return
		}
		id := e.ID
		if id == "" {
			id = transcript.DeriveID(line)
		}
		tool := e.ToolName
		if len(e.Tools) > 0 {
			tool = e.Tools[0]
		}
		j.rows = append(j.rows, Indexed{EntryID: id, Time: e.Time, Tool: tool, Blob: d.String(), Text: transcript.AppendQuote(nil, treeText(t))})
	})
}

// treeText is the text of an entry for the search index: its strings,
// decoded, without image data or signatures (as bs roll indexes).
func treeText(t *transcript.Tree) string {
	var b []byte
	for i, n := range t.Nodes {
		if n.Kind == '"' && n.End-n.Start > 2 && (n.Name == nil || !skipKey[t.Key(i)]) {
			if len(b) > 0 {
				b = append(b, ' ')
			}
			b = append(b, t.Str(i)...)
			if len(b) > 1<<20 {
				break
			}
		}
	}
	return string(b)
}

var skipKey = map[string]bool{"data": true, "image_url": true, "signature": true, "thinkingSignature": true, "encrypted_content": true}

// writeHolder writes the holder as DIR/<id>.jsonl, atomically.
func (wk *worker) writeHolder(tu *turn) error {
	dir := wk.p.opt.HoldersDir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".holder-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := io.Copy(f, io.NewSectionReader(wk.p.sp, tu.start, tu.end-tu.start)); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), filepath.Join(dir, tu.id+".jsonl"))
}

// metaJSON is the _archived member.
func metaJSON(m Marker, now time.Time) []byte {
	b := []byte(`{"id":`)
	b = transcript.AppendQuote(b, m.ID)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(m.Depth), 10)
	b = append(b, `,"blobs":[`...)
	for i, d := range m.Blobs {
		if i > 0 {
			b = append(b, ',')
		}
		b = transcript.AppendQuote(b, d.String())
	}
	b = append(b, `],"bytes":`...)
	b = strconv.AppendInt(b, m.Bytes, 10)
	b = append(b, `,"from":`...)
	b = strconv.AppendInt(b, m.From, 10)
	b = append(b, `,"entries":`...)
	b = strconv.AppendInt(b, int64(m.Entries), 10)
	b = append(b, `,"tokens":`...)
	b = strconv.AppendInt(b, int64(m.Tokens), 10)
	b = append(b, `,"tool_calls":`...)
	b = strconv.AppendInt(b, int64(m.ToolCalls), 10)
	b = append(b, `,"task":`...)
	b = transcript.AppendQuote(b, m.Task)
	b = append(b, `,"at":`...)
	b = transcript.AppendQuote(b, now.UTC().Format(time.RFC3339))
	return append(b, '}')
}

// v1KeptIndex is the first kept entry of a pi v1 compaction, pi's or bs
// roll's, by its number from the start of the file; 0 for any other line.
func v1KeptIndex(t *transcript.Tree, d transcript.Dialect) int {
	if !d.IsCompaction(t) {
		return 0
	}
	pv := transcript.PruneView{KeptIndex: -1}
	d.Prune(t, &pv)
	if pv.KeptByID || pv.KeptIndex < 0 {
		return 0
	}
	return pv.KeptIndex
}
