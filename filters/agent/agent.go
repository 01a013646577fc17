// Package agent is the tool surface bs gives agents: seed 000's
// purge_control and restore tools, search and checkpoint. It decodes a
// tool call's arguments, checks them, acts, and returns the result object.
// `bs mcp` and `bs tool` both go through Call, so they never disagree;
// NewMCPServer offers the tools over the Model Context Protocol.
package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/jsonerr"
)

// File is a session file as a rewrite sees it. Copying from it with
// io.Copy to the writer lets the kernel copy the bytes.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
}

// EditFunc writes the new content of a session file whose first size bytes
// are in src. Returning errUnchanged leaves the file as it is.
type EditFunc func(src File, size int64, w io.Writer) error

// errUnchanged, returned by an EditFunc, says the file needs no rewrite.
var errUnchanged = errors.New("unchanged")

// Env is what the tools act with. The command fills it.
type Env struct {
	Sessions Sessions
	Store    blobstore.Store
	Format   transcript.Dialect
	Now      func() time.Time
	Log      *slog.Logger

	KeepRestoreCalls bool // do not mark restore and purge_control calls _redacted

	// Rewrite replaces the session file at path with what edit writes,
	// safely under a running agent (the in-place code of bs -i).
	Rewrite func(ctx context.Context, path string, edit EditFunc) error
	// Search queries the search index; nil when there is none.
	Search func(ctx context.Context, q index.Query) ([]index.Hit, error)
	// Checkpoint returns the rendered latest checkpoint of the session
	// at path.
	Checkpoint func(path string) (string, error)
}

// Agent answers tool calls.
type Agent struct{ env Env }

// New returns an Agent acting with env.
func New(env Env) *Agent {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Log == nil {
		env.Log = slog.New(slog.DiscardHandler)
	}
	return &Agent{env: env}
}

// ErrorResult is the result of a call that failed: the agent reads why.
type ErrorResult struct {
	Error string `json:"error"`
}

// toolError is a mistake in a call or a failure the agent should see.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func errorf(format string, args ...any) error { return &toolError{fmt.Sprintf(format, args...)} }

// Call runs the tool name with its raw JSON arguments. It never panics on
// bad input: the result is then an ErrorResult (or a restore result with
// its error set) and isError is true.
func (a *Agent) Call(ctx context.Context, name string, args json.RawMessage) (result any, isError bool) {
	if len(bytes.TrimSpace(args)) == 0 || string(bytes.TrimSpace(args)) == "null" {
		args = json.RawMessage("{}")
	}
	var res any
	var err error
	switch name {
	case toolPurgeControl:
		var in PurgeControlArgs
		if err = decode(args, &in); err == nil {
			res, err = a.purgeControl(ctx, in)
		}
	case toolRestore:
		var in RestoreArgs
		if err = decode(args, &in); err == nil {
			res, err = a.restore(ctx, in)
		}
	case toolSearch:
		var in SearchArgs
		if err = decode(args, &in); err == nil {
			res, err = a.searchIndex(ctx, in)
		}
	case toolCheckpoint:
		var in CheckpointArgs
		if err = decode(args, &in); err == nil {
			res, err = a.checkpoint(ctx, in)
		}
	default:
		err = errorf("unknown tool %q: want %s", name, strings.Join(toolNames, ", "))
	}
	return outcome(res, err)
}

// outcome turns a tool method's return values into the result to show and
// whether it is an error.
func outcome(res any, err error) (any, bool) {
	if err == nil {
		return res, false
	}
	if r, ok := res.(*RestoreResult); ok && r != nil {
		if r.Error == "" {
			r.Error = err.Error()
		}
		return r, true
	}
	return ErrorResult{Error: err.Error()}, true
}

func decode(raw json.RawMessage, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return errorf("bad arguments: %s", jsonerr.Words(err))
	}
	if d.More() {
		return errorf("bad arguments: more than one JSON value")
	}
	return nil
}

// purgeControl is seed 000's purge_control tool.
func (a *Agent) purgeControl(ctx context.Context, in PurgeControlArgs) (any, error) {
	id := in.EntryID
	if id == "" {
		id = in.Entry
	}
	switch in.Action {
	case actionGetContext:
		return a.getContext(ctx, in.Session)
	case actionRestore:
		return a.restore(ctx, RestoreArgs{Session: in.Session, EntryID: id, Keys: in.Keys})
	case actionSetExtractable:
		return a.setExtractable(ctx, in.Session, id, in.Value)
	case "":
		return nil, errorf("missing argument action: want %s", strings.Join(actions, ", "))
	}
	return nil, errorf("unknown action %q: want %s", in.Action, strings.Join(actions, ", "))
}

// RestoreResult is seed 000's restore result, plus the restored values so
// that the agent has them now, whether or not its runtime reads the
// transcript again.
type RestoreResult struct {
	*restore.Result
	Values map[string]json.RawMessage `json:"values,omitempty"`
}

// restore is seed 000's restore tool: the keys asked for (all when none)
// come back into the entry, which is stamped _restored, and restore calls
// are redacted.
func (a *Agent) restore(ctx context.Context, in RestoreArgs) (*RestoreResult, error) {
	if in.EntryID == "" {
		return nil, errorf("missing argument entry_id: the id in the placeholder [[extracted-<id>]]")
	}
	if a.env.Store == nil {
		return nil, errorf("no blob store")
	}
	if in.Session != "" || a.env.Sessions.Dir == "" {
		path, err := a.env.Sessions.resolve(in.Session)
		if err != nil {
			return nil, err
		}
		return a.restoreIn(ctx, path, in, false)
	}
	// No session named: try those holding the placeholder in turn, until
	// one has the entry.
	paths, err := a.env.Sessions.byEntry(ctx, in.EntryID)
	if err != nil {
		return nil, err
	}
	var res *RestoreResult
	for i, path := range paths {
		res, err = a.restoreIn(ctx, path, in, true)
		var nf *notFoundError
		if !errors.As(err, &nf) || i == len(paths)-1 {
			break
		}
	}
	return res, err
}

// restoreIn restores in the session at path. named puts the session's
// name in an error.
func (a *Agent) restoreIn(ctx context.Context, path string, in RestoreArgs, named bool) (*RestoreResult, error) {
	opt := restore.Options{
		ID:               in.EntryID,
		Keys:             in.Keys,
		KeepRestoreCalls: a.env.KeepRestoreCalls,
		Now:              a.env.Now(),
		Store:            a.env.Store,
		Format:           a.env.Format,
		Log:              a.env.Log,
		Session:          SessionName(path),
	}
	sp, err := a.spliceSession(ctx, path, opt)
	res := &RestoreResult{Result: sp.res}
	if res.Result == nil {
		res.Result = &restore.Result{EntryID: in.EntryID, KeysRestored: []string{}, PointersRestored: []string{}}
	}
	if err != nil {
		// Whatever restore did in memory, the file was not rewritten:
		// nothing is restored.
		res.Restored, res.KeysRestored, res.PointersRestored, res.PreviousRestoredAt, res.Suggestion = false, []string{}, []string{}, "", ""
		var nf *restore.NotFoundError
		notFound := errors.As(err, &nf)
		err = describe(err)
		if named {
			err = errorf("%v (in session %s)", err, SessionName(path))
		}
		if notFound {
			err = &notFoundError{err}
		}
		res.Error = err.Error()
		return res, err
	}
	res.Values = sp.values
	return res, nil
}

// notFoundError is an entry not found in one session: another may hold it.
type notFoundError struct{ error }

func (e *notFoundError) Unwrap() error { return e.error }

// spliceSession runs restore with opt over the lines of the session at
// path that concern it, rewriting the file in place; an unchanged file is
// left as it was. The error is the rewrite's, else restore's.
func (a *Agent) spliceSession(ctx context.Context, path string, opt restore.Options) (*splice, error) {
	sp := new(splice)
	err := a.env.Rewrite(ctx, path, func(src File, size int64, w io.Writer) error {
		return sp.run(ctx, src, size, w, opt)
	})
	if errors.Is(err, errUnchanged) {
		err = nil
	}
	if err == nil {
		err = sp.err
	}
	return sp, err
}

// describe words restore's errors for an agent: without the line numbers
// of the excerpt restore saw.
func describe(err error) error {
	var blob *restore.BlobError
	var nf *restore.NotFoundError
	switch {
	case errors.As(err, &blob):
		return errorf("entry %s: %v", blob.EntryID, blob.Err)
	case errors.As(err, &nf):
		return errorf("%s", nf.Msg)
	}
	return err
}

// SetExtractableResult reports a set_extractable call.
type SetExtractableResult struct {
	EntryID     string          `json:"entry_id"`
	Extractable json.RawMessage `json:"_extractable"`
}

// setExtractable sets _extractable on an entry: true, false or a count of
// messages.
func (a *Agent) setExtractable(ctx context.Context, session, id string, value any) (*SetExtractableResult, error) {
	if id == "" {
		return nil, errorf("missing argument entry_id")
	}
	raw, err := extractableJSON(value)
	if err != nil {
		return nil, err
	}
	path, err := a.env.Sessions.resolve(session)
	if err != nil {
		return nil, err
	}
	opt := restore.Options{
		SetExtractable: map[string][]byte{id: raw},
		Now:            a.env.Now(),
		Format:         a.env.Format,
		Log:            a.env.Log,
		Session:        SessionName(path),
	}
	if _, err := a.spliceSession(ctx, path, opt); err != nil {
		return nil, describe(err)
	}
	return &SetExtractableResult{EntryID: id, Extractable: raw}, nil
}

// extractableJSON is the JSON of an _extractable value: true, false or a
// non-negative integer (a string spelling one is accepted too).
func extractableJSON(v any) ([]byte, error) {
	bad := errorf("bad or missing argument value: want true, false or a number of messages (an integer >= 0)")
	switch x := v.(type) {
	case bool:
		return strconv.AppendBool(nil, x), nil
	case float64:
		if x < 0 || x != math.Trunc(x) || x > 1<<53 {
			return nil, bad
		}
		return strconv.AppendInt(nil, int64(x), 10), nil
	case json.Number:
		n, err := strconv.ParseInt(string(x), 10, 64)
		if err != nil || n < 0 {
			return nil, bad
		}
		return strconv.AppendInt(nil, n, 10), nil
	case string:
		if raw, ok := restore.ExtractableJSON(x); ok {
			return raw, nil
		}
	}
	return nil, bad
}

// SearchResult lists the hits of a search.
type SearchResult struct {
	Query string      `json:"query"`
	Hits  []SearchHit `json:"hits"`
}

// SearchHit is one hit, with the call that brings it back.
type SearchHit struct {
	EntryID string  `json:"entry_id"`
	Session string  `json:"session"`
	Pointer string  `json:"key,omitempty"`
	Kind    string  `json:"kind"`
	Tool    string  `json:"tool,omitempty"`
	Time    string  `json:"time,omitempty"`
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
	Restore string  `json:"restore"`
}

// searchIndex searches everything bs removed.
func (a *Agent) searchIndex(ctx context.Context, in SearchArgs) (*SearchResult, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, errorf("missing argument query")
	}
	if in.Limit < 0 {
		return nil, errorf("bad argument limit: must not be negative")
	}
	if a.env.Search == nil {
		return nil, errorf("no search index")
	}
	q := index.Query{Text: in.Query, Limit: in.Limit}
	// With one session served, only its hits can be restored here. The
	// index names a session by the path of the file that held the
	// placeholders, and by what the session is (its header's id, Claude
	// Code's sessionId, Codex's session id), which it keeps when a
	// filter's output is moved over the file or written through a pipe:
	// the session's rows are found by either.
	if in.Session != "" || a.env.Sessions.Dir == "" {
		path, err := a.env.Sessions.resolve(in.Session)
		if err != nil {
			return nil, err
		}
		q.Session, q.SessionID = path, transcript.IdentityOfFile(path)
	}
	hits, err := a.env.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	out := &SearchResult{Query: in.Query, Hits: []SearchHit{}}
	for _, h := range hits {
		call := fmt.Sprintf(`restore {"entry_id":%q}`, h.EntryID)
		if h.Pointer != "" {
			call = fmt.Sprintf(`restore {"entry_id":%q,"keys":[%q]}`, h.EntryID, h.Pointer)
		}
		if h.Kind == "entry" {
			call = "an evicted entry: bs restore --all on the transcript brings it back"
		}
		out.Hits = append(out.Hits, SearchHit{h.EntryID, h.Session, h.Pointer, h.Kind, h.Tool, h.Time, h.Snippet, h.Score, call})
	}
	return out, nil
}

// CheckpointResult is the latest checkpoint's text.
type CheckpointResult struct {
	Session string `json:"session"`
	Text    string `json:"text"`
}

// checkpoint renders the latest checkpoint of the session.
func (a *Agent) checkpoint(ctx context.Context, in CheckpointArgs) (*CheckpointResult, error) {
	path, err := a.env.Sessions.resolve(in.Session)
	if err != nil {
		return nil, err
	}
	if a.env.Checkpoint == nil {
		return nil, errorf("no checkpoint directory")
	}
	text, err := a.env.Checkpoint(path)
	if err != nil {
		return nil, err
	}
	return &CheckpointResult{Session: SessionName(path), Text: text}, nil
}

// gaugeOf reads the gauge of the open session file f (from its end).
func gaugeOf(f *os.File, format transcript.Dialect) (*GaugeResult, error) {
	r, err := gauge.MeasureFile(f, gauge.Options{Format: format, OnBadLine: func(*transcript.BadLineError) error { return nil }})
	if err != nil {
		return nil, err
	}
	return &GaugeResult{Result: r, Text: r.String()}, nil
}

// GaugeResult is the gauge with its one-line rendering.
type GaugeResult struct {
	gauge.Result
	Text string `json:"text"`
}
