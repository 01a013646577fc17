package trim

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/bstools/bs/filters/internal/binrec"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/spool"
)

// records is what the planner remembers of every input line (rec, and
// resLine for a line with tool results), kept in a temp file rather than
// in memory: OpenClaw's pruning decides each result by totals over the
// whole context, so the plan reads every line's record again, in order,
// up to three times (each), and memory stays bounded whatever the number
// of lines. In memory, the records of a 1 GiB session (183,491 lines) were
// 58 MB of the 89 MB trim held live at its peak, and the collector let the
// heap grow to twice that.
type records struct {
	f    *os.File
	w    *bufio.Writer
	n    int    // records added
	buf  []byte // the one being encoded
	mark []byte // its gauge.Mark
	// keptFrom holds the lines whose gauge.Mark a later pi compaction
	// marks KeptFrom after their record was written: one per compaction.
	keptFrom map[int]bool
}

func newRecords() (*records, error) {
	f, err := spool.Temp("bs-trim-plan-*")
	if err != nil {
		return nil, err
	}
	return &records{f: f, w: bufio.NewWriterSize(f, 256<<10), keptFrom: map[int]bool{}}, nil
}

// Close removes the file.
func (rs *records) Close() error { return rs.f.Close() }

// Record flags.
const (
	recPrompt = 1 << iota
	recStart
	recEntry
	recResults
)

// add appends line number rs.n's record: r, and l when the line holds
// tool results.
func (rs *records) add(r *rec, l *resLine) error {
	b := append(rs.buf[:0], binrec.Flags(r.prompt, r.start, r.entry, l != nil), byte(r.kind))
	b = binrec.AppendInt(b, r.n)
	b = binrec.AppendInt(b, r.chars)
	b = binrec.AppendString(b, r.id)
	mark, err := r.mark.AppendBinary(rs.mark[:0])
	if err != nil {
		return err
	}
	rs.mark = mark
	b = binrec.AppendFrame(b, mark)
	b = appendAdjustAt(b, r.adjustAt)
	if l != nil {
		b = l.appendBinary(b)
	}
	rs.buf = b
	rs.n++
	if err := binrec.WriteFrame(rs.w, b); err != nil {
		return fmt.Errorf("trim: keeping the plan's records: %w", err)
	}
	return nil
}

// errStop stops each early, without an error.
var errStop = errors.New("stop")

// each calls fn with every record in order: the line's number (from 0),
// its rec, and its resLine or nil. fn may keep l, not r; errStop from fn
// ends the walk without an error.
func (rs *records) each(fn func(i int, r *rec, l *resLine) error) error {
	if err := rs.w.Flush(); err != nil {
		return fmt.Errorf("trim: keeping the plan's records: %w", err)
	}
	rd := bufio.NewReaderSize(io.NewSectionReader(rs.f, 0, 1<<62), 256<<10)
	var buf []byte
	var off int64
	for i := 0; i < rs.n; i++ {
		b, err := binrec.ReadFrame(rd, buf)
		if err != nil {
			return fmt.Errorf("trim: reading the plan's records: %w", eofUnexpected(err))
		}
		buf = b
		var r rec
		l, err := r.unmarshal(b)
		if err != nil {
			return fmt.Errorf("trim: reading the plan's records: %w", err)
		}
		r.off = off
		off += int64(r.n)
		if rs.keptFrom[i] {
			r.mark.KeptFrom = true
		}
		if l != nil {
			l.rec = i
		}
		if err := fn(i, &r, l); err != nil {
			if err == errStop {
				return nil
			}
			return err
		}
	}
	return nil
}

// unmarshal sets r from what add wrote, and returns the line's resLine if
// it has one.
func (r *rec) unmarshal(b []byte) (*resLine, error) {
	rd := binrec.NewReader(b)
	flags := rd.Byte()
	r.kind = kind(rd.Byte())
	r.prompt, r.start, r.entry = flags&recPrompt != 0, flags&recStart != 0, flags&recEntry != 0
	r.n, r.chars, r.id = rd.Int(), rd.Int(), rd.Text()
	if err := r.mark.UnmarshalBinary(rd.Bytes()); err != nil {
		return nil, err
	}
	r.adjustAt = readAdjustAt(rd)
	var l *resLine
	if flags&recResults != 0 {
		l = new(resLine)
		l.readBinary(rd)
	}
	return l, rd.Err()
}

// How a record's adjustAt is kept: its Text is one of three, and the
// offsets follow unless there is none.
const (
	adjustNone    = iota
	adjustReplace // the value of the _adjusted the line has
	adjustInsert  // a member of its own, the root's first
	adjustAppend  // a member after the root's last
)

// The texts before an inserted _adjusted's value; clipped, as EditAt
// appends to them.
var (
	adjustInsertText = slices.Clip(append(transcript.AppendQuote(nil, transcript.AdjustedField), ':'))
	adjustAppendText = slices.Clip(append([]byte{','}, adjustInsertText...))
)

func appendAdjustAt(b []byte, at transcript.Edit) []byte {
	how := adjustReplace
	switch {
	case at.Start == 0 && at.End == 0 && at.Text == nil:
		return append(b, adjustNone)
	case len(at.Text) > 0 && at.Text[0] == ',':
		how = adjustAppend
	case len(at.Text) > 0:
		how = adjustInsert
	}
	b = append(b, byte(how))
	b = binrec.AppendInt(b, at.Start)
	return binrec.AppendInt(b, at.End)
}

func readAdjustAt(rd *binrec.Reader) transcript.Edit {
	how := rd.Byte()
	if how == adjustNone {
		return transcript.Edit{}
	}
	at := transcript.Edit{Start: rd.Int(), End: rd.Int()}
	switch how {
	case adjustInsert:
		at.Text = adjustInsertText
	case adjustAppend:
		at.Text = adjustAppendText
	}
	return at
}

// resLine and slot flags.
const (
	lineFixed = 1 << iota
	lineExtEmpty
)

const (
	slotImage = 1 << iota
	slotAsString
	slotLocked
	slotCounted
)

// appendBinary appends what the plan and the write need of l: not what
// only the scan uses (a slot's call id and node), nor what the plan
// decides (acts, tokens).
func (l *resLine) appendBinary(b []byte) []byte {
	b = append(b, binrec.Flags(l.fixed, l.extEmpty))
	b = binrec.AppendString(b, l.id)
	b = binrec.AppendInt(b, l.rootEnd)
	b = binrec.AppendInt(b, l.ext)
	b = binrec.AppendInt(b, l.adjusted.Start)
	b = binrec.AppendInt(b, l.adjusted.End)
	b = binrec.AppendInt(b, len(l.slots))
	for i := range l.slots {
		s := &l.slots[i]
		b = append(b, binrec.Flags(s.image, s.asString, s.locked, s.counted))
		b = binrec.AppendString(b, s.tool)
		b = binrec.AppendString(b, s.block)
		b = binrec.AppendString(b, s.ptr)
		for _, v := range []int{s.rawLen, s.chars, s.start, s.end, s.worth, len(s.texts)} {
			b = binrec.AppendInt(b, v)
		}
		for _, x := range s.texts {
			b = binrec.AppendInt(b, x.start)
			b = binrec.AppendInt(b, x.end)
		}
	}
	return b
}

// readBinary reads what appendBinary wrote.
func (l *resLine) readBinary(rd *binrec.Reader) {
	flags := rd.Byte()
	l.fixed, l.extEmpty = flags&lineFixed != 0, flags&lineExtEmpty != 0
	l.id = rd.Text()
	l.rootEnd, l.ext = rd.Int(), rd.Int()
	l.adjusted.Start, l.adjusted.End = rd.Int(), rd.Int()
	n := rd.Len()
	l.slots = make([]slot, n)
	for i := range l.slots {
		s := &l.slots[i]
		flags := rd.Byte()
		s.image, s.asString, s.locked, s.counted = flags&slotImage != 0, flags&slotAsString != 0, flags&slotLocked != 0, flags&slotCounted != 0
		s.tool, s.block, s.ptr = rd.Text(), rd.Text(), rd.Text()
		s.rawLen, s.chars, s.start, s.end, s.worth = rd.Int(), rd.Int(), rd.Int(), rd.Int(), rd.Int()
		s.texts = make([]span, rd.Len())
		for k := range s.texts {
			s.texts[k] = span{rd.Int(), rd.Int()}
		}
	}
	l.acts = make([]action, n)
}
