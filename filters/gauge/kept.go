package gauge

import (
	"bytes"

	"github.com/bstools/bs/filters/transcript"
)

// A pi compaction keeps the entries from its first kept one on, and pi
// appends it after them: those entries stand before the compaction in the
// file and are in context with its summary. The gauge counts them by
// walking back from the compaction to the first kept entry, at most
// KeptLookback bytes: pi keeps a few tens of thousands of tokens
// (keepRecentTokens, 20,000 by default: some 80 KB of text), so 4 MiB is
// room for a large tool output or an image among them. A first kept entry
// further back than that is not found, and the kept entries count for
// nothing, as before the gauge counted them.
const KeptLookback = 4 << 20 // bytes of non-blank lines, each with its line feed

// keptSum adds up the estimates of the lines before a pi compaction, newest
// first, until the compaction's first kept entry.
type keptSum struct {
	l     Line // the compaction
	d     transcript.Dialect
	est   Estimator
	p     transcript.Parser
	bytes int
	sum   int
	found bool
	tree  bool   // a v2+ session: only the compaction's path counts
	want  string // the id of the next entry back on that path
}

func newKeptSum(l Line, d transcript.Dialect, est Estimator) *keptSum {
	if l.Role != Compaction || d.Threads() != transcript.ParentTree || (l.KeptID == "" && l.KeptIndex <= 0) {
		return nil
	}
	return &keptSum{l: l, d: d, est: est, tree: l.KeptID != "", want: l.Parent}
}

// add takes the next line back, with its pi entry number (v1's
// firstKeptEntryIndex counts entries from 0, the header first), and
// reports whether to go on.
func (k *keptSum) add(line []byte, number int) bool {
	if len(bytes.TrimSpace(line)) == 0 {
		return true // blank lines count for nothing, as in the ring
	}
	k.bytes += len(line) + 1
	if k.bytes > KeptLookback {
		return false
	}
	t, err := k.p.Parse(line)
	if err != nil {
		return true
	}
	link := k.d.Link(t)
	id := link.ID
	if k.tree {
		// A v2+ session is a tree: the compaction's context is the path up
		// its parentIds, and an entry of another branch between the kept
		// entries and the compaction (one the user went back from) is not
		// in it. Past the root, nothing is.
		if k.want == "" {
			return false
		}
		if id != k.want {
			return true
		}
		k.want = link.Parent
	}
	if l := classify(t, k.d, k.est, true, nil); l.Role == Content || l.Role == Usage {
		k.sum += l.Estimate
	}
	if k.l.KeptID != "" {
		k.found = id == k.l.KeptID
	} else {
		k.found = number == k.l.KeptIndex
	}
	return !k.found
}

// tokens is what the kept entries add to the context: nothing if the first
// of them was not found.
func (k *keptSum) tokens() int {
	if k == nil || !k.found {
		return 0
	}
	return k.sum
}

// keptRing holds the latest lines of a stream, up to KeptLookback bytes,
// with their pi entry numbers, for a compaction to look back into. The
// bytes go round one buffer: a copy per line at memory speed, and no
// allocation, so that a pipe still gauges at over 1 GB/s.
type keptRing struct {
	buf     []byte     // allocated on the first line
	written int64      // bytes ever written to buf
	lines   []ringLine // lines[head:] are held, oldest first
	head    int
	entries int // pi's entry number of the next line
	// A transcript whose dialect numbers its entries for a compaction's
	// KeptIndex (pi v1, Dialect.NumbersEntries, asked of the first line)
	// gives a number only to the lines the runtime parses, so each line
	// is checked. One whose entries have ids (pi v2+) does not need to.
	started, v1 bool
	p           transcript.Parser
}

type ringLine struct {
	at     int64 // where the line starts, counting all bytes ever written
	n      int
	number int
}

// add takes the next line of the stream, in dialect d; valid says
// whether it is known to parse (1), known not to (0), or not known (-1).
func (r *keptRing) add(body []byte, valid int, d transcript.Dialect) {
	if len(bytes.TrimSpace(body)) == 0 {
		return
	}
	if !r.started {
		r.started = true
		t, err := r.p.Parse(body)
		r.v1 = err == nil && d.NumbersEntries(t)
	}
	if r.v1 && valid < 0 {
		if _, err := r.p.Parse(body); err == nil {
			valid = 1
		}
	}
	if r.v1 && valid != 1 && transcript.JSONLossily(body) {
		valid = 1 // the runtime reads it: it numbers it
	}
	number := r.entries
	if !r.v1 || valid == 1 {
		r.entries++ // a line the runtime cannot parse is no entry (and keptSum skips it)
	}
	if r.buf == nil {
		r.buf = make([]byte, KeptLookback)
	}
	if len(body) > len(r.buf) {
		// Longer than the lookback: nothing before it can be reached.
		clear(r.lines)
		r.lines, r.head = r.lines[:0], 0
		return
	}
	at := r.written
	i := int(at % int64(len(r.buf)))
	n := copy(r.buf[i:], body)
	copy(r.buf, body[n:])
	r.written += int64(len(body))
	r.lines = append(r.lines, ringLine{at, len(body), number})
	for r.head < len(r.lines) && r.lines[r.head].at < r.written-int64(len(r.buf)) {
		r.head++ // overwritten
	}
	if r.head > len(r.lines)/2 {
		n := copy(r.lines, r.lines[r.head:])
		r.lines, r.head = r.lines[:n], 0
	}
}

// body returns line l's bytes, joined into *scratch when they wrap round.
func (r *keptRing) body(l ringLine, scratch *[]byte) []byte {
	i := int(l.at % int64(len(r.buf)))
	if i+l.n <= len(r.buf) {
		return r.buf[i : i+l.n]
	}
	*scratch = append(append((*scratch)[:0], r.buf[i:]...), r.buf[:l.n-(len(r.buf)-i)]...)
	return *scratch
}

// kept is what the entries a compaction keeps add to the context.
func (r *keptRing) kept(l Line, d transcript.Dialect, est Estimator) int {
	k := newKeptSum(l, d, est)
	if k == nil {
		return 0
	}
	var scratch []byte
	for i := len(r.lines) - 1; i >= r.head && k.add(r.body(r.lines[i], &scratch), r.lines[i].number); i-- {
	}
	return k.tokens()
}
