package trim

import (
	"strconv"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// action is what happens to a tool result.
type action uint8

const (
	keep action = iota
	soft        // head and tail kept, with the note
	hard        // replaced by the placeholder
)

// rec is what the pruner remembers of each input line (in records): never
// its body.
type rec struct {
	off    int64 // set when read back
	n      int
	kind   kind
	prompt bool // a user prompt recorded outside the context (facts.prompt)
	start  bool // the first line of an assistant message
	chars  int
	id     string // OpenClaw/pi entry ids, for a compaction's first kept entry
	entry  bool   // valid JSON: an entry pi numbers (v1's firstKeptEntryIndex)
	mark   gauge.Mark
	// adjustAt is where the line's _adjusted goes (facts.adjustAt); its
	// Text is empty for a line that is not an object.
	adjustAt transcript.Edit
}

// resLine is a line holding tool results, with where its edits go.
type resLine struct {
	rec      int
	id       string
	fixed    bool
	rootEnd  int
	ext      int
	extEmpty bool
	slots    []slot
	acts     []action
	tokens   []int // what each action takes out of the context (gauge.Ledger)
	adjusted transcript.Edit
}

// planner runs OpenClaw's pruneContextMessages over the remembered lines.
type planner struct {
	opt      *Options
	recs     *records
	ctxStart int // the first line of the context (after the latest compaction)
	window   int // tokens
	match    *matcher
	ledger   *gauge.Ledger
	// starts are the lines that start the latest KeepLastAssistants
	// assistant messages, oldest first: the last of them protects the
	// results after it.
	starts []int

	// The plan: the results on lines [first, cutoff) that OpenClaw may
	// prune are soft-trimmed if soft (as far as they are long enough),
	// and the first hard of them hard-cleared.
	first, cutoff int
	soft          bool
	hard          int
}

// noteStart notes that line i starts an assistant message.
func (p *planner) noteStart(i int) {
	if k := p.opt.KeepLastAssistants; k > 0 {
		if len(p.starts) == k {
			p.starts = append(p.starts[:0], p.starts[1:]...)
		}
		p.starts = append(p.starts, i)
	}
}

// protectedFrom is the cutoff: the line from which tool results are
// protected, that of the last KeepLastAssistants assistant messages in
// the context, or -1 when the context holds fewer.
func (p *planner) protectedFrom() int {
	k := p.opt.KeepLastAssistants
	switch {
	case k <= 0:
		return p.recs.n
	case len(p.starts) < k || p.starts[0] < p.ctxStart:
		return -1
	}
	return p.starts[0]
}

// eachPrunable calls fn with each result of line i (r, l) that OpenClaw
// may prune, given the plan's range: its slot, and the characters it
// counts for after a soft trim (trims: it is trimmed).
func (p *planner) eachPrunable(first, cutoff, i int, r *rec, l *resLine, fn func(k, chars int, trims bool)) {
	if i < first || i >= cutoff || r.kind != results || l == nil || l.fixed {
		return
	}
	opt := p.opt
	head, tail := max(0, opt.SoftHead), max(0, opt.SoftTail)
	for k := range l.slots {
		s := &l.slots[k]
		if s.locked || s.image || !p.match.prunable(s.tool) {
			continue
		}
		if s.rawLen > opt.SoftMax && head+tail < s.rawLen {
			fn(k, head+len(softSep)+tail+p.noteLen(s.rawLen), true)
		} else {
			fn(k, s.chars, false)
		}
	}
}

// noteLen is the length of the note that ends a soft-trimmed result of n
// characters.
func (p *planner) noteLen(n int) int {
	return len(trimNote(p.opt.SoftHead, p.opt.SoftTail, 0)) - 1 + len(strconv.Itoa(n))
}

// plan decides the fate of the tool results and fills in st. It reads the
// records once, and again when results are hard-cleared.
func (p *planner) plan(st *Stats) error {
	opt := p.opt
	st.Window = p.window
	charWindow := p.window * charsPerToken
	cutoff := p.protectedFrom()
	// The context's size; the bootstrap guard (nothing before the first
	// user message, found where the runtime writes it); and what a soft
	// trim of every prunable result after it would leave.
	first := -1
	softened, trimmed, prunableChars := 0, 0, 0
	err := p.recs.each(func(i int, r *rec, l *resLine) error {
		if i < p.ctxStart {
			return nil
		}
		st.CharsBefore += r.chars
		if first < 0 && (r.kind == user || r.prompt) {
			first = i
		}
		if first >= 0 {
			p.eachPrunable(first, cutoff, i, r, l, func(k, chars int, trims bool) {
				if trims {
					softened += chars - l.slots[k].chars
					trimmed++
				}
				prunableChars += chars
			})
		}
		return nil
	})
	if err != nil {
		return err
	}
	st.CharsAfter = st.CharsBefore
	ratio := func(total int) float64 { return float64(total) / float64(charWindow) }
	switch {
	case charWindow <= 0:
		st.Skipped = "no context window"
		return nil
	case cutoff < 0:
		st.Skipped = "fewer than " + strconv.Itoa(opt.KeepLastAssistants) + " assistant messages"
		return nil
	case ratio(st.CharsBefore) < opt.SoftTrimRatio:
		st.Skipped = "under --soft-trim-ratio"
		return nil
	}
	if first < 0 {
		first = p.recs.n
	}
	p.first, p.cutoff, p.soft = first, cutoff, true
	total := st.CharsBefore + softened
	st.CharsAfter, st.Trimmed = total, trimmed
	if ratio(total) < opt.HardClearRatio || !opt.HardClear || prunableChars < opt.MinPrunableChars {
		return nil
	}
	// Hard-clear the prunable results oldest first while the context is
	// still too full.
	placeholder := jsUnits(opt.Placeholder)
	err = p.recs.each(func(i int, r *rec, l *resLine) error {
		stop := false
		p.eachPrunable(first, cutoff, i, r, l, func(_, chars int, trims bool) {
			if stop = stop || ratio(total) < opt.HardClearRatio; stop {
				return
			}
			p.hard++
			if trims {
				st.Trimmed--
			}
			total += placeholder - chars
		})
		if stop {
			return errStop
		}
		return nil
	})
	st.Cleared, st.CharsAfter = p.hard, total
	return err
}

// act gives line i's tool results the plan's actions; seen counts the
// prunable results met so far, in order.
func (p *planner) act(i int, r *rec, l *resLine, seen *int) {
	if !p.soft {
		return
	}
	p.eachPrunable(p.first, p.cutoff, i, r, l, func(k, _ int, trims bool) {
		*seen++
		switch {
		case *seen <= p.hard:
			l.acts[k] = hard
		case trims:
			l.acts[k] = soft
		}
	})
}

// charsPerToken is OpenClaw's estimate: the window in characters is four
// per token.
const charsPerToken = 4

// softSep stands between the head and the tail of a trimmed result.
const softSep = "\n...\n"

// trimNote is the note that ends a soft-trimmed result.
func trimNote(head, tail, n int) string {
	return "\n\n[Tool result trimmed: kept first " + strconv.Itoa(head) + " chars and last " + strconv.Itoa(tail) + " chars of " + strconv.Itoa(n) + " chars.]"
}

// eachChange calls fn with each line the plan changes, in order, with
// its tool results to trim (or nil) and its new _adjusted (or nil). It
// counts what each action takes out of the context, as the gauge counts
// it, and has the ledger say which usage lines must carry the total (its
// second pass; scan made the first).
func (p *planner) eachChange(fn func(i int, r *rec, l *resLine, adj *gauge.Adjustment) error) error {
	opt := p.opt
	suffix := 0 // " [[extracted-<id>]]" after the text, with a store
	if opt.Store != nil {
		suffix = 1 + len(transcript.Placeholder(""))
	}
	idLen := len(transcript.DeriveID(nil))
	seen := 0
	return p.recs.each(func(i int, r *rec, l *resLine) error {
		removed, added := 0, 0
		if l != nil {
			p.act(i, r, l, &seen)
			l.tokens = make([]int, len(l.slots))
			for k := range l.slots {
				s := &l.slots[k]
				if l.acts[k] == keep || !s.counted {
					continue
				}
				// The text left is the head, the tail and the note, or the
				// placeholder, and with a store the entry's own one.
				chars := jsUnits(opt.Placeholder)
				if l.acts[k] == soft {
					head, tail := max(0, opt.SoftHead), max(0, opt.SoftTail)
					chars = head + len(softSep) + tail + len(trimNote(head, tail, s.rawLen))
				}
				if suffix > 0 {
					id := len(l.id)
					if id == 0 {
						id = idLen
					}
					chars += suffix + id
				}
				l.tokens[k] = s.worth - estimator.Tokens(chars)
				if l.tokens[k] > 0 {
					removed += l.tokens[k]
				} else {
					added -= l.tokens[k]
				}
			}
			if !l.changes() {
				l = nil
			}
		}
		var adj *gauge.Adjustment
		if a, ok := p.ledger.Carry(r.mark, removed, added); ok {
			adj = &a
		}
		if l == nil && adj == nil {
			return nil
		}
		return fn(i, r, l, adj)
	})
}
