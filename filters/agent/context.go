package agent

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/bstools/bs/filters/transcript"
)

// ContextResult is purge_control get_context's answer.
type ContextResult struct {
	Session   SessionInfo      `json:"session"`
	Gauge     *GaugeResult     `json:"gauge,omitempty"`
	Extracted []ExtractedEntry `json:"extracted"`
	// ExtractedBytes is the size of every extracted value together.
	ExtractedBytes int64 `json:"extracted_bytes"`
}

// SessionInfo describes the session file.
type SessionInfo struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Format string `json:"format"`
	Bytes  int64  `json:"bytes"`
}

// ExtractedEntry is an entry with values in the store.
type ExtractedEntry struct {
	EntryID     string           `json:"entry_id"`
	Placeholder string           `json:"placeholder"`
	Keys        []string         `json:"keys"`
	Sizes       map[string]int64 `json:"sizes"`
	Kind        string           `json:"kind,omitempty"` // the kinds of its values, comma-separated
	Tool        string           `json:"tool,omitempty"`
	Time        string           `json:"time,omitempty"`
	Restored    string           `json:"_restored,omitempty"`
	Extractable json.RawMessage  `json:"_extractable,omitempty"`
}

// getContext lists the session, its gauge and its extracted entries.
func (a *Agent) getContext(ctx context.Context, session string) (*ContextResult, error) {
	path, err := a.env.Sessions.resolve(session)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := info.Size()
	format := a.env.Format
	if format == nil { // auto
		format = detect(f, size)
	}
	res := &ContextResult{
		Session:   SessionInfo{Name: SessionName(path), Path: path, Format: format.String(), Bytes: size},
		Extracted: []ExtractedEntry{},
	}
	if g, err := gaugeOf(f, format); err == nil {
		res.Gauge = g
	} else {
		a.env.Log.Warn("gauge failed", "session", res.Session.Name, "err", err)
	}
	lines, err := candidates(ctx, f, size, [][]byte{[]byte(`"_extracted"`)})
	if err != nil {
		return nil, err
	}
	var p transcript.Parser
	for _, l := range lines {
		buf := make([]byte, l.end-l.start)
		if _, err := f.ReadAt(buf, l.start); err != nil {
			return nil, err
		}
		t, err := p.Parse(buf)
		if err != nil {
			continue
		}
		e := transcript.View(t, format)
		if e.Extracted < 0 || t.Nodes[e.Extracted].Kind != '{' {
			continue
		}
		x := ExtractedEntry{EntryID: e.ID, Placeholder: transcript.Placeholder(e.ID), Keys: []string{},
			Sizes: map[string]int64{}, Tool: e.ToolName, Time: e.Time}
		if x.Tool == "" && len(e.Tools) > 0 {
			x.Tool = e.Tools[0]
		}
		var kinds []string
		t.Children(e.Extracted, func(m, _ int) {
			ptr := t.Key(m)
			x.Keys = append(x.Keys, ptr)
			n, _ := strconv.ParseInt(string(t.Raw(max(t.Get(m, "bytes"), 0))), 10, 64)
			x.Sizes[ptr] = n
			res.ExtractedBytes += n
			if k := kindAt(&e, ptr); !slices.Contains(kinds, k) {
				kinds = append(kinds, k)
			}
		})
		x.Kind = strings.Join(kinds, ",")
		if e.Restored >= 0 {
			x.Restored = t.Str(e.Restored)
		}
		if e.Extractable >= 0 {
			x.Extractable = append(json.RawMessage(nil), t.Raw(e.Extractable)...)
		}
		res.Extracted = append(res.Extracted, x)
	}
	return res, nil
}

// kindAt is the kind of the value at ptr: tool_call, tool_result,
// thinking, text or image.
func kindAt(e *transcript.Entry, ptr string) string {
	for _, v := range e.Values {
		if v.Pointer == ptr {
			return v.Kind.String()
		}
	}
	return "text"
}
