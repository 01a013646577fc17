package restore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/transcript"
)

// unarchive puts back the lines an archive marker stands for: the holder's
// bytes after its user prompt (which stayed in place). Every blob is read
// and verified before any line is written, so a failure leaves the marker
// (ok false), never half a turn. Each line goes through restore again, so
// values extracted before archiving, rolls and nested holders come back
// too.
func (x *run) unarchive(ctx context.Context, sink *transcript.Sink, line transcript.Line, t *transcript.Tree, d transcript.Dialect) (bool, error) {
	m, _, err := archive.ParseMarker(t)
	if err != nil {
		x.keep(sink, &BlobError{Line: line.Num, EntryID: "(archived turn)", Err: err})
		return false, nil
	}
	if err := m.Verify(ctx, x.opt.Store); err != nil {
		blob := ""
		if he, ok := err.(*archive.HolderError); ok {
			blob = he.Blob
		}
		x.keep(sink, &BlobError{Line: line.Num, EntryID: "(archived turn " + m.ID + ")", Blob: blob, Err: err})
		return false, nil
	}
	x.stats.Entries++
	var p transcript.Parser
	var carry []byte // a line split between blobs
	emit := func(body []byte, newline bool) error {
		l := transcript.Line{Num: line.Num, Body: body, Newline: newline}
		var lt *transcript.Tree
		if len(bytes.TrimSpace(body)) > 0 {
			if tr, err := p.Parse(body); err == nil {
				lt = tr
			}
		}
		return x.handle(ctx, sink, l, lt, d, nil)
	}
	var off int64
	for _, dg := range m.Blobs {
		data, err := x.opt.Store.Get(ctx, dg)
		if err != nil {
			return false, fmt.Errorf("line %d: the archived turn %s became unreadable while restoring it: %w", line.Num, m.ID, err)
		}
		end := off + int64(len(data))
		if end <= m.From {
			off = end
			continue
		}
		data = data[max(m.From-off, 0):]
		off = end
		for len(data) > 0 {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				carry = append(carry, data...)
				break
			}
			body := data[:i]
			if len(carry) > 0 {
				body = append(carry, body...)
				carry = nil
			}
			data = data[i+1:]
			if err := emit(bytes.Clone(body), true); err != nil {
				return false, err
			}
		}
	}
	if len(carry) > 0 {
		if err := emit(carry, false); err != nil {
			return false, err
		}
	}
	return true, nil
}
