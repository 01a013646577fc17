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
	errs   []error
	found  bool
	p      transcript.Parser
	setHit map[string]bool
}

// Run restores from r to w. It returns the result object when ID is set.
// Failures to read blobs do not stop the run: the affected entries pass
// through unchanged and the errors are returned, joined, at the end.
func Run(ctx context.Context, name string, r io.Reader, w io.Writer, opt Options) (*Result, Stats, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
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
	sink := transcript.NewSink(ctx, w, nil, 1)
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
			out := line.AppendTo(nil)
			if tree != nil {
				body, err := x.line(ctx, line, tree, src.Dialect())
				if err != nil {
					return err
				}
				if body != nil {
					out = transcript.Line{Body: body, Newline: line.Newline}.AppendTo(nil)
				}
			}
			sink.Write(out, nil, nil)
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

// line returns the new body of the line, or nil to keep it as it is.
func (x *run) line(ctx context.Context, line transcript.Line, t *transcript.Tree, d transcript.Dialect) ([]byte, error) {
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

	restoring := e.Extracted >= 0 && (x.opt.All || mine)
	var restored []string
	if restoring {
		var err error
		var valueEdits []transcript.Edit
		valueEdits, restored, err = x.values(ctx, line, &e)
		if err != nil {
			x.errs = append(x.errs, err)
			return nil, nil // the whole entry passes through unchanged
		}
		edits = append(edits, valueEdits...)
	}

	if mine && len(restored) > 0 {
		now := transcript.AppendQuote(nil, x.opt.Now.UTC().Format(time.RFC3339))
		if e.Restored >= 0 {
			x.res.PreviousRestoredAt = t.Str(e.Restored)
			x.res.Suggestion = Suggestion
			edits = append(edits, t.ReplaceValue(e.Restored, now))
		} else {
			edits = append(edits, t.InsertMember(0, "_restored", now))
		}
		x.res.KeysRestored = append(x.res.KeysRestored, restored...)
	}

	redacting := x.opt.ID != "" && !x.opt.KeepRestoreCalls
	if redacting && e.Redacted < 0 && isRestoreCall(e.Tools) {
		edits = append(edits, t.InsertMember(0, "_redacted", []byte("true")))
	}

	if len(edits) == 0 {
		return nil, nil
	}
	body, err := transcript.Splice(nil, line.Body, edits)
	if err != nil {
		return nil, fmt.Errorf("line %d: %w", line.Num, err)
	}
	if x.opt.All && len(restored) > 0 {
		body = x.dropGeneratedID(body)
	}
	if len(restored) > 0 {
		x.stats.Entries++
		x.stats.Values += len(restored)
		x.opt.Log.Debug("restored", "module", "extraction", "entry_id", e.ID, "keys_restored", restored, "redacted", redacting, "session", x.opt.Session, "line", line.Num)
	}
	return body, nil
}

// values returns the edits that put the selected extracted values back and
// update _extracted, or an error if any value cannot be restored exactly.
func (x *run) values(ctx context.Context, line transcript.Line, e *transcript.Entry) ([]transcript.Edit, []string, error) {
	t := e.Tree
	var edits []transcript.Edit
	var restored []string
	var keep [][]byte // raw members of _extracted that stay
	t.Children(e.Extracted, func(m, _ int) {
		ptr := t.Key(m)
		if !x.opt.All && !keyMatches(ptr, x.opt.Keys) {
			keep = append(keep, t.Src[t.Nodes[m].KeyStart:t.Nodes[m].End])
			return
		}
		restored = append(restored, ptr)
	})
	if len(restored) == 0 {
		return nil, nil, nil
	}
	sizes := map[string]int{}
	for _, ptr := range restored {
		m := t.Get(e.Extracted, ptr)
		blob := t.Str(t.Get(m, "blob"))
		fail := func(err error) error {
			return &BlobError{Line: line.Num, EntryID: e.ID, Blob: blob, Err: err}
		}
		d, err := blobstore.ParseDigest(blob)
		if err != nil {
			return nil, nil, fail(fmt.Errorf("%s: bad blob reference: %w", ptr, err))
		}
		node, err := t.Resolve(ptr)
		if err != nil {
			return nil, nil, fail(err)
		}
		if !holdsPlaceholder(t, node) {
			return nil, nil, fail(fmt.Errorf("%s no longer holds a placeholder", ptr))
		}
		data, err := x.opt.Store.Get(ctx, d)
		if err != nil {
			return nil, nil, fail(err)
		}
		if n := t.Get(m, "bytes"); n >= 0 && string(t.Raw(n)) != fmt.Sprint(len(data)) {
			return nil, nil, fail(fmt.Errorf("blob %s holds %d bytes, _extracted says %s", blob, len(data), t.Raw(n)))
		}
		edits = append(edits, t.ReplaceValue(node, data))
		sizes[ptr] = len(data)
	}
	if len(keep) == 0 {
		edits = append(edits, t.RemoveMember(e.Extracted))
	} else {
		obj := append([]byte{'{'}, bytes.Join(keep, []byte{','})...)
		edits = append(edits, t.ReplaceValue(e.Extracted, append(obj, '}')))
	}
	return edits, restored, nil
}

// dropGeneratedID removes an __id that bs made up from exactly these bytes,
// so that restore --all gives back the original line.
func (x *run) dropGeneratedID(body []byte) []byte {
	t, err := x.p.Parse(body)
	if err != nil {
		return body
	}
	n := t.Get(0, "__id")
	if n < 0 {
		return body
	}
	without, err := transcript.Splice(nil, body, []transcript.Edit{t.RemoveMember(n)})
	if err != nil || transcript.DeriveID(without) != t.Str(n) {
		return body
	}
	return without
}

func holdsPlaceholder(t *transcript.Tree, n int) bool {
	switch t.Nodes[n].Kind {
	case '"':
		return transcript.IsPlaceholder(t.Str(n))
	case '{':
		return transcript.IsPlaceholder(t.Str(t.Get(n, "text")))
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
