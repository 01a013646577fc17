package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
)

// indexWriter batches rows into the search index as a filter removes
// content. The index is a convenience over the store, so a failure to
// write it warns (once) and never fails the filter.
type indexWriter struct {
	ctx     context.Context
	ix      *index.Index
	ui      ui
	path    string
	rows    []index.Row
	text    int
	failed  bool
	session string
}

const (
	indexBatchRows = 2000
	indexBatchText = 8 << 20
)

func openIndexWriter(ctx context.Context, c *cli.Context, u ui) *indexWriter {
	w := &indexWriter{ctx: ctx, ui: u, path: indexPath(c)}
	ix, err := index.Open(w.path)
	if err != nil {
		w.fail(err)
		return w
	}
	w.ix = ix
	return w
}

// sessionFor names a transcript in the index: its absolute path when it
// is a file, so a hit can say exactly how to restore it.
func sessionFor(name string) string {
	if name == "-" {
		return "-"
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return name
}

func (w *indexWriter) add(r index.Row) {
	if w == nil || w.ix == nil {
		return
	}
	w.rows = append(w.rows, r)
	w.text += len(r.Text)
	if len(w.rows) >= indexBatchRows || w.text >= indexBatchText {
		w.flush()
	}
}

func (w *indexWriter) moved(session string) func(extract.Moved, string) {
	return func(m extract.Moved, text string) {
		w.add(index.Row{Session: session, EntryID: m.EntryID, Pointer: m.Pointer, Blob: m.Blob, Kind: m.Kind, Tool: m.Tool, Time: m.Time, Text: text})
	}
}

func (w *indexWriter) evicted(session string) func(roll.Evicted) {
	return func(e roll.Evicted) {
		w.add(index.Row{Session: session, EntryID: e.EntryID, Blob: e.Blob, Kind: "entry", Tool: e.Tool, Time: e.Time, Text: e.Text})
	}
}

func (w *indexWriter) flush() {
	if w.ix == nil || len(w.rows) == 0 {
		return
	}
	if err := w.ix.Add(w.ctx, w.rows); err != nil {
		w.fail(err)
		w.ix.Close()
		w.ix = nil
	}
	w.rows, w.text = w.rows[:0], 0
}

func (w *indexWriter) close() {
	if w == nil {
		return
	}
	w.flush()
	if w.ix != nil {
		w.ix.Close()
	}
}

func (w *indexWriter) fail(err error) {
	if !w.failed {
		w.failed = true
		w.ui.warnf(msgIndexWrite, w.path, err)
		w.ui.hintf(hintIndex)
	}
}

func indexCommand() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "(re)build search index rows from transcripts and the blob store",
		ArgsUsage: "FILE...",
		Description: "Reads each transcript's _extracted metadata and roll markers, fetches the removed values " +
			"from the store and adds their rows to the search index (adding a row twice keeps one).",
		Flags: append(append([]cli.Flag{}, indexFlags()...), commonFlags()...),
		Action: func(c *cli.Context) error {
			cm, err := parseCommon(c)
			if err != nil {
				return err
			}
			if len(cm.files) == 0 || cm.inPlace {
				return usagef("give the transcripts to index: bs index FILE...")
			}
			store, err := cm.openStore()
			if err != nil {
				return err
			}
			w := openIndexWriter(c.Context, c, cm.ui)
			if w.ix == nil {
				return &reported{code: exitFailure}
			}
			defer w.close()
			total := 0
			for _, path := range cm.files {
				n, err := indexFile(c.Context, path, store, cm, w)
				if err != nil {
					return err
				}
				total += n
			}
			w.flush()
			if w.failed {
				return &reported{code: exitFailure}
			}
			fmt.Fprintf(c.App.Writer, "indexed %d values from %d transcripts\n", total, len(cm.files))
			return nil
		},
	}
}

// indexFile adds the rows of one transcript.
func indexFile(ctx context.Context, path string, store blobstore.Store, cm *common, w *indexWriter) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	session := sessionFor(path)
	src := transcript.NewSource(path, f, cm.format, cm.onBadLine)
	n := 0
	var p transcript.Parser
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
		if ev := t.Get(0, roll.EvictedField); ev >= 0 {
			n += indexEvicted(ctx, path, session, t, ev, store, src.Dialect(), cm, w)
			continue
		}
		e := transcript.View(t, src.Dialect())
		if e.Extracted >= 0 {
			var ferr error
			t.Children(e.Extracted, func(m, _ int) {
				ptr, blob := t.Key(m), t.Str(t.Get(m, "blob"))
				d, err := blobstore.ParseDigest(blob)
				if err == nil {
					var data []byte
					if data, err = store.Get(ctx, d); err == nil {
						w.add(index.Row{Session: session, EntryID: e.ID, Pointer: ptr, Blob: blob, Kind: kindAt(&e, ptr), Tool: e.ToolName, Time: e.Time, Text: removedText(&p, data)})
						n++
					}
				}
				if err != nil && ferr == nil {
					ferr = fmt.Errorf("%s: entry %s: %s: %w", path, e.ID, ptr, err)
				}
			})
			if ferr != nil {
				cm.ui.warnf("%v", ferr)
			}
		}
	}
}

// indexEvicted adds a row for each message in a range bs roll evicted.
func indexEvicted(ctx context.Context, path, session string, t *transcript.Tree, ev int, store blobstore.Store, d transcript.Dialect, cm *common, w *indexWriter) int {
	n := 0
	var p transcript.Parser
	t.Children(t.Get(ev, "blobs"), func(c, _ int) {
		blob := t.Str(c)
		digest, err := blobstore.ParseDigest(blob)
		var data []byte
		if err == nil {
			data, err = store.Get(ctx, digest)
		}
		if err != nil {
			cm.ui.warnf("%s: rolled range: %v", path, err)
			return
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			lt, err := p.Parse(line)
			if err != nil {
				continue
			}
			e := transcript.View(lt, d)
			if !e.Message {
				continue
			}
			w.add(index.Row{Session: session, EntryID: e.ID, Blob: blob, Kind: "entry", Tool: e.ToolName, Time: e.Time, Text: roll.EntryText(line)})
			n++
		}
	})
	return n
}

// kindAt finds the kind extract gave the value at ptr.
func kindAt(e *transcript.Entry, ptr string) string {
	for _, v := range e.Values {
		if v.Pointer == ptr {
			return v.Kind.String()
		}
	}
	return "text"
}

// removedText decodes a removed value for the index: a string's text, a
// block's text or thinking, nothing for an image.
func removedText(p *transcript.Parser, raw []byte) string {
	t, err := p.Parse(raw)
	if err != nil {
		return ""
	}
	if t.Nodes[0].Kind == '"' {
		return t.Str(0)
	}
	for _, k := range []string{"thinking", "text"} {
		if s := t.Str(t.Get(0, k)); s != "" {
			return s
		}
	}
	return ""
}
