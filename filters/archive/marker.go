package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/transcript"
)

// Marker is the _archived member of the entry that stands for an archived
// turn.
type Marker struct {
	ID        string
	Depth     int
	Blobs     []blobstore.Digest
	Bytes     int64 // the holder's size
	From      int64 // where, in the holder, the lines the entry replaced begin
	Entries   int   // messages in the holder, its user prompt included
	Tokens    int   // their estimated tokens
	ToolCalls int   // tool-use pairs in the holder
	Task      string
	At        string
}

// ParseMarker reads the _archived member of a parsed line; ok is false
// when the line has none, err when it has a damaged one.
func ParseMarker(t *transcript.Tree) (m Marker, ok bool, err error) {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return m, false, nil
	}
	a := t.Get(0, transcript.ArchivedField)
	if a < 0 {
		return m, false, nil
	}
	if t.Nodes[a].Kind != '{' {
		return m, true, fmt.Errorf("bad %s member: not an object", transcript.ArchivedField)
	}
	num := func(name string) (int64, error) {
		i := t.Get(a, name)
		if i < 0 {
			return 0, nil
		}
		return strconv.ParseInt(string(t.Raw(i)), 10, 64)
	}
	m.ID = t.Str(t.Get(a, "id"))
	m.Task = t.Str(t.Get(a, "task"))
	m.At = t.Str(t.Get(a, "at"))
	var errs [6]error
	var depth, entries, tokens, calls int64
	m.Bytes, errs[0] = num("bytes")
	m.From, errs[1] = num("from")
	depth, errs[2] = num("depth")
	entries, errs[3] = num("entries")
	tokens, errs[4] = num("tokens")
	calls, errs[5] = num("tool_calls")
	m.Depth, m.Entries, m.Tokens, m.ToolCalls = int(depth), int(entries), int(tokens), int(calls)
	for _, e := range errs {
		if e != nil {
			return m, true, fmt.Errorf("bad %s member: %v", transcript.ArchivedField, e)
		}
	}
	blobs := t.Get(a, "blobs")
	if blobs < 0 || t.Nodes[blobs].Kind != '[' || t.Nodes[blobs].First < 0 {
		return m, true, fmt.Errorf("bad %s member: no blobs", transcript.ArchivedField)
	}
	var bad error
	t.Children(blobs, func(c, _ int) {
		d, err := blobstore.ParseDigest(t.Str(c))
		if err != nil && bad == nil {
			bad = err
		}
		m.Blobs = append(m.Blobs, d)
	})
	if bad != nil {
		return m, true, fmt.Errorf("bad %s member: %w", transcript.ArchivedField, bad)
	}
	if m.ID == "" || m.From < 0 || m.From > m.Bytes {
		return m, true, fmt.Errorf("bad %s member: no id, or from outside the holder", transcript.ArchivedField)
	}
	return m, true, nil
}

// HolderError is a holder that could not be read back exactly.
type HolderError struct {
	ID   string
	Blob string // the blob at fault, "" when it is the size
	Err  error
}

// Error names the holder; the store's errors name the blob.
func (e *HolderError) Error() string { return fmt.Sprintf("holder %s: %v", e.ID, e.Err) }

func (e *HolderError) Unwrap() error { return e.Err }

// Verify reads every blob of the holder (the store checks each digest) and
// checks that together they hold the bytes the marker records. Nothing is
// kept in memory beyond one blob.
func (m *Marker) Verify(ctx context.Context, store blobstore.Store) error {
	var total int64
	for _, d := range m.Blobs {
		data, err := store.Get(ctx, d)
		if err != nil {
			return &HolderError{ID: m.ID, Blob: d.String(), Err: err}
		}
		total += int64(len(data))
	}
	if total != m.Bytes {
		return &HolderError{ID: m.ID, Err: fmt.Errorf("its blobs hold %d bytes, %s says %d", total, transcript.ArchivedField, m.Bytes)}
	}
	return nil
}

// WriteHolder writes the holder transcript, the archived turn's original
// lines, byte for byte, from offset from on. It verifies the holder first,
// so a damaged holder writes nothing.
func (m *Marker) WriteHolder(ctx context.Context, store blobstore.Store, w io.Writer, from int64) error {
	if err := m.Verify(ctx, store); err != nil {
		return err
	}
	var off int64
	for _, d := range m.Blobs {
		data, err := store.Get(ctx, d)
		if err != nil {
			return &HolderError{ID: m.ID, Blob: d.String(), Err: err}
		}
		end := off + int64(len(data))
		if end > from {
			if _, err := w.Write(data[max(from-off, 0):]); err != nil {
				return err
			}
		}
		off = end
	}
	return nil
}

// synth builds the synthetic assistant entry that stands for an archived
// turn, in the dialect's own shape, so the runtime still loads the file.
func synth(d transcript.Dialect, tu *turn, text string, meta []byte, now time.Time) []byte {
	q := func(s string) []byte { return transcript.AppendQuote(nil, s) }
	raw := func(b []byte, fallback []byte) []byte {
		if len(b) > 0 {
			return b
		}
		return fallback
	}
	nowStr := q(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	ts := raw(tu.lastTS, nowStr)
	var b bytes.Buffer
	member := func(name string, v []byte) {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.Write(q(name))
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('{')
	switch d {
	case transcript.OpenClaw:
		member("type", []byte(`"message"`))
		if tu.lastID != "" {
			member("id", q(tu.lastID))
			parent := []byte("null")
			if tu.promptID != "" {
				parent = q(tu.promptID)
			}
			member("parentId", parent)
		}
		member("timestamp", ts)
		var msg bytes.Buffer
		msg.WriteString(`{"role":"assistant","content":[{"type":"text","text":`)
		msg.Write(q(text))
		msg.WriteString(`}],"api":`)
		msg.Write(raw(tu.api, []byte(`"bs"`)))
		msg.WriteString(`,"provider":`)
		msg.Write(raw(tu.provider, []byte(`"bs"`)))
		msg.WriteString(`,"model":`)
		msg.Write(raw(tu.model, []byte(`"bs-archive"`)))
		msg.WriteString(`,"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":`)
		msg.Write(raw(tu.lastMsgTS, []byte(strconv.FormatInt(now.UnixMilli(), 10))))
		msg.WriteByte('}')
		member("message", msg.Bytes())
	case transcript.ClaudeCode:
		parent := []byte("null")
		if tu.promptID != "" {
			parent = q(tu.promptID)
		}
		member("parentUuid", parent)
		for _, c := range tu.context {
			member(c.name, c.raw)
		}
		member("type", []byte(`"assistant"`))
		var msg bytes.Buffer
		msg.WriteString(`{"id":`)
		msg.Write(q("msg_bs_archive_" + tu.id))
		msg.WriteString(`,"type":"message","role":"assistant","model":"<synthetic>","content":[{"type":"text","text":`)
		msg.Write(q(text))
		msg.WriteString(`}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}`)
		member("message", msg.Bytes())
		uuid := tu.lastID
		if uuid == "" {
			uuid = "bs-archive-" + tu.id
		}
		member("uuid", q(uuid))
		member("timestamp", ts)
	case transcript.Codex:
		member("timestamp", ts)
		member("type", []byte(`"response_item"`))
		var p bytes.Buffer
		p.WriteString(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":`)
		p.Write(q(text))
		p.WriteString(`}]}`)
		member("payload", p.Bytes())
	case transcript.BrainSurgeon:
		member("__id", q(transcript.GeneratedIDPrefix+"archive-"+tu.id))
		for _, c := range tu.context {
			member(c.name, c.raw)
		}
		member("type", []byte(`"assistant_message"`))
		member("timestamp", ts)
		member("text", q(text))
	default:
		member("role", []byte(`"assistant"`))
		member("content", q(text))
	}
	member(transcript.ArchivedField, meta)
	b.WriteString("}\n")
	return b.Bytes()
}

// markerText is the text of the synthetic entry (seed 002): the archived
// turn with its summary, and the "[archived: <id>]" line the parent
// transcript gets, so that a read of the parent file alone shows where
// each turn went.
func markerText(id, summary string) string {
	return "[archived turn]\nsubagent_id: " + id + "\n\n" + summary + "\n\n" + ArchivedLine(id)
}

// ArchivedLine is seed 002's line in the parent transcript for the holder
// id.
func ArchivedLine(id string) string { return "[archived: " + id + "]" }
