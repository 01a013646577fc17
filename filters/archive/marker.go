package archive

import (
	"context"
	"fmt"
	"io"
	"strconv"

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

// markerText is the text of the synthetic entry (seed 002): the archived
// turn with its summary, and the "[archived: <id>]" line the parent
// transcript gets, so that a read of the parent file alone shows where
// each turn went.
func markerText(id, summary string) string {
	return "[archived turn]\nsubagent_id: " + id + "\n\n" + summary + "\n\n" + archivedLine(id)
}

// archivedLine is seed 002's line in the parent transcript for the holder
// id.
func archivedLine(id string) string { return "[archived: " + id + "]" }
