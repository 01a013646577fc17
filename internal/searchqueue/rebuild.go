package searchqueue

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
)

// RolledError is a rolled range of the transcript Path whose rows could
// not be rebuilt.
type RolledError struct {
	Path string
	Err  error
}

func (e *RolledError) Error() string { return fmt.Sprintf("%s: rolled range: %v", e.Path, e.Err) }
func (e *RolledError) Unwrap() error { return e.Err }

// RefError is a damaged reference to the store in the transcript Path.
type RefError struct {
	Path string
	Err  error
}

func (e *RefError) Error() string { return fmt.Sprintf("%s: %v", e.Path, e.Err) }
func (e *RefError) Unwrap() error { return e.Err }

// ValueError is a value moved out of Entry at Pointer, in the transcript
// Path, that could not be read from the store.
type ValueError struct {
	Path, Entry, Pointer string
	Err                  error
}

func (e *ValueError) Error() string {
	return fmt.Sprintf("%s: entry %s: %s: %v", e.Path, e.Entry, e.Pointer, e.Err)
}
func (e *ValueError) Unwrap() error { return e.Err }

// ArchivedError is an archived Turn of the transcript Path whose holder
// could not be read from the store.
type ArchivedError struct {
	Path, Turn string
	Err        error
}

func (e *ArchivedError) Error() string {
	return fmt.Sprintf("%s: archived turn %s: %v", e.Path, e.Turn, e.Err)
}
func (e *ArchivedError) Unwrap() error { return e.Err }

// Rebuild queues on w the rows of what the transcript r, the file path,
// has in store: its extracted values, rolled ranges and archived turns,
// read as retention reads them. What cannot be read is told to warn (a
// *RolledError, *RefError, *ValueError or *ArchivedError) and left out. It
// returns the rows queued.
func Rebuild(ctx context.Context, path string, r io.Reader, format transcript.Dialect, onBadLine func(*transcript.BadLineError) error, store blobstore.Store, w *Writer, warn func(error)) (int, error) {
	session := fileSession(path)
	src := transcript.NewSource(path, r, format, onBadLine)
	n := 0
	var p transcript.Parser
	var tools transcript.ToolNamer
	for {
		_, t, err := src.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if t == nil {
			continue
		}
		if m, ok, err := archive.ParseMarker(t); ok && err == nil {
			n += rebuildArchived(ctx, path, session, m, store, src.Dialect(), w, warn)
			continue
		}
		// What the line references, read as retention reads it.
		var extracted, chunks []restore.Ref
		rerr := restore.References(t, func(r restore.Ref) {
			switch r.Kind {
			case restore.RefExtracted:
				extracted = append(extracted, r)
			case restore.RefEvicted:
				chunks = append(chunks, r)
			}
		})
		if t.Get(0, transcript.EvictedField) >= 0 {
			if rerr != nil {
				warn(&RolledError{path, rerr})
			}
			n += rebuildEvicted(ctx, path, session, chunks, store, src.Dialect(), &tools, w, warn)
			continue
		}
		if rerr != nil {
			warn(&RefError{path, rerr})
		}
		e := transcript.View(t, src.Dialect())
		tools.Name(&e) // as extract named them
		for _, r := range extracted {
			data, err := store.Get(ctx, r.Blob)
			if err != nil {
				warn(&ValueError{path, e.ID, r.Pointer, err})
				continue
			}
			w.add(session.row(index.Row{EntryID: e.ID, Pointer: r.Pointer, Blob: r.Blob.String(), Kind: kindAt(&e, r.Pointer), Tool: transcript.ToolOf(&e, valueAt(&e, r.Pointer)), Time: e.Time, Text: removedText(&p, data)}))
			n++
		}
	}
}

// rebuildEvicted adds a row for each message in a range bs roll evicted,
// naming the tools of its results as roll named them, with the calls
// before them (tools).
func rebuildEvicted(ctx context.Context, path string, session Session, chunks []restore.Ref, store blobstore.Store, d transcript.Dialect, tools *transcript.ToolNamer, w *Writer, warn func(error)) int {
	n := 0
	var p transcript.Parser
	for _, c := range chunks {
		blob := c.Blob.String()
		data, err := store.Get(ctx, c.Blob)
		if err != nil {
			warn(&RolledError{path, err})
			continue
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			lt, err := p.Parse(line)
			if err != nil {
				continue
			}
			e := transcript.View(lt, d)
			tools.Name(&e)
			if !roll.Evictable(lt, e) {
				continue // it stayed: roll gave it no row
			}
			if e.ID == "" {
				e.ID = transcript.DeriveID(line) // as roll named it
			}
			w.add(session.row(index.Row{EntryID: e.ID, Blob: blob, Kind: "entry", Tool: transcript.EntryTool(&e), Time: e.Time, Text: roll.EntryText(line)}))
			n++
		}
	}
	return n
}

// kindAt finds the kind extract gave the value at ptr.
func kindAt(e *transcript.Entry, ptr string) string {
	if v := valueAt(e, ptr); v.Pointer != "" {
		return v.Kind.String()
	}
	return "text"
}

// valueAt is the value of e at ptr, or the zero Value.
func valueAt(e *transcript.Entry, ptr string) transcript.Value {
	for _, v := range e.Values {
		if v.Pointer == ptr {
			return v
		}
	}
	return transcript.Value{}
}

// removedText decodes a removed value for the index: a string's text; a
// block's text or thinking; the texts of an array of blocks (what bs trim
// moves; text blocks of any registered dialect's types), one a line;
// nothing for an image.
func removedText(p *transcript.Parser, raw []byte) string {
	t, err := p.Parse(raw)
	if err != nil {
		return ""
	}
	switch t.Nodes[0].Kind {
	case '"':
		return t.Str(0)
	case '[':
		var texts []string
		types := transcript.RegisteredBlocks()
		t.Children(0, func(b, _ int) {
			if !types.Text(t.Str(t.Get(b, "type"))) {
				return
			}
			if x := t.Get(b, "text"); x >= 0 && t.Nodes[x].Kind == '"' {
				texts = append(texts, t.Str(x))
			}
		})
		return strings.Join(texts, "\n")
	}
	for _, k := range []string{"thinking", "text"} {
		if s := t.Str(t.Get(0, k)); s != "" {
			return s
		}
	}
	return ""
}

// rebuildArchived adds a row for each entry of an archived turn (after
// its user prompt, which stays in the transcript).
func rebuildArchived(ctx context.Context, path string, session Session, m archive.Marker, store blobstore.Store, d transcript.Dialect, w *Writer, warn func(error)) int {
	n := 0
	var p transcript.Parser
	var off int64
	for _, dg := range m.Blobs {
		data, err := store.Get(ctx, dg)
		if err != nil {
			warn(&ArchivedError{path, m.ID, err})
			return n
		}
		start := off
		off += int64(len(data))
		for _, line := range bytes.SplitAfter(data, []byte("\n")) {
			at := start
			start += int64(len(line))
			if at < m.From {
				continue
			}
			line = bytes.TrimSuffix(line, []byte("\n"))
			lt, err := p.Parse(line)
			if err != nil {
				continue
			}
			e := transcript.View(lt, d)
			if !e.Message {
				continue
			}
			if e.ID == "" {
				e.ID = transcript.DeriveID(line)
			}
			w.add(session.row(index.Row{EntryID: e.ID, Blob: dg.String(), Kind: "entry", Tool: e.Tool(), Time: e.Time, Text: roll.EntryText(line)}))
			n++
		}
	}
	return n
}
