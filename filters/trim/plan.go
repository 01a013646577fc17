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

// rec is what the pruner remembers of each input line: never its body.
type rec struct {
	off    int64
	n      int
	kind   kind
	prompt bool // a user prompt recorded outside the context (facts.prompt)
	start  bool // the first line of an assistant message
	chars  int
	id     string // OpenClaw/pi entry ids, for a compaction's first kept entry
	entry  bool   // valid JSON: an entry pi numbers (v1's firstKeptEntryIndex)
	res    int    // index into the lines holding tool results, -1 if none
	mark   gauge.Mark
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
	recs     []rec
	lines    []resLine
	ctxStart int // the first line of the context (after the latest compaction)
	window   int // tokens
	match    *matcher
	ledger   *gauge.Ledger
	// adjust holds the usage lines, by rec, whose _adjusted must change
	// for what the plan takes out of the context before them.
	adjust map[int]gauge.Adjustment
}

// plan decides each tool result's fate and fills in st.
func (p *planner) plan(st *Stats) {
	opt := p.opt
	st.Window = p.window
	charWindow := p.window * charsPerToken
	for i := p.ctxStart; i < len(p.recs); i++ {
		st.CharsBefore += p.recs[i].chars
	}
	st.CharsAfter = st.CharsBefore
	if charWindow <= 0 {
		st.Skipped = "no context window"
		return
	}
	// Tool results after the cutoff of the last keep-last-assistants
	// assistant messages are protected; with fewer, nothing is pruned.
	cutoff := len(p.recs)
	if opt.KeepLastAssistants > 0 {
		cutoff = -1
		left := opt.KeepLastAssistants
		for i := len(p.recs) - 1; i >= p.ctxStart; i-- {
			if p.recs[i].kind == assistant && p.recs[i].start {
				if left--; left == 0 {
					cutoff = i
					break
				}
			}
		}
		if cutoff < 0 {
			st.Skipped = "fewer than " + strconv.Itoa(opt.KeepLastAssistants) + " assistant messages"
			return
		}
	}
	// Bootstrap guard: nothing before the first user message, found
	// where the runtime writes it.
	first := len(p.recs)
	for i := p.ctxStart; i < len(p.recs); i++ {
		if p.recs[i].kind == user || p.recs[i].prompt {
			first = i
			break
		}
	}
	total := st.CharsBefore
	ratio := float64(total) / float64(charWindow)
	if ratio < opt.SoftTrimRatio {
		st.Skipped = "under --soft-trim-ratio"
		return
	}
	type ref struct {
		line, slot int
		chars      int // after any soft trim
	}
	var prunable []ref
	note := len(trimNote(opt.SoftHead, opt.SoftTail, 0)) - 1 // the note's length but for N's digits
	for i := first; i < cutoff; i++ {
		r := p.recs[i]
		if r.kind != results || r.res < 0 {
			continue
		}
		l := &p.lines[r.res]
		for k := range l.slots {
			s := &l.slots[k]
			if l.fixed || s.locked || s.image || !p.match.prunable(s.tool) {
				continue
			}
			ref := ref{line: r.res, slot: k, chars: s.chars}
			head, tail := max(0, opt.SoftHead), max(0, opt.SoftTail)
			if s.rawLen > opt.SoftMax && head+tail < s.rawLen {
				after := head + len(softSep) + tail + note + len(strconv.Itoa(s.rawLen))
				total += after - s.chars
				ref.chars = after
				l.acts[k] = soft
			}
			prunable = append(prunable, ref)
		}
	}
	ratio = float64(total) / float64(charWindow)
	defer func() {
		st.CharsAfter = total
		for _, r := range prunable {
			switch p.lines[r.line].acts[r.slot] {
			case soft:
				st.Trimmed++
			case hard:
				st.Cleared++
			}
		}
	}()
	if ratio < opt.HardClearRatio || !opt.HardClear {
		return
	}
	prunableChars := 0
	for _, r := range prunable {
		prunableChars += r.chars
	}
	if prunableChars < opt.MinPrunableChars {
		return
	}
	placeholder := jsUnits(opt.Placeholder)
	for _, r := range prunable {
		if ratio < opt.HardClearRatio {
			break
		}
		p.lines[r.line].acts[r.slot] = hard
		total += placeholder - r.chars
		ratio = float64(total) / float64(charWindow)
	}
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

// carry counts what each planned action takes out of the context, as the
// gauge counts it, and has the ledger say which usage lines must carry
// the total (its second pass; scan made the first).
func (p *planner) carry() {
	opt := p.opt
	suffix := 0 // " [[extracted-<id>]]" after the text, with a store
	if opt.Store != nil {
		suffix = 1 + len(transcript.Placeholder(""))
	}
	idLen := len(transcript.DeriveID(nil))
	p.adjust = map[int]gauge.Adjustment{}
	for i, r := range p.recs {
		removed, added := 0, 0
		if r.res >= 0 {
			l := &p.lines[r.res]
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
		}
		if adj, ok := p.ledger.Carry(r.mark, removed, added); ok {
			p.adjust[i] = adj
		}
	}
}
