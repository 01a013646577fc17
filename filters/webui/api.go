package webui

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/index"
)

// statsCache keeps bs stats' report of a file while it is unchanged.
type statsCache struct {
	mu      sync.Mutex
	reports map[string]statsEntry
}

type statsEntry struct {
	stamp  stamp
	report json.RawMessage
}

func (s *Server) stats(w http.ResponseWriter, r *http.Request, path string) {
	if s.opt.Commands == nil {
		failErr(w, notFound("stats are not served here"))
		return
	}
	info, err := os.Stat(path)
	if err != nil {
		failErr(w, err)
		return
	}
	s.statsCache.mu.Lock()
	c, ok := s.statsCache.reports[path]
	s.statsCache.mu.Unlock()
	if !ok || c.stamp != stampOf(info) {
		rep, err := s.opt.Commands.Stats(r.Context(), path)
		if err != nil {
			failErr(w, err)
			return
		}
		c = statsEntry{stampOf(info), rep}
		s.statsCache.mu.Lock()
		if s.statsCache.reports == nil {
			s.statsCache.reports = map[string]statsEntry{}
		}
		s.statsCache.reports[path] = c
		s.statsCache.mu.Unlock()
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(c.report)
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request, path string) {
	key, err := checkpoint.KeyOfFile(path, s.opt.Format)
	if err != nil {
		failErr(w, err)
		return
	}
	cp, file, err := s.opt.Checkpoints.Latest(key)
	if errors.Is(err, checkpoint.ErrNone) {
		reply(w, map[string]any{"key": key, "found": false})
		return
	}
	if err != nil {
		failErr(w, err)
		return
	}
	yaml, err := os.ReadFile(file)
	if err != nil {
		failErr(w, err)
		return
	}
	all, _ := s.opt.Checkpoints.List(key)
	reply(w, map[string]any{"key": key, "found": true, "id": filepath.Base(file), "count": len(all),
		"text": checkpoint.Render(cp), "yaml": string(yaml)})
}

// searchHit is a hit of the index with the session it opens, when the
// app lists it.
type searchHit struct {
	SessionID string  `json:"session_id,omitempty"`
	Session   string  `json:"session"`
	EntryID   string  `json:"entry_id"`
	Pointer   string  `json:"pointer,omitempty"`
	Blob      string  `json:"blob"`
	Kind      string  `json:"kind"`
	Tool      string  `json:"tool,omitempty"`
	Time      string  `json:"time,omitempty"`
	Snippet   string  `json:"snippet"`
	Score     float64 `json:"score"`
}

func (s *Server) search(w http.ResponseWriter, r *http.Request) {
	if s.opt.Search == nil {
		failErr(w, notFound("no search index"))
		return
	}
	q := r.URL.Query()
	text := q.Get("q")
	if text == "" || len(text) > 1000 {
		failErr(w, badRequest("q: want the words to search for"))
		return
	}
	limit := 50
	if l := q.Get("limit"); l != "" {
		var ok bool
		if limit, ok = atoi(l); !ok || limit < 1 || limit > 500 {
			failErr(w, badRequest("limit: want 1 to 500"))
			return
		}
	}
	hits, err := s.opt.Search(r.Context(), index.Query{Text: text, Limit: limit, Kind: q.Get("kind"), Tool: q.Get("tool")})
	if err != nil {
		failErr(w, err)
		return
	}
	files, err := s.list()
	if err != nil {
		failErr(w, err)
		return
	}
	out := []searchHit{}
	for _, h := range hits {
		sh := searchHit{Session: h.Session, EntryID: h.EntryID, Pointer: h.Pointer, Blob: h.Blob, Kind: h.Kind,
			Tool: h.Tool, Time: h.Time, Snippet: h.Snippet, Score: h.Score}
		if p := sameFile(files, h.Session); p != "" {
			sh.SessionID = SessionID(p)
		}
		out = append(out, sh)
	}
	reply(w, map[string]any{"hits": out})
}

// sameFile returns the listed file that is the index's session, or "".
func sameFile(files []string, session string) string {
	if session == "" {
		return ""
	}
	if slices.Contains(files, session) {
		return session
	}
	real, err := filepath.EvalSymlinks(session)
	if err != nil {
		return ""
	}
	for _, f := range files {
		if r, err := filepath.EvalSymlinks(f); err == nil && r == real {
			return f
		}
	}
	return ""
}

// blob answers a blob of the store: what a search hit found, when its
// entry is no longer in the session (a roll evicted it).
func (s *Server) blob(w http.ResponseWriter, r *http.Request) {
	d, err := blobstore.ParseDigest(r.URL.Query().Get("b"))
	if err != nil {
		failErr(w, badRequest("malformed blob digest"))
		return
	}
	data, err := s.opt.Store.Get(r.Context(), d)
	if err != nil {
		failErr(w, err)
		return
	}
	cut := len(data) > valueLimit
	if cut {
		data = data[:valueLimit]
	}
	reply(w, map[string]any{"blob": d.String(), "text": string(data), "cut": cut})
}

// actionRequest is the body of every action.
type actionRequest struct {
	Session string `json:"s"`
	Filter  string `json:"filter,omitempty"`
	ID      string `json:"id,omitempty"`
	Value   string `json:"value,omitempty"`
}

// readAction decodes an action's body and resolves its session.
func (s *Server) readAction(r *http.Request) (actionRequest, string, error) {
	var a actionRequest
	dec := json.NewDecoder(io.LimitReader(r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&a); err != nil {
		return a, "", badRequest("want a JSON object {\"s\": SESSION, ...}")
	}
	path, err := s.pathOf(a.Session)
	if err != nil {
		return a, "", err
	}
	if a.Filter != "" && !slices.Contains(filters, a.Filter) {
		return a, "", badRequest("filter: want extract, trim or roll")
	}
	if a.ID != "" && !validEntryID(a.ID) {
		return a, "", badRequest("malformed entry id")
	}
	return a, path, nil
}

// change is what a filter does, or would do, to a session.
type change struct {
	Filter      string   `json:"filter"`
	Applied     bool     `json:"applied"`
	Changed     bool     `json:"changed"`
	BytesBefore int64    `json:"bytes_before"`
	BytesAfter  int64    `json:"bytes_after"`
	Before      gaugeRow `json:"gauge_before"`
	After       gaugeRow `json:"gauge_after"`
	TokensFreed int      `json:"tokens_freed"` // by the gauge
	// The gauge's estimate of the whole transcript, every line counted
	// (what bs stats totals): what the values moved out weigh even
	// where the gauge reads the provider's last usage record.
	EstimateBefore int   `json:"estimate_before"`
	EstimateAfter  int   `json:"estimate_after"`
	MovedValues    int   `json:"moved_values"` // values newly in the store
	MovedBytes     int64 `json:"moved_bytes"`
	LinesBefore    int   `json:"lines_before"`
	LinesAfter     int   `json:"lines_after"`
}

// measured is what change compares of a file.
type measured struct {
	size, moved int64
	values      int
	lines       int
	estimate    int
	gauge       gaugeRow
}

func (s *Server) measure(path string) (measured, error) {
	var m measured
	fi := &fileInfo{}
	f, err := os.Open(path)
	if err != nil {
		return m, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return m, err
	}
	if err := fi.index(f, info.Size(), s.opt.Format); err != nil {
		return m, err
	}
	sum, err := fi.readSummary(f)
	if err != nil {
		return m, err
	}
	g, err := gauge.MeasureFile(f, s.gaugeOptions())
	if err != nil {
		return m, err
	}
	est, err := gauge.EstimateAll(path, io.NewSectionReader(f, 0, fi.size), s.gaugeOptions())
	if err != nil {
		return m, err
	}
	m = measured{size: fi.size, moved: sum.moved, values: sum.movedValues, lines: len(fi.lines), estimate: est,
		gauge: gaugeRow{Tokens: g.Tokens, Window: g.Window, Ratio: g.Ratio, Source: g.Source, Model: g.Model, Text: g.String()}}
	return m, nil
}

func compare(filter string, before, after measured) change {
	return change{Filter: filter, BytesBefore: before.size, BytesAfter: after.size, Before: before.gauge, After: after.gauge,
		TokensFreed: before.gauge.Tokens - after.gauge.Tokens, MovedValues: after.values - before.values,
		MovedBytes: after.moved - before.moved, LinesBefore: before.lines, LinesAfter: after.lines,
		EstimateBefore: before.estimate, EstimateAfter: after.estimate,
		Changed: before.size != after.size || before.values != after.values || before.lines != after.lines || before.estimate != after.estimate}
}

// change previews (runs the filter on a copy) or applies (runs it in
// place) a filter, and answers what it changed.
func (s *Server) change(apply bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a, path, err := s.readAction(r)
		if err == nil && a.Filter == "" {
			err = badRequest("filter: want extract, trim or roll")
		}
		if err != nil {
			failErr(w, err)
			return
		}
		run := func(ctx context.Context) (string, error) { return path, s.opt.Commands.Apply(ctx, a.Filter, path) }
		if !apply {
			dir, err := os.MkdirTemp("", "bs-ui-preview-")
			if err != nil {
				failErr(w, err)
				return
			}
			defer os.RemoveAll(dir)
			out := filepath.Join(dir, "out.jsonl")
			run = func(ctx context.Context) (string, error) {
				return out, s.opt.Commands.Preview(ctx, a.Filter, path, out)
			}
		}
		before, err := s.measure(path)
		if err != nil {
			failErr(w, err)
			return
		}
		result, err := run(r.Context())
		if err != nil {
			failErr(w, err)
			return
		}
		after, err := s.measure(result)
		if err != nil {
			failErr(w, err)
			return
		}
		ch := compare(a.Filter, before, after)
		ch.Applied = apply
		if apply {
			s.opt.Log.Info("applied", "filter", a.Filter, "file", path, "bytes_before", ch.BytesBefore, "bytes_after", ch.BytesAfter)
		}
		reply(w, ch)
	}
}

func (s *Server) restore(w http.ResponseWriter, r *http.Request) {
	a, path, err := s.readAction(r)
	if err == nil && a.ID == "" {
		err = badRequest("id: want the entry to restore")
	}
	if err != nil {
		failErr(w, err)
		return
	}
	res, err := s.opt.Commands.Restore(r.Context(), path, a.ID)
	if err != nil {
		failErr(w, err)
		return
	}
	s.opt.Log.Info("restored", "file", path, "entry", a.ID)
	reply(w, map[string]any{"result": res})
}

func (s *Server) extractable(w http.ResponseWriter, r *http.Request) {
	a, path, err := s.readAction(r)
	if err == nil && a.ID == "" {
		err = badRequest("id: want the entry")
	}
	if err == nil && a.Value != "true" && a.Value != "false" {
		if _, ok := atoi(a.Value); !ok || a.Value == "" || len(a.Value) > 9 {
			err = badRequest("value: want true, false or a number of messages")
		}
	}
	if err != nil {
		failErr(w, err)
		return
	}
	if err := s.opt.Commands.SetExtractable(r.Context(), path, a.ID, a.Value); err != nil {
		failErr(w, err)
		return
	}
	reply(w, map[string]any{"id": a.ID, "extractable": json.RawMessage(strconv.Quote(a.Value)[1 : len(a.Value)+1])})
}
