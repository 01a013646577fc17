// Package trim implements seed 001, OpenClaw's session pruning, as a
// filter: old tool results are soft-trimmed to their head and tail, and when
// the context is still too full, cleared oldest first. Unlike OpenClaw, what
// it removes can go to the blob store, so 'bs restore' brings it back.
package trim

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"sync/atomic"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/internal/par"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/hugemem"
	"github.com/bstools/bs/internal/spool"
)

// Options configure a run; see Defaults for OpenClaw's.
type Options struct {
	KeepLastAssistants int     // tool results after the last N assistant messages are protected
	SoftTrimRatio      float64 // soft-trim when the context is at least this share of the window
	HardClearRatio     float64 // hard-clear while it is at least this share
	MinPrunableChars   int     // hard-clear only when prunable results hold this many characters
	SoftMax            int     // soft-trim results longer than this
	SoftHead, SoftTail int     // characters a soft-trimmed result keeps
	HardClear          bool
	Placeholder        string   // what a hard-cleared result becomes
	Allow, Deny        []string // tool-name globs
	TTL                time.Duration
	Window             int // tokens; 0: the model table, else 200000
	Now                time.Time
	Format             transcript.Dialect

	// Store keeps the removed values and makes the placeholders carry
	// [[extracted-<id>]]; nil is OpenClaw's lossy behaviour.
	Store     blobstore.Store
	Workers   int
	Log       *slog.Logger
	Session   string
	OnBadLine func(*transcript.BadLineError) error
	// OnMoved is told about each value moved to the store, with its text
	// as a raw JSON string, for the search index. Calls are sequential.
	OnMoved func(Moved, []byte)
}

// Defaults returns OpenClaw's defaults.
func Defaults() Options {
	return Options{
		KeepLastAssistants: 3,
		SoftTrimRatio:      0.3,
		HardClearRatio:     0.5,
		MinPrunableChars:   50000,
		SoftMax:            4000,
		SoftHead:           1500,
		SoftTail:           1500,
		HardClear:          true,
		Placeholder:        "[Old tool result content cleared]",
		Workers:            8,
	}
}

// Stats summarise a run.
type Stats struct {
	Lines       int
	Window      int    // tokens
	CharsBefore int    // OpenClaw's estimate of the context
	CharsAfter  int    // and after pruning
	Trimmed     int    // tool results soft-trimmed
	Cleared     int    // tool results hard-cleared
	Skipped     string // why nothing was pruned, if so
	BadLines    int
}

// Moved describes a value that went to the store.
type Moved struct {
	Line    int
	EntryID string
	Pointer string
	Bytes   int
	Blob    string
	Tool    string
	Time    string
	Action  string // "soft-trim" or "hard-clear"
}

// Run prunes the transcript from r into w.
func Run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (Stats, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Workers < 1 {
		opt.Workers = 1
	}
	var st Stats
	onBad := func(e *transcript.BadLineError) error {
		st.BadLines++
		if opt.OnBadLine != nil {
			return opt.OnBadLine(e)
		}
		return nil
	}
	sp, err := spool.Open(r, "bs-trim-*")
	if err != nil {
		return st, err
	}
	defer sp.Close()
	recs, err := newRecords()
	if err != nil {
		return st, err
	}
	defer recs.Close()
	p, last, err := scan(ctx, name, sp, recs, &opt, onBad, &st)
	if err != nil {
		return st, err
	}
	if opt.TTL > 0 {
		// cache-ttl: prune only once the cache has expired, that is when
		// the last assistant message is at least the TTL old.
		if last.IsZero() {
			st.Skipped = "no assistant message with a time (--ttl)"
			return st, sp.CopyTo(w)
		}
		if age := opt.Now.Sub(last); age < opt.TTL {
			st.Skipped = fmt.Sprintf("last assistant message is %s old, under --ttl %s", age.Round(time.Second), opt.TTL)
			return st, sp.CopyTo(w)
		}
	}
	if err := p.plan(&st); err != nil {
		return st, err
	}
	if st.Trimmed+st.Cleared == 0 {
		if st.Skipped == "" {
			st.Skipped = "nothing prunable"
		}
		return st, sp.CopyTo(w)
	}
	return st, write(ctx, name, w, sp, p, &opt)
}

// scan classifies every line and keeps what the plan needs in recs. It
// returns the time of the last assistant message.
func scan(ctx context.Context, name string, sp *spool.Spool, recs *records, opt *Options, onBad func(*transcript.BadLineError) error, st *Stats) (*planner, time.Time, error) {
	p := &planner{opt: opt, recs: recs, match: newMatcher(opt.Allow, opt.Deny), ledger: gauge.NewLedger(estimator)}
	var measuring atomic.Bool // the ledger still reads estimates
	measuring.Store(true)
	// add gives the ledger its first pass over line r, and keeps r's
	// record.
	add := func(r *rec, l *resLine, acct gauge.LedgerLine) error {
		acct.Bytes = r.n
		m, back := p.ledger.Observe(acct)
		if !p.ledger.Measuring() {
			measuring.Store(false)
		}
		r.mark = m
		switch {
		case back == 0:
			r.mark.KeptFrom = true
		case back > 0:
			recs.keptFrom[recs.n-back] = true
		}
		return recs.add(r, l)
	}
	d := opt.Format
	if d == nil { // auto
		var err error
		if d, err = detectDialect(sp); err != nil {
			return nil, time.Time{}, err
		}
	}
	var kept *keptStart          // where the latest compaction starts the context
	names := map[string]string{} // tool call id → tool name, until answered
	lastMsgID, lastTime, model := "", "", ""
	var lastMs int64
	prevSide := false // the last message was on the assistant side
	err := classifyLines(ctx, sp, d, &measuring, func(li *lineInfo) error {
		at := st.Lines // the line's number, from 0
		st.Lines++
		r := rec{n: li.n}
		switch li.state {
		case badLine:
			if err := onBad(&transcript.BadLineError{Name: name, Line: st.Lines, Err: li.err}); err != nil {
				return err
			}
			fallthrough
		case blankLine:
			return add(&r, nil, gauge.LedgerLine{})
		}
		f := &li.f
		r.entry = true
		r.kind, r.chars, r.prompt, r.adjustAt = f.kind, f.chars, f.prompt, f.adjustAt
		if f.keepable {
			r.id = f.id
		}
		if f.model != "" {
			model = f.model
		}
		for _, c := range f.calls {
			if c.id != "" {
				names[c.id] = c.name
			}
		}
		switch f.kind {
		case assistant:
			switch {
			case f.msgID != "":
				r.start = f.msgID != lastMsgID
				lastMsgID = f.msgID
			case f.sideItem:
				r.start = !prevSide
			default:
				r.start = true
			}
			lastTime, lastMs = f.time, f.timeMs
			if r.start {
				p.noteStart(at)
			}
		}
		if f.kind != none || f.prompt {
			prevSide = f.kind == assistant // a prompt ends the assistant's side too
		}
		if f.compaction {
			kept = &keptStart{at: at, id: f.keptID, index: f.keptIndex}
		}
		if len(f.slots) > 0 {
			for i := range f.slots {
				s := &f.slots[i]
				if s.callID != "" {
					if n, ok := names[s.callID]; ok {
						if s.tool == "" {
							s.tool = n
						}
						delete(names, s.callID)
					}
				}
			}
			return add(&r, &resLine{id: f.id, fixed: f.fixed, rootEnd: f.rootEnd,
				ext: f.ext, extEmpty: f.extEmpty, slots: f.slots, adjusted: f.adjusted}, f.acct)
		}
		return add(&r, nil, f.acct)
	})
	if err != nil {
		return nil, time.Time{}, err
	}
	if kept != nil {
		if p.ctxStart, err = kept.find(recs); err != nil {
			return nil, time.Time{}, err
		}
	}
	p.window = opt.Window
	if p.window == 0 {
		p.window = gauge.WindowFor(model)
	}
	var last time.Time
	if lastTime != "" {
		last, _ = time.Parse(time.RFC3339Nano, lastTime)
	}
	if last.IsZero() && lastMs > 0 {
		last = time.UnixMilli(lastMs)
	}
	return p, last, nil
}

// keptStart is where the context starts after a compaction at line at:
// after it, or for OpenClaw/pi at the first entry it keeps (which stands
// before it), named by its id or (v1) its number.
type keptStart struct {
	at    int
	id    string
	index int // -1: none
}

// find reads the records before the compaction for the entry it keeps.
func (k keptStart) find(recs *records) (int, error) {
	if k.id == "" && k.index < 0 {
		return k.at + 1, nil
	}
	found, entries := -1, 0
	err := recs.each(func(i int, r *rec, _ *resLine) error {
		if i >= k.at {
			return errStop
		}
		if k.id != "" {
			if r.id == k.id {
				found = i // the last before the compaction
			}
			return nil
		}
		// v1 numbers the entries pi parses from 0, the header first; a
		// blank or bad line gets no number.
		if r.entry {
			if entries == k.index {
				found = i
				return errStop
			}
			entries++
		}
		return nil
	})
	if found < 0 {
		found = k.at + 1
	}
	return found, err
}

// write copies the input to w with the planned edits. The input is read
// once more, in order and in large pieces; only the lines that change are
// looked at, the rest is copied as bytes.
//
// With a store, editing a line means hashing what it moves, so lines are
// edited on every core: this goroutine reads, workers edit, and a
// forwarder takes the results in input order to OnMoved and the sink,
// whose own workers store the blobs.
func write(ctx context.Context, name string, w io.Writer, sp *spool.Spool, p *planner, opt *Options) error {
	if opt.Store == nil {
		return writeLossy(ctx, name, w, sp, p, opt)
	}
	var commit func() error
	var batch blobstore.Batcher
	if b, ok := opt.Store.(blobstore.Batcher); ok {
		batch = b
		commit = func() error { return b.Commit(ctx) }
	}
	sink := transcript.NewSink(w, opt.Workers, commit)
	// Lines are edited on every core and forwarded in input order.
	edits := par.NewStream(runtime.GOMAXPROCS(0), 256, editBudget, func() func(*editItem) int {
		return func(it *editItem) int {
			it.e, it.err = change(nil, it.line, it.l, it.adj, it.at, opt)
			return 0
		}
	})
	// forward passes an item on in input order.
	forward := func(it *editItem) error {
		if !it.edit {
			sink.Write(it.line)
			return nil
		}
		num, line, e := it.num, it.line, it.e
		if it.err != nil {
			return fmt.Errorf("%s: line %d: %w", name, num, it.err)
		}
		// A usage line's _adjusted says what the lines before it gave up:
		// it is right only if their blobs are stored (Sink.WriteAfter).
		if len(e.blobs) == 0 {
			if it.adj != nil {
				sink.WriteAfter(e.out, line)
			} else {
				sink.Write(e.out)
			}
			return nil
		}
		if opt.OnMoved != nil {
			for _, m := range e.moved {
				m.m.Line = num
				opt.OnMoved(m.m, m.text)
			}
		}
		out, blobs := e.out, e.blobs
		do := sink.Go
		if it.adj != nil {
			do = sink.GoAfter
		}
		do(ctx, len(out)+len(line), func(ctx context.Context) ([]byte, []byte, error) {
			for _, b := range blobs {
				var err error
				if batch != nil {
					err = batch.PutPending(ctx, b.d, b.data)
				} else {
					_, err = opt.Store.Put(ctx, b.data)
				}
				if err != nil {
					return nil, line, fmt.Errorf("%s: line %d: storing %s: %w", name, num, b.d, err)
				}
			}
			return out, line, nil
		})
		return nil
	}
	var ferr error // the first error forwarding met
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for it, ok := edits.Next(); ok; it, ok = edits.Next() {
			if ferr == nil {
				if ferr = forward(it); ferr != nil {
					edits.Stop()
				}
			}
		}
	}()
	// send queues an item; false once forwarding has stopped.
	send := func(it *editItem) bool { return edits.Send(it, len(it.line), it.edit) }
	rd := bufio.NewReaderSize(sp.Section(0, sp.Size()), readSize)
	err := func() error {
		stopped := false
		queue := func(b []byte) {
			if !stopped {
				stopped = !send(&editItem{line: bytes.Clone(b)})
			}
		}
		var pos int64 // input read so far
		err := p.eachChange(func(i int, r *rec, l *resLine, adj *gauge.Adjustment) error {
			if err := pass(rd, r.off-pos, queue); err != nil {
				return err
			}
			if stopped {
				return errStop
			}
			pos = r.off + int64(r.n)
			if err := ctx.Err(); err != nil {
				return err
			}
			line := hugemem.Make(r.n, r.n)
			if _, err := io.ReadFull(rd, line); err != nil {
				return eofUnexpected(err)
			}
			if !send(&editItem{line: line, l: l, adj: adj, at: r.adjustAt, num: i + 1, edit: true}) {
				stopped = true
				return errStop
			}
			return nil
		})
		if err != nil || stopped {
			return err
		}
		return pass(rd, sp.Size()-pos, queue)
	}()
	edits.Close()
	<-forwarded
	if ferr != nil {
		err = ferr // it stands before whatever stopped reading
	}
	if cerr := sink.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing output: %w", cerr)
	}
	return err
}

// editItem is a changed line on its way to the output, or (edit false)
// bytes passed on unchanged.
type editItem struct {
	line []byte
	l    *resLine          // its tool results to trim, if any
	adj  *gauge.Adjustment // its new _adjusted, if any
	at   transcript.Edit   // where that goes (rec.adjustAt)
	num  int               // its line number
	edit bool              // a worker sets e and err
	e    edited
	err  error
}

// editBudget bounds the bytes of lines read but not yet handed to the
// sink.
const editBudget = 16 << 20

// writeLossy is write without a store: with no jobs to wait for, lines go
// straight to a buffered writer, and the buffers they were read into are
// used again.
func writeLossy(ctx context.Context, name string, w io.Writer, sp *spool.Spool, p *planner, opt *Options) error {
	rd := bufio.NewReaderSize(sp.Section(0, sp.Size()), readSize)
	bw := bufio.NewWriterSize(w, 256<<10)
	var werr error // the first write error
	put := func(b []byte) {
		if werr == nil {
			_, werr = bw.Write(b)
		}
	}
	err := func() error {
		var pos int64 // input copied so far
		var buf, long []byte
		err := p.eachChange(func(i int, r *rec, l *resLine, adj *gauge.Adjustment) error {
			if err := pass(rd, r.off-pos, put); err != nil {
				return err
			}
			pos = r.off + int64(r.n)
			if err := ctx.Err(); err != nil {
				return err
			}
			var line []byte
			if r.n <= rd.Size() {
				// In the reader's buffer: valid until its next read.
				var err error
				if line, err = rd.Peek(r.n); err != nil {
					return eofUnexpected(err)
				}
				rd.Discard(r.n)
			} else {
				if r.n >= hugemem.Huge {
					long = hugemem.Make(r.n, r.n) // not kept: Make waits for it to go
				} else {
					long = slices.Grow(long[:0], r.n)[:r.n]
				}
				if _, err := io.ReadFull(rd, long); err != nil {
					return eofUnexpected(err)
				}
				line = long
				if r.n >= hugemem.Huge {
					long = nil
				}
			}
			e, err := change(buf[:0], line, l, adj, r.adjustAt, opt)
			if err != nil {
				return fmt.Errorf("%s: line %d: %w", name, i+1, err)
			}
			buf = e.out
			put(e.out)
			if werr != nil {
				return errStop
			}
			return nil
		})
		if err != nil || werr != nil {
			return err
		}
		return pass(rd, sp.Size()-pos, put)
	}()
	if werr == nil {
		werr = bw.Flush()
	}
	if err == nil && werr != nil {
		err = fmt.Errorf("writing output: %w", werr)
	}
	return err
}

func (l *resLine) changes() bool {
	for _, a := range l.acts {
		if a != keep {
			return true
		}
	}
	return false
}

// change rewrites one line: its tool results as the plan says (edit),
// then its _adjusted, which goes where the scan found its place (at)
// unless the edits moved it.
func change(dst, line []byte, l *resLine, adj *gauge.Adjustment, at transcript.Edit, opt *Options) (edited, error) {
	var e edited
	if l != nil {
		var err error
		if e, err = edit(dst, line, l, opt); err != nil || adj == nil {
			return e, err
		}
		line = e.out
	}
	if adj == nil {
		return edited{out: append(dst, line...)}, nil
	}
	body, nl := line, false
	if len(body) > 0 && body[len(body)-1] == '\n' {
		body, nl = body[:len(body)-1], true
	}
	var edit transcript.Edit
	if l == nil && (at.Start != 0 || at.End != 0) {
		edit = adj.EditAt(at) // no edit moved the place the scan found
	} else {
		var p transcript.Parser
		t, err := p.Parse(body)
		if err != nil {
			return e, err
		}
		edit = adj.Edit(t)
	}
	var err error
	e.out, err = transcript.SpliceLine(transcript.Line{Body: body, Newline: nl}, []transcript.Edit{edit})
	return e, err
}

// pass hands the next n bytes of rd to put unchanged, a buffer at a time;
// each piece is valid only during the call.
func pass(rd *bufio.Reader, n int64, put func([]byte)) error {
	for n > 0 {
		b, err := rd.Peek(int(min(n, int64(rd.Size()))))
		if len(b) > 0 {
			put(b)
			rd.Discard(len(b))
			n -= int64(len(b))
		} else if err != nil {
			return eofUnexpected(err)
		}
	}
	return nil
}

func eofUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// readSize is the buffer the second pass reads the input with, a variable
// so that tests can make lines longer than it.
var readSize = 1 << 20

// edited is one changed line with the blobs it needs stored first.
type edited struct {
	out   []byte
	blobs []blob
	moved []moved
}

type blob struct {
	d    blobstore.Digest
	data []byte
}

type moved struct {
	m    Moved
	text []byte
}

// edit rewrites one line: each chosen tool result becomes its trimmed or
// cleared form, and with a store the original goes into _extracted.
func edit(dst, line []byte, l *resLine, opt *Options) (edited, error) {
	body, nl := line, false
	if len(body) > 0 && body[len(body)-1] == '\n' {
		body, nl = body[:len(body)-1], true
	}
	var e edited
	id, derived := l.id, false
	if opt.Store != nil && id == "" {
		id, derived = transcript.DeriveIDCut(body, l.adjusted.Start, l.adjusted.End), true
	}
	suffix := ""
	if opt.Store != nil {
		if !transcript.PlaceholderSafe(id) {
			// Restore could not find a placeholder of this id again, so
			// what trim removed would be lost: leave the line whole.
			return edited{out: append(dst, line...)}, nil
		}
		suffix = " " + transcript.Placeholder(id)
	}
	var edits []transcript.Edit
	var meta []byte
	for k := range l.slots {
		s := &l.slots[k]
		a := l.acts[k]
		if a == keep {
			continue
		}
		var text []byte // the new string, quoted
		switch a {
		case soft:
			parts := make([][]byte, len(s.texts))
			for i, x := range s.texts {
				parts[i] = body[x.start:x.end]
			}
			head, tail := max(0, opt.SoftHead), max(0, opt.SoftTail)
			text = append(text, '"')
			text = appendHead(text, parts, head)
			text = appendInner(text, softSep)
			text = appendTail(text, parts, tail)
			text = appendInner(text, trimNote(head, tail, s.rawLen)+suffix)
			text = append(text, '"')
		case hard:
			text = transcript.AppendQuote(nil, opt.Placeholder+suffix)
		}
		value := text
		if !s.asString {
			value = []byte(`[{"type":`)
			value = transcript.AppendQuote(value, s.block)
			value = append(value, `,"text":`...)
			value = append(value, text...)
			value = append(value, `}]`...)
		}
		edits = append(edits, transcript.Edit{Start: s.start, End: s.end, Text: value})
		if opt.Store == nil {
			continue
		}
		raw := body[s.start:s.end]
		d := blobstore.Sum(raw)
		e.blobs = append(e.blobs, blob{d, raw})
		if len(meta) > 0 {
			meta = append(meta, ',')
		}
		meta = transcript.AppendExtractedRecord(meta, s.ptr, d.String(), len(raw), l.tokens[k])
		action := "soft-trim"
		if a == hard {
			action = "hard-clear"
		}
		e.moved = append(e.moved, moved{Moved{EntryID: id, Pointer: s.ptr, Bytes: len(raw), Blob: d.String(), Tool: s.tool, Action: action}, slotText(body, s)})
	}
	if len(meta) > 0 {
		if derived {
			edits = append(edits, transcript.Edit{Start: l.rootEnd, End: l.rootEnd, Text: transcript.AppendQuote([]byte(`,"__id":`), id)})
		}
		switch {
		case l.ext < 0:
			v := append([]byte(`,"_extracted":{`), meta...)
			edits = append(edits, transcript.Edit{Start: l.rootEnd, End: l.rootEnd, Text: append(v, '}')})
		case l.extEmpty:
			edits = append(edits, transcript.Edit{Start: l.ext, End: l.ext, Text: meta})
		default:
			edits = append(edits, transcript.Edit{Start: l.ext, End: l.ext, Text: append([]byte{','}, meta...)})
		}
	}
	out, err := transcript.Splice(dst, body, edits)
	if err != nil {
		return e, err
	}
	if nl {
		out = append(out, '\n')
	}
	e.out = out
	return e, nil
}

// appendInner appends s as the inside of a JSON string.
func appendInner(dst []byte, s string) []byte {
	n := len(dst)
	dst = transcript.AppendQuote(dst, s)
	copy(dst[n:], dst[n+1:len(dst)-1])
	return dst[:len(dst)-2]
}

// slotText is a moved result's text for the search index, as a raw JSON
// string: the string itself, or its text parts joined.
func slotText(body []byte, s *slot) []byte {
	if len(s.texts) == 1 {
		return body[s.texts[0].start:s.texts[0].end]
	}
	out := []byte{'"'}
	for i, x := range s.texts {
		if i > 0 {
			out = append(out, `\n`...)
		}
		out = append(out, body[x.start+1:x.end-1]...)
	}
	return append(out, '"')
}
