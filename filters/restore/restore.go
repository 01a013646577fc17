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
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bstools/bs/blobstore"
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
}

// Result is seed 000's restore result, for the agent that asked.
type Result struct {
	Restored           bool     `json:"restored"`
	EntryID            string   `json:"entry_id"`
	KeysRestored       []string `json:"keys_restored"`
	PreviousRestoredAt string   `json:"previous_restored_at,omitempty"`
	Suggestion         string   `json:"suggestion,omitempty"`
	Error              string   `json:"error,omitempty"`
}

// Suggestion is given when an entry is restored a second time.
const Suggestion = "This entry was previously restored. If you need to keep this content long-term, consider setting _extractable: false on the entry."

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

	mu   sync.Mutex // guards errs and res.KeysRestored, written by jobs
	errs []error
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
		x.res = &Result{EntryID: opt.ID, KeysRestored: []string{}}
	}
	src := transcript.NewSource(name, r, opt.Format, func(e *transcript.BadLineError) error {
		x.stats.BadLines++
		if opt.OnBadLine != nil {
			return opt.OnBadLine(e)
		}
		return nil
	})
	sink := transcript.NewSink(w, opt.Workers, nil)
	skip := 0 // lines after a roll marker that are copies of lines in its range
	err := func() error {
		for {
			if err := ctx.Err(); err != nil {
				return err
			}
			line, tree, err := src.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			x.stats.Lines++
			if opt.All {
				// Undo bs roll: its notes go, its marker becomes the
				// evicted range again, and the copies after it go.
				if tree != nil && tree.Get(0, rolledField) >= 0 && tree.Get(0, evictedField) < 0 {
					continue
				}
				if skip > 0 {
					skip--
					continue
				}
				if tree != nil && tree.Get(0, evictedField) >= 0 {
					n, ok := x.unroll(ctx, sink, line, tree)
					if ok {
						skip = n
						continue
					}
				}
			}
			if tree == nil {
				sink.Write(line.AppendTo(nil))
				continue
			}
			if err := x.line(ctx, sink, line, tree, src.Dialect()); err != nil {
				return err
			}
		}
	}()
	if cerr := sink.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("writing output: %w", cerr)
	}
	if err != nil {
		return x.res, x.stats, err
	}
	if x.res != nil && len(x.res.KeysRestored) > 0 {
		x.res.Restored = true
	}
	if x.res != nil && !x.res.Restored && len(x.errs) == 0 {
		msg := fmt.Sprintf("entry %s not found", opt.ID)
		if x.found {
			msg = fmt.Sprintf("entry %s has no extracted values", opt.ID)
			if len(opt.Keys) > 0 {
				msg += " under the keys asked for"
			}
		}
		x.res.Error = msg
		x.errs = append(x.errs, &NotFoundError{Msg: msg})
	}
	for id := range opt.SetExtractable {
		if !x.setHit[id] {
			x.errs = append(x.errs, &NotFoundError{Msg: fmt.Sprintf("entry %s not found", id)})
		}
	}
	if x.res != nil && len(x.errs) > 0 && x.res.Error == "" {
		x.res.Error = x.errs[0].Error()
	}
	return x.res, x.stats, errors.Join(x.errs...)
}

// The members bs roll writes (see package roll, which imports this one's
// neighbours, not the other way round).
const (
	rolledField  = "_rolled"
	evictedField = "_evicted"
)

// unroll queues the evicted range a roll marker stands for, and returns
// how many lines after it are copies to drop. If the range cannot be read
// back exactly, the marker passes through unchanged (ok false).
func (x *run) unroll(ctx context.Context, sink *transcript.Sink, line transcript.Line, t *transcript.Tree) (int, bool) {
	ev := t.Get(0, evictedField)
	fail := func(blob string, err error) (int, bool) {
		x.errs = append(x.errs, &BlobError{Line: line.Num, EntryID: "(rolled range)", Blob: blob, Err: err})
		return 0, false
	}
	skip, err := strconv.Atoi(string(t.Raw(max(t.Get(ev, "skip"), 0))))
	size, serr := strconv.Atoi(string(t.Raw(max(t.Get(ev, "bytes"), 0))))
	blobs := t.Get(ev, "blobs")
	if err != nil || serr != nil || blobs < 0 || t.Nodes[blobs].Kind != '[' {
		return fail("", fmt.Errorf("bad %s member", evictedField))
	}
	// Check every blob before writing any, so a failure leaves the
	// marker, not half a range.
	var digests []blobstore.Digest
	var bad error
	var badBlob string
	t.Children(blobs, func(c, _ int) {
		d, err := blobstore.ParseDigest(t.Str(c))
		if err != nil && bad == nil {
			bad, badBlob = err, t.Str(c)
		}
		digests = append(digests, d)
	})
	if bad != nil {
		return fail(badBlob, bad)
	}
	total := 0
	for _, d := range digests {
		ok, err := x.opt.Store.Has(ctx, d)
		if err == nil && !ok {
			err = fmt.Errorf("blob %s: %w", d, blobstore.ErrNotFound)
		}
		if err != nil {
			return fail(d.String(), err)
		}
	}
	for _, d := range digests {
		data, err := x.opt.Store.Get(ctx, d)
		if err != nil {
			// Lines already queued cannot be taken back; say so loudly.
			return fail(d.String(), fmt.Errorf("%w (the range is partly restored)", err))
		}
		total += len(data)
		sink.Write(data)
	}
	if total != size {
		x.errs = append(x.errs, &BlobError{Line: line.Num, EntryID: "(rolled range)", Err: fmt.Errorf("the evicted range holds %d bytes, %s says %d", total, evictedField, size)})
	}
	x.stats.Entries++
	return skip, true
}

// fetch is an extracted value to read back from the store.
type fetch struct {
	ptr   string
	node  int
	blob  blobstore.Digest
	bytes string // the size _extracted records, as written there
}

// line plans the changes to one line and queues them on the sink. Blobs
// are read on the sink's workers; the whole entry passes through unchanged
// if any of its values cannot be restored exactly.
func (x *run) line(ctx context.Context, sink *transcript.Sink, line transcript.Line, t *transcript.Tree, d transcript.Dialect) error {
	e := transcript.View(t, d)
	var edits []transcript.Edit
	mine := x.opt.ID != "" && e.ID == x.opt.ID
	if mine {
		x.found = true
	}

	if raw, ok := x.opt.SetExtractable[e.ID]; ok && e.ID != "" {
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
			x.errs = append(x.errs, err)
			sink.Write(line.AppendTo(nil))
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
			x.res.Suggestion = Suggestion
			edits = append(edits, t.ReplaceValue(e.Restored, now))
		} else {
			edits = append(edits, t.InsertMember(0, "_restored", now))
		}
	}

	redacting := x.opt.ID != "" && !x.opt.KeepRestoreCalls
	if redacting && e.Redacted < 0 && isRestoreCall(e.Tools) {
		edits = append(edits, t.InsertMember(0, "_redacted", []byte("true")))
	}

	orig := line.AppendTo(nil)
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
	sink.Go(ctx, size, func(ctx context.Context) ([]byte, []byte, error) {
		all := edits
		sizes := make(map[string]int, len(fetches))
		for i, f := range fetches {
			data, err := x.opt.Store.Get(ctx, f.blob)
			if err == nil && f.bytes != "" && f.bytes != strconv.Itoa(len(data)) {
				err = fmt.Errorf("blob %s holds %d bytes, _extracted says %s", f.blob, len(data), f.bytes)
			}
			if err != nil {
				x.fail(&BlobError{Line: line.Num, EntryID: id, Blob: f.blob.String(), Err: err})
				return orig, nil, nil
			}
			all = append(all, transcript.Edit{Start: spans[i][0], End: spans[i][1], Text: data})
			sizes[f.ptr] = len(data)
		}
		body, err := transcript.Splice(nil, line.Body, all)
		if err != nil {
			return nil, orig, fmt.Errorf("line %d: %w", line.Num, err)
		}
		if dropID != nil {
			// The __id goes too if bs derived it from exactly the bytes
			// that are now back: then this is the original line.
			if without, err := transcript.Splice(nil, line.Body, append(all, *dropID)); err == nil && transcript.DeriveID(without) == id {
				body = without
			}
		}
		if mine {
			x.mu.Lock()
			x.res.KeysRestored = append(x.res.KeysRestored, restored...)
			x.mu.Unlock()
		}
		if len(fetches) > 0 {
			x.opt.Log.Debug("restored", "module", "extraction", "entry_id", id, "keys_restored", restored, "sizes_bytes", sizes, "redacted", redacting, "session", x.opt.Session, "line", line.Num)
		}
		return transcript.Line{Body: body, Newline: line.Newline}.AppendTo(nil), orig, nil
	})
	return nil
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
		if !holdsPlaceholder(t, node) {
			fail(fmt.Errorf("%s no longer holds a placeholder", ptr))
			return
		}
		var size string
		if n := t.Get(m, "bytes"); n >= 0 {
			size = string(t.Raw(n))
		}
		fetches = append(fetches, fetch{ptr: ptr, node: node, blob: d, bytes: size})
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

func holdsPlaceholder(t *transcript.Tree, n int) bool {
	switch t.Nodes[n].Kind {
	case '"':
		return transcript.IsRawPlaceholder(t.Raw(n))
	case '{':
		text := t.Get(n, "text")
		return text >= 0 && transcript.IsRawPlaceholder(t.Raw(text))
	}
	return false
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
		if t != "restore" && t != "purge_control" {
			return false
		}
	}
	return true
}
