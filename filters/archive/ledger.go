package archive

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/spool"
)

// The usage lines after an archived turn covered the turn's messages,
// which the synthetic entry now stands for: each carries what archiving
// took out of the context since (its _adjusted, see gauge.Ledger). The
// scanner makes the ledger's first pass as it reads; the writer makes the
// second as the output goes out, in order, turn by turn. Between them
// travel only the lines the second pass acts on (usages and resets) and
// the archived turns: archive keeps no body, and a compact index.

// event is a line the ledger's second pass acts on, or a pi v1
// compaction whose first kept entry, counted from the start of the file,
// moves when turns before it collapse (reindex: its index; 0 for none).
type event struct {
	off     int64
	n       int // bytes, with the line feed
	mark    gauge.Mark
	reindex int
	d       transcript.Dialect // the line's, to renumber it (KeptNumber)
}

// collapsed is an archived turn as pi numbers its entries: count entries
// from number start on became now (the synthetic entry, and the spend
// records after it).
type collapsed struct{ start, count, now int }

// ledger carries the totals from the scanner to the writer.
type ledger struct {
	g *gauge.Ledger

	// The scanner's side: the offsets of the latest lines, for a pi
	// compaction's first kept entry.
	recent    []int64
	recentLen []int
	bytes     int

	mu       sync.Mutex
	events   []event // not yet passed by the writer, in order
	consumed int64   // the writer is past every line before this offset

	turns []collapsed  // the writer's: the turns archived so far
	in    *spool.Ahead // the writer's: the input, read in order
}

// newLedger accounts with est for the input in, which the writer passes
// on (copyTo).
func newLedger(est gauge.Estimator, in io.ReaderAt) *ledger {
	return &ledger{g: gauge.NewLedger(est), in: spool.NewAhead(in)}
}

// observe takes the next input line (at off, n bytes) on the first pass,
// with the first kept entry's index if it is a pi v1 compaction (0 if
// not).
func (l *ledger) observe(line gauge.LedgerLine, off int64, n int, reindex int, d transcript.Dialect) {
	line.Bytes = n
	m, back := l.g.Observe(line)
	l.recent = append(l.recent, off)
	l.recentLen = append(l.recentLen, n)
	l.bytes += n
	for l.bytes > gauge.KeptLookback && len(l.recent) > 1 {
		l.bytes -= l.recentLen[0]
		l.recent, l.recentLen = l.recent[1:], l.recentLen[1:]
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if back >= 0 && back < len(l.recent) {
		// The totals there start the compaction's: an event of its own,
		// unless the writer has gone past it (it then starts from none).
		at := l.recent[len(l.recent)-1-back]
		if at >= l.consumed {
			i, _ := slices.BinarySearchFunc(l.events, at, func(e event, at int64) int { return cmpOff(e.off, at) })
			l.events = slices.Insert(l.events, i, event{off: at, mark: gauge.Mark{KeptFrom: true}})
		}
	}
	if m.Acts() || reindex > 0 {
		l.events = append(l.events, event{off: off, n: n, mark: m, reindex: reindex, d: d})
	}
}

func cmpOff(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// upTo removes and returns the events before offset to.
func (l *ledger) upTo(to int64) []event {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := 0
	for i < len(l.events) && l.events[i].off < to {
		i++
	}
	out := slices.Clone(l.events[:i])
	l.events = l.events[i:]
	l.consumed = max(l.consumed, to)
	return out
}

// copyTo writes the input from offset from up to offset to, each usage
// line among it with the _adjusted the ledger says it must now carry.
func (l *ledger) copyTo(w io.Writer, from, to int64) error {
	var p transcript.Parser
	for _, e := range l.upTo(to) {
		adj, ok := l.g.Carry(e.mark, 0, 0)
		index, moved := l.moved(e.reindex)
		if !ok && !moved || e.off < from {
			continue
		}
		if err := l.in.CopyTo(w, from, e.off-from, to); err != nil {
			return err
		}
		// Valid until the next read: it is written before then.
		line, err := l.in.Bytes(e.off, e.n, to)
		if err != nil {
			return err
		}
		l := transcript.Line{Body: line, Newline: len(line) > 0 && line[len(line)-1] == '\n'}
		if l.Newline {
			l.Body = line[:len(line)-1]
		}
		t, err := p.Parse(l.Body)
		if err != nil {
			return fmt.Errorf("reading line back: %w", err)
		}
		var edits []transcript.Edit
		if ok {
			edits = append(edits, adj.Edit(t))
		}
		if moved {
			edits = append(edits, reindexEdits(t, e.d, index)...)
		}
		out, err := transcript.SpliceLine(l, edits)
		if err != nil {
			return err
		}
		if _, err := w.Write(out); err != nil {
			return err
		}
		from = e.off + int64(e.n)
	}
	return l.in.CopyTo(w, from, to-from, to)
}

// archived passes over an archived turn's lines [from, to), which the
// output replaces by its synthetic entry: what they held in context less
// what the entry holds leaves the context there. A reset among them
// still ends what came before.
func (l *ledger) archived(from, to int64, removed, added int, entries collapsed) {
	l.g.Carry(gauge.Mark{}, removed, added)
	if entries.count != entries.now {
		l.turns = append(l.turns, entries)
	}
	for _, e := range l.upTo(to) {
		if e.off >= from && e.mark.Resets() {
			l.g.Carry(e.mark, 0, 0)
		}
	}
}

// moved is where the entry numbered index (0: none) stands once the turns
// archived so far have collapsed: earlier by the entries each turn before
// it lost, or at the synthetic entry of the turn it was in.
func (l *ledger) moved(index int) (int, bool) {
	if index <= 0 {
		return 0, false
	}
	at := index
	for _, c := range l.turns {
		switch {
		case index >= c.start+c.count:
			at -= c.count - c.now
		case index >= c.start:
			at -= index - c.start
		}
	}
	return at, at != index
}

// ReindexedField keeps, on a compaction whose first kept entry bs archive
// renumbered (a pi v1 one), the number it had, as the member that holds it
// (Dialect.KeptNumber): {"firstKeptEntryIndex":N}. restore --all puts it
// back.
const ReindexedField = "_reindexed"

// reindexEdits renumber the first kept entry of compaction t, in dialect
// d, keeping the number it had first.
func reindexEdits(t *transcript.Tree, d transcript.Dialect, index int) []transcript.Edit {
	if d == nil {
		return nil
	}
	k := d.KeptNumber(t)
	if k < 0 {
		return nil
	}
	edits := []transcript.Edit{t.ReplaceValue(k, strconv.AppendInt(nil, int64(index), 10))}
	if t.Get(0, ReindexedField) < 0 {
		orig := append(append(append([]byte{'{'}, t.Nodes[k].Name...), ':'), t.Raw(k)...)
		edits = append(edits, t.InsertMember(0, ReindexedField, append(orig, '}')))
	}
	return edits
}
