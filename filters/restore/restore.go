// Package restore puts extracted values back where their placeholders
// stand, byte for byte, and records the restore as seed 000 describes.
package restore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// Options configure a run. Exactly one of ID and All selects what to
// restore; either may be unset when only SetExtractable is wanted.
type Options struct {
	ID   string   // restore this entry
	Keys []string // only these keys of it: a JSON Pointer or its last token
	All  bool     // restore every entry, leaving no trace (the inverse of extract)

	KeepRestoreCalls bool              // do not redact restore/purge_control calls
	SetExtractable   map[string][]byte // entry id → raw JSON for _extractable

	Now       time.Time
	Store     blobstore.Store
	Format    transcript.Dialect
	Log       *slog.Logger
	Session   string
	Workers   int // concurrent blob reads
	OnBadLine func(*transcript.BadLineError) error
	LineNum   func(n int) int // the number to report for the nth line read (nil: n), when r is an excerpt
}

// Result is seed 000's restore result, for the agent that asked.
type Result struct {
	Restored bool   `json:"restored"`
	EntryID  string `json:"entry_id"`
	// KeysRestored names the keys as seed 000 does (["content"]:
	// transcript.KeyName), each once; PointersRestored is the JSON Pointer
	// of each value put back, as _extracted and get_context list them.
	KeysRestored       []string `json:"keys_restored"`
	PointersRestored   []string `json:"pointers_restored"`
	PreviousRestoredAt string   `json:"previous_restored_at,omitempty"`
	Suggestion         string   `json:"suggestion,omitempty"`
	Error              string   `json:"error,omitempty"`
}

// keyNames are the keys seed 000 names for the values at ptrs of a line
// of dialect d (transcript.KeyName), each once, in order.
func keyNames(d transcript.Dialect, ptrs []string) []string {
	names := []string{}
	for _, p := range ptrs {
		if k := transcript.KeyName(d, p); !slices.Contains(names, k) {
			names = append(names, k)
		}
	}
	return names
}

// suggestion is given when an entry is restored a second time.
const suggestion = "This entry was previously restored. If you need to keep this content long-term, consider setting _extractable: false on the entry."

// BlobError is a blob that could not be read back. The entry it belongs to
// passes through unchanged.
type BlobError struct {
	Line    int
	EntryID string
	Blob    string
	Err     error
}

func (e *BlobError) Error() string {
	return fmt.Sprintf("line %d: entry %s: %v", e.Line, e.EntryID, e.Err)
}

func (e *BlobError) Unwrap() error { return e.Err }

// NotFoundError says the entry asked for is not in the transcript, or has
// nothing extracted under the keys asked for.
type NotFoundError struct{ Msg string }

func (e *NotFoundError) Error() string { return e.Msg }

// Stats summarise a run.
type Stats struct {
	Lines    int
	Entries  int
	Values   int
	BadLines int
}

type run struct {
	opt    Options
	res    *Result
	stats  Stats
	found  bool
	setHit map[string]bool
	packed bool // the transcript holds a range bs roll evicted or turns bs archive collapsed

	// Undoing bs roll (--all only).
	skip         int  // lines still to drop after a marker: its copies
	unrollFailed bool // a range could not be read back: keep every roll line
	// The last note dropped said roll gave the input's last line its line
	// feed, and no line has been written since: the output ends without.
	dropNewline bool

	// spent holds the spend records read since the last other line: they
	// stand right before the roll marker or archived turn whose lines
	// they stand for, and go when it is put back, or stay with it when it
	// cannot be.
	spent [][]byte

	mu   sync.Mutex // guards errs and res.PointersRestored, written by jobs
	errs []error

	// ledger carries what a restore of some entries puts back into the
	// context onto the usage lines after them (gauge.Ledger); nil under
	// --all, which takes every _adjusted away with the rest.
	ledger *gauge.Ledger
}

// Run restores from r to w. It returns the result object when ID is set.
// Failures to read blobs do not stop the run: the affected entries pass
// through unchanged and the errors are returned, joined, at the end.
func Run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (*Result, Stats, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Workers < 1 {
		opt.Workers = 8
	}
	x := &run{opt: opt, setHit: map[string]bool{}}
	if opt.ID != "" {
		x.res = &Result{EntryID: opt.ID, KeysRestored: []string{}, PointersRestored: []string{}}
	}
	src := transcript.NewSource(name, r, opt.Format, func(e *transcript.BadLineError) error {
		x.stats.BadLines++
		if opt.OnBadLine != nil {
			return opt.OnBadLine(e)
		}
		return nil
	})
	end := &finalNewline{w: w}
	if opt.All {
		w = end
	} else {
		est := gauge.CharsPer4{}
		x.ledger = gauge.NewSparseLedger(est)
		// A sparse ledger reads no estimate: the role of each line will do.
		src.Annotate(func(t *transcript.Tree, d transcript.Dialect) any { return gauge.LedgerLineOf(t, d, est, false) })
	}
	sink := transcript.NewSink(w, opt.Workers, nil)
	err := func() error {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			line, tree, err := src.Next()
			if err == io.EOF {
				for _, s := range x.spent {
					sink.Write(s) // records no marker follows: they stay
				}
				return nil
			}
			if err != nil {
				return err
			}
			x.stats.Lines++
			if opt.LineNum != nil {
				line.Num = opt.LineNum(line.Num)
			}
			if err := x.handle(ctx, sink, line, tree, src.Dialect(), src.Annotation()); err != nil {
				return err
			}
		}
	}()
	cerr := sink.Close()
	if cerr == nil && opt.All {
		cerr = end.finish(x.dropNewline)
	}
	if err == nil && cerr != nil {
		err = fmt.Errorf("writing output: %w", cerr)
	}
	if err != nil {
		return x.res, x.stats, err
	}
	if x.res != nil && len(x.res.PointersRestored) > 0 {
		x.res.Restored = true
		x.res.KeysRestored = keyNames(src.Dialect(), x.res.PointersRestored)
	}
	if x.res != nil && !x.res.Restored && len(x.errs) == 0 {
		msg := fmt.Sprintf("entry %s not found", opt.ID)
		if x.packed {
			// Its line may be inside a range roll evicted or a turn
			// archive collapsed, which only --all brings back.
			msg += notFoundPacked
		}
		if x.found {
			msg = fmt.Sprintf("entry %s has no extracted values", opt.ID)
			if len(opt.Keys) > 0 {
				msg += " under the keys asked for"
			}
		}
		x.res.Error = msg
		x.fail(&NotFoundError{Msg: msg})
	}
	for id := range opt.SetExtractable {
		if !x.setHit[id] {
			x.fail(&NotFoundError{Msg: fmt.Sprintf("entry %s not found", id)})
		}
	}
	// Values are fetched in parallel: their failures are told in the
	// order of the lines, not of the fetches.
	slices.SortStableFunc(x.errs, func(a, b error) int { return errorLine(a) - errorLine(b) })
	if x.res != nil && len(x.errs) > 0 && x.res.Error == "" {
		x.res.Error = x.errs[0].Error()
	}
	return x.res, x.stats, errors.Join(x.errs...)
}

// notFoundPacked says where an entry not found may be.
const notFoundPacked = "; it may be in a range bs roll evicted or a turn bs archive collapsed: 'bs restore --all' brings those back, after which it can be restored by id"

// handle restores one line. Under --all it first undoes bs archive (an
// archive marker becomes the turn's lines again) and bs roll: the copies
// after a marker go, the marker becomes the evicted range again (each of
// its lines restored in turn), and roll's notes go.
func (x *run) handle(ctx context.Context, sink *transcript.Sink, line transcript.Line, t *transcript.Tree, d transcript.Dialect, acct any) error {
	if t != nil && (t.Get(0, transcript.EvictedField) >= 0 || t.Get(0, transcript.ArchivedField) >= 0) {
		x.packed = true
	}
	if x.opt.All {
		if x.skip > 0 {
			x.skip--
			return nil
		}
		dropNewline := x.dropNewline
		x.dropNewline = false // a line follows the one roll ended, unless this is a note
		if t != nil && t.Get(0, transcript.SpentField) >= 0 {
			x.spent = append(x.spent, bytes.Clone(line.Bytes()))
			return nil
		}
		// The spend records before this line are for it if it is a roll
		// marker or an archived turn that comes back; else they stay.
		spent := x.spent
		x.spent = nil
		if t != nil && t.Get(0, transcript.ArchivedField) >= 0 {
			if ok, err := x.unarchive(ctx, sink, line, t, d); ok || err != nil {
				return err
			}
		}
		if t != nil && t.Str(t.Path(0, transcript.RolledField, "by")) == transcript.RolledBy && t.Get(0, transcript.EvictedField) >= 0 {
			if ok, err := x.unroll(ctx, sink, line, t, d); ok || err != nil {
				return err
			}
		}
		for _, s := range spent {
			sink.Write(s)
		}
		if t != nil && t.Str(t.Path(0, transcript.RolledField, "by")) == transcript.RolledBy {
			if t.Get(0, transcript.EvictedField) >= 0 {
				// A marker that could not be put back: it stays.
			} else if !x.unrollFailed {
				// A note: not part of the original.
				k := t.Get(t.Get(0, transcript.RolledField), transcript.RolledNewline)
				x.dropNewline = dropNewline || k >= 0 && string(t.Raw(k)) == "true"
				return nil
			}
		}
	}
	if t == nil {
		if x.ledger != nil {
			x.ledger.Add(gauge.UnparsedLedgerLine(line.Body))
		}
		sink.Write(line.Bytes())
		return nil
	}
	return x.line(ctx, sink, line, t, d, acct)
}

// unroll puts back the evicted range a roll marker stands for: every blob
// is read and verified before any line is written, so a failure leaves the
// marker (ok false), never half a range.
func (x *run) unroll(ctx context.Context, sink *transcript.Sink, line transcript.Line, t *transcript.Tree, d transcript.Dialect) (bool, error) {
	ev := t.Get(0, transcript.EvictedField)
	fail := func(blob string, err error) (bool, error) {
		x.unrollFailed = true
		x.keep(sink, &BlobError{Line: line.Num, EntryID: "(rolled range)", Blob: blob, Err: err})
		return false, nil
	}
	skip, err := strconv.Atoi(string(t.Raw(max(t.Get(ev, "skip"), 0))))
	size, serr := strconv.Atoi(string(t.Raw(max(t.Get(ev, "bytes"), 0))))
	if err != nil || serr != nil {
		return fail("", fmt.Errorf("bad %s member", transcript.EvictedField))
	}
	digests, err := evictedBlobs(t, ev)
	if err != nil {
		return fail("", fmt.Errorf("bad %s member: %w", transcript.EvictedField, err))
	}
	// First pass: read (Get verifies each digest) and count.
	total := 0
	for _, dg := range digests {
		data, err := x.opt.Store.Get(ctx, dg)
		if err != nil {
			return fail(dg.String(), err)
		}
		total += len(data)
	}
	if total != size {
		return fail("", fmt.Errorf("the evicted range holds %d bytes, %s says %d", total, transcript.EvictedField, size))
	}
	// Second pass: each line of the range goes through restore again, so
	// values extracted before the roll, and earlier rolls, come back too.
	x.stats.Entries++
	var p transcript.Parser
	for _, dg := range digests {
		data, err := x.opt.Store.Get(ctx, dg)
		if err != nil {
			return false, fmt.Errorf("line %d: the evicted range became unreadable while restoring it: %w", line.Num, err)
		}
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			l := transcript.Line{Num: line.Num, Body: data, Newline: false}
			if i >= 0 {
				l.Body, l.Newline, data = data[:i], true, data[i+1:]
			} else {
				data = nil
			}
			var lt *transcript.Tree
			if len(bytes.TrimSpace(l.Body)) > 0 {
				if tr, err := p.Parse(l.Body); err == nil {
					lt = tr
				}
			}
			if err := x.handle(ctx, sink, l, lt, d, nil); err != nil {
				return false, err
			}
		}
	}
	x.skip = skip
	return true, nil
}

// fetch is an extracted value to read back from the store.
type fetch struct {
	ptr   string
	node  int
	blob  blobstore.Digest
	bytes string // the size _extracted records, as written there
	// tokens is what putting the value back adds to the context, as its
	// record says extracting it took out.
	tokens int
}

// line plans the changes to one line and queues them on the sink. Blobs
// are read on the sink's workers; the whole entry passes through unchanged
// if any of its values cannot be restored exactly.
func (x *run) line(ctx context.Context, sink *transcript.Sink, line transcript.Line, t *transcript.Tree, d transcript.Dialect, acct any) error {
	e := transcript.View(t, d)
	var edits []transcript.Edit
	// A line bs roll wrote is not the entry asked for, even with its id:
	// a Claude Code summary, or a pi bridge, takes the id of an entry it
	// evicted.
	ours := t.Get(0, transcript.RolledField) >= 0
	mine := x.opt.ID != "" && e.ID == x.opt.ID && !ours
	if mine {
		x.found = true
	}

	if raw, ok := x.opt.SetExtractable[e.ID]; ok && e.ID != "" && !ours {
		x.setHit[e.ID] = true
		if e.Extractable >= 0 {
			edits = append(edits, t.ReplaceValue(e.Extractable, raw))
		} else {
			edits = append(edits, t.InsertMember(0, "_extractable", raw))
		}
	}

	var fetches []fetch
	if e.Extracted >= 0 && (x.opt.All || mine) {
		var metaEdit *transcript.Edit
		var err error
		fetches, metaEdit, err = x.plan(line, &e)
		if err != nil {
			x.keep(sink, err)
			sink.Write(line.Bytes())
			return nil
		}
		if metaEdit != nil {
			edits = append(edits, *metaEdit)
		}
	}
	restored := make([]string, len(fetches))
	for i, f := range fetches {
		restored[i] = f.ptr
	}

	if mine && len(fetches) > 0 {
		now := transcript.AppendQuote(nil, x.opt.Now.UTC().Format(time.RFC3339))
		if e.Restored >= 0 {
			x.res.PreviousRestoredAt = t.Str(e.Restored)
			x.res.Suggestion = suggestion
			edits = append(edits, t.ReplaceValue(e.Restored, now))
		} else {
			edits = append(edits, t.InsertMember(0, "_restored", now))
		}
	}

	redacting := x.opt.ID != "" && !x.opt.KeepRestoreCalls
	if redacting && e.Redacted < 0 && isRestoreCall(e.Tools) {
		edits = append(edits, t.InsertMember(0, "_redacted", []byte("true")))
	}

	// A usage line's _adjusted says what the lines before it gave up: it
	// is right only if their restores succeed (Sink.GoAfter).
	after := false
	if x.opt.All {
		if n := t.Get(0, transcript.AdjustedField); n >= 0 {
			edits = append(edits, t.RemoveMember(n))
			after = true
		}
		// A compaction bs archive renumbered (archive.ReindexedField, a pi
		// v1 one) gets its number back once the turns before it are back.
		if n := t.Get(0, archive.ReindexedField); n >= 0 && d != nil {
			if k := d.KeptNumber(t); k >= 0 {
				if orig := t.Get(n, t.Key(k)); orig >= 0 {
					edits = append(edits, t.ReplaceValue(k, t.Raw(orig)), t.RemoveMember(n))
					after = true
				}
			}
		}
	} else if x.ledger != nil {
		l, _ := acct.(gauge.LedgerLine)
		l.Bytes = line.Len()
		for _, f := range fetches {
			if f.tokens > 0 {
				l.Added += f.tokens
			} else {
				l.Removed -= f.tokens // what stood in its place was the larger
			}
		}
		if adj, ok := x.ledger.Add(l); ok {
			edits = append(edits, adj.Edit(t))
			after = true
		}
	}

	orig := line.Bytes()
	if len(edits) == 0 && len(fetches) == 0 {
		sink.Write(orig)
		return nil
	}
	if len(fetches) > 0 {
		x.stats.Entries++
		x.stats.Values += len(fetches)
	}
	// The job owns copies of what it needs: the tree is reused for the
	// next line as soon as this function returns.
	spans := make([][2]int, len(fetches))
	for i, f := range fetches {
		spans[i] = [2]int{t.Nodes[f.node].Start, t.Nodes[f.node].End}
	}
	id := e.ID
	var dropID *transcript.Edit
	if x.opt.All && len(fetches) > 0 && e.IDField == "__id" && strings.HasPrefix(id, transcript.GeneratedIDPrefix) {
		if n := t.Get(0, "__id"); n >= 0 {
			edit := t.RemoveMember(n)
			dropID = &edit
		}
	}
	size := 2 * len(orig) // the line and its fallback, plus what comes back
	for _, f := range fetches {
		n, _ := strconv.Atoi(f.bytes)
		size += n
	}
	sink.GoPieces(ctx, size, after, func(ctx context.Context) ([][]byte, []byte, error) {
		all := edits
		sizes := make(map[string]int, len(fetches))
		for i, f := range fetches {
			data, err := x.opt.Store.Get(ctx, f.blob)
			if err == nil && f.bytes != "" && f.bytes != strconv.Itoa(len(data)) {
				err = fmt.Errorf("blob %s holds %d bytes, _extracted says %s", f.blob, len(data), f.bytes)
			}
			if err != nil {
				x.fail(&BlobError{Line: line.Num, EntryID: id, Blob: f.blob.String(), Err: err})
				return nil, orig, transcript.ErrFellBack
			}
			all = append(all, transcript.Edit{Start: spans[i][0], End: spans[i][1], Text: data})
			sizes[f.ptr] = len(data)
		}
		// In pieces: a value that comes back is written as it was read,
		// not copied into the line.
		out, err := transcript.SplicePieces(line, all)
		if err != nil {
			return nil, orig, fmt.Errorf("line %d: %w", line.Num, err)
		}
		if dropID != nil {
			// The __id goes too if bs derived it from exactly the bytes
			// that are now back: then this is the original line.
			if without, err := transcript.SplicePieces(line, append(all, *dropID)); err == nil && transcript.DeriveIDPieces(withoutNewline(without, line)) == id {
				out = without
			}
		}
		if mine {
			x.mu.Lock()
			x.res.PointersRestored = append(x.res.PointersRestored, restored...)
			x.mu.Unlock()
		}
		if len(fetches) > 0 {
			x.opt.Log.Debug("restored", "module", "extraction", "entry_id", id, "keys_restored", restored, "sizes_bytes", sizes, "redacted", redacting, "session", x.opt.Session, "line", line.Num)
		}
		return out, orig, nil
	})
	return nil
}

// withoutNewline is pieces of line (SplicePieces) without the line feed
// SplicePieces ends them with when the line has one.
func withoutNewline(pieces [][]byte, line transcript.Line) [][]byte {
	if line.Newline {
		return pieces[:len(pieces)-1]
	}
	return pieces
}

// keep records why a line passes as it was, and tells the sink, so that
// the lines whose change depends on it pass as they were too.
func (x *run) keep(sink *transcript.Sink, err error) {
	x.fail(err)
	sink.FellBack()
}

// errorLine is the line a failure names, or past every line.
func errorLine(err error) int {
	var be *BlobError
	if errors.As(err, &be) {
		return be.Line
	}
	return math.MaxInt32
}

func (x *run) fail(err error) {
	x.mu.Lock()
	x.errs = append(x.errs, err)
	x.mu.Unlock()
}

// plan selects the extracted values to restore, checks that each still
// holds its placeholder, and returns them with the edit that updates
// _extracted (nil when nothing is selected).
func (x *run) plan(line transcript.Line, e *transcript.Entry) ([]fetch, *transcript.Edit, error) {
	t := e.Tree
	var fetches []fetch
	var keep [][]byte // raw members of _extracted that stay
	var bad error
	t.Children(e.Extracted, func(m, _ int) {
		ptr := t.Key(m)
		if !x.opt.All && !keyMatches(ptr, x.opt.Keys) {
			keep = append(keep, t.Src[t.Nodes[m].KeyStart:t.Nodes[m].End])
			return
		}
		if bad != nil {
			return
		}
		blob := t.Str(t.Get(m, "blob"))
		fail := func(err error) {
			bad = &BlobError{Line: line.Num, EntryID: e.ID, Blob: blob, Err: err}
		}
		d, err := blobstore.ParseDigest(blob)
		if err != nil {
			fail(fmt.Errorf("%s: bad blob reference: %w", ptr, err))
			return
		}
		node, err := t.Resolve(ptr)
		if err != nil {
			fail(err)
			return
		}
		if !t.HoldsPlaceholder(node) {
			fail(fmt.Errorf("%s no longer holds a placeholder", ptr))
			return
		}
		var size string
		if n := t.Get(m, "bytes"); n >= 0 {
			size = string(t.Raw(n))
		}
		fetches = append(fetches, fetch{ptr: ptr, node: node, blob: d, bytes: size, tokens: recordTokens(t, m, node)})
	})
	if bad != nil {
		return nil, nil, bad
	}
	if len(fetches) == 0 {
		return nil, nil, nil
	}
	var edit transcript.Edit
	if len(keep) == 0 {
		edit = t.RemoveMember(e.Extracted)
	} else {
		obj := append([]byte{'{'}, bytes.Join(keep, []byte{','})...)
		edit = t.ReplaceValue(e.Extracted, append(obj, '}'))
	}
	return fetches, &edit, nil
}

// keyMatches reports whether ptr is selected by keys: by the whole pointer
// or by its last token. No keys selects everything.
func keyMatches(ptr string, keys []string) bool {
	if len(keys) == 0 {
		return true
	}
	last := transcript.LastToken(ptr)
	return slices.ContainsFunc(keys, func(k string) bool { return k == ptr || k == last })
}

func isRestoreCall(tools []string) bool {
	if len(tools) == 0 {
		return false
	}
	for _, t := range tools {
		// An MCP client names a server's tool with the server's name
		// before it: mcp__bs__restore (Claude Code), bs__restore.
		if _, last, ok := strings.Cut(t, "__"); ok {
			if i := strings.LastIndex(last, "__"); i >= 0 {
				last = last[i+2:]
			}
			t = last
		}
		if t != "restore" && t != "purge_control" {
			return false
		}
	}
	return true
}

// finalNewline passes writes through but holds back a line feed that ends
// one, so that the output can end without it: roll gives a last line
// without one its line feed before appending a note after it.
type finalNewline struct {
	w    io.Writer
	held bool
}

func (f *finalNewline) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if f.held {
		if _, err := f.w.Write([]byte{'\n'}); err != nil {
			return 0, err
		}
		f.held = false
	}
	body := p
	if body[len(body)-1] == '\n' {
		body, f.held = body[:len(body)-1], true
	}
	if _, err := f.w.Write(body); err != nil {
		return 0, err
	}
	return len(p), nil
}

// finish writes the line feed held back, unless it is to be dropped.
func (f *finalNewline) finish(drop bool) error {
	if !f.held || drop {
		return nil
	}
	_, err := f.w.Write([]byte{'\n'})
	return err
}

// recordTokens is what a record of _extracted (member m, for the value
// now at node) says its removal took out of the context. A record written
// before bs counted that says only the value's size: about a token for
// four of its bytes, less its placeholder.
func recordTokens(t *transcript.Tree, m, node int) int {
	if n := t.Get(m, "tokens"); n >= 0 {
		v, _ := strconv.Atoi(string(t.Raw(n)))
		return v
	}
	size, _ := strconv.Atoi(string(t.Raw(max(t.Get(m, "bytes"), 0))))
	return max(0, (size-len(t.Raw(node))+3)/4)
}
