package trim

import (
	"strings"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// kind is what a line is to OpenClaw's pruner, as the dialect tells it.
type kind = transcript.PruneKind

const (
	none      = transcript.PruneNone
	user      = transcript.PruneUser
	assistant = transcript.PruneAssistant
	results   = transcript.PruneResults
	other     = transcript.PruneOther // 256 characters
)

// otherChars is what OpenClaw counts for a message that is neither user,
// assistant nor tool result; imageChars is what it counts per image.
const (
	otherChars = 256
	imageChars = 8000
)

// facts is what one parsed line tells the pruner. It depends on the line
// alone, so lines can be classified in any order.
type facts struct {
	kind  kind
	chars int // OpenClaw's estimate of the line's context characters
	// For an assistant line: the response it belongs to (Claude Code
	// splits one response over lines sharing message.id) and whether it
	// continues the assistant side of the line before (Codex, BrainSurgeon
	// write one item per line).
	msgID    string
	sideItem bool
	// prompt is a user prompt the runtime records outside the messages it
	// sends (Codex's event_msg user_message): it ends the bootstrap guard
	// as a user message does, and counts for nothing.
	prompt bool
	time   string // the line's timestamp
	timeMs int64  // a unix-millisecond timestamp, when that is all there is
	model  string
	calls  []call // tool calls the line makes

	// A compaction: the context starts after it, or at the entry it keeps.
	compaction bool
	keptID     string
	keptIndex  int
	id         string // the entry's own id ("" if none)
	keepable   bool   // a compaction may name id as the first entry it keeps

	// Where edits go, for a line with tool results.
	fixed     bool // bs's own members are not what bs writes: leave the line alone
	rootEnd   int  // offset of the end of the root's last member
	ext       int  // where members are appended to _extracted, -1 if absent
	extEmpty  bool
	extracted []string // pointers _extracted lists already
	slots     []slot

	// acct is what the line is to the gauge, for the ledger that carries
	// what the run takes out of the context onto the usage lines after.
	acct gauge.LedgerLine
	// adjusted is the span of its _adjusted member, which a derived id
	// leaves out (transcript.DeriveIDOf).
	adjusted transcript.Edit
	// adjustAt is where a new _adjusted goes (gauge.AdjustedAt), for the
	// write to give a usage line its own without parsing it again.
	adjustAt transcript.Edit
}

type call struct{ id, name string }

// slot is one tool result inside a line.
type slot struct {
	callID string
	tool   string
	image  bool
	rawLen int // length of the text blocks joined with "\n"
	chars  int // OpenClaw's estimate: text plus images

	start, end int    // the value that is replaced
	asString   bool   // it is a string; else an array that becomes one text block
	block      string // the type of that text block
	texts      []span // the raw JSON strings of the text parts, in order
	ptr        string
	locked     bool // already (partly) extracted: counted, never pruned

	node int // the value's node, while the line is parsed
	// What the value puts in the context as the gauge counts the line
	// (gauge.Shares), and whether the gauge reads anything there.
	worth   int
	counted bool
}

type span struct{ start, end int }

// classify reads one line in dialect d; with estimates, what it puts in
// context too (see gauge.Ledger.Measuring).
func classify(t *transcript.Tree, d transcript.Dialect, estimates bool) facts {
	f := facts{keptIndex: -1, ext: -1, acct: gauge.LedgerLineOf(t, d, estimator, estimates)}
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' || t.Get(0, transcript.SpentField) >= 0 {
		return f // a spend record is for cost reports: never in context
	}
	f.adjustAt = gauge.AdjustedAt(t)
	c := classifier{t: t, f: &f}
	// A bs roll note resets the context in any dialect.
	if r := t.Get(0, transcript.RolledField); r >= 0 && t.Get(r, "tokens") >= 0 {
		f.compaction = true
	}
	if d == nil {
		d = transcript.Fallback() // what an undetected transcript is read as
	}
	c.prune(d)
	if len(f.slots) > 0 {
		c.anchors(d)
		f.adjusted = transcript.AdjustedSpan(t)
		nodes := make([]int, len(f.slots))
		for i := range f.slots {
			nodes[i] = f.slots[i].node
		}
		worth, counted := gauge.Shares(t, d, estimator, nodes)
		for i := range f.slots {
			f.slots[i].worth, f.slots[i].counted = worth[i], counted[i]
		}
	}
	return f
}

// estimator is how trim counts what it takes out of the context, for the
// gauge (it decides by OpenClaw's own count, in chars).
var estimator = gauge.CharsPer4{}

type classifier struct {
	t *transcript.Tree
	f *facts
}

func (c *classifier) str(i int, names ...string) string { return c.t.Str(c.t.Path(i, names...)) }

// units is the UTF-16 length of the string at node i (0 if not a string).
func (c *classifier) units(i int) int {
	if i < 0 || c.t.Nodes[i].Kind != '"' {
		return 0
	}
	if n, ok := c.t.StringUnits(i); ok {
		return n // the parser counted it
	}
	return rawUnits(c.t.Raw(i))
}

// blocks counts content as OpenClaw counts a user or tool-result message:
// a string, or text blocks plus imageChars per image (of any registered
// dialect's types: transcript.RegisteredBlocks).
func (c *classifier) blocks(content int) int {
	t := c.t
	if content < 0 {
		return 0
	}
	if t.Nodes[content].Kind == '"' {
		return c.units(content)
	}
	n := 0
	types := transcript.RegisteredBlocks()
	t.Children(content, func(b, _ int) {
		switch typ := c.str(b, "type"); {
		case types.Text(typ):
			n += c.units(t.Get(b, "text"))
		case types.Image(typ):
			n += imageChars
		}
	})
	return n
}

// rawLen is the UTF-16 length of a JSON value's raw text, which is what
// JSON.stringify of it measures when the runtime wrote it that way.
func (c *classifier) rawLen(i int) int {
	if i < 0 {
		return 0
	}
	raw := c.t.Raw(i)
	if c.t.Nodes[i].Kind == '"' {
		return c.units(i)
	}
	return runUnits(raw)
}

// result adds a tool result whose content is node v. textTypes name the
// block types that hold text; block is the type of the text block an array
// becomes.
func (c *classifier) result(v int, callID, tool, block string) {
	t := c.t
	if v < 0 {
		return
	}
	s := slot{callID: callID, tool: tool, block: block}
	switch t.Nodes[v].Kind {
	case '"':
		s.asString = true
		s.texts = []span{{t.Nodes[v].Start, t.Nodes[v].End}}
		s.rawLen = c.units(v)
		s.start, s.end = t.Nodes[v].Start, t.Nodes[v].End
	case '[':
		count, single := 0, -1
		types := transcript.RegisteredBlocks()
		t.Children(v, func(b, _ int) {
			count++
			switch typ := c.str(b, "type"); {
			case types.Text(typ):
				if x := t.Get(b, "text"); x >= 0 && t.Nodes[x].Kind == '"' {
					s.texts = append(s.texts, span{t.Nodes[x].Start, t.Nodes[x].End})
					s.rawLen += c.units(x)
					single = x
				}
			case types.Image(typ):
				s.image = true
			}
		})
		if count == 1 && len(s.texts) == 1 {
			// One text block: only its text changes, the block stays.
			s.asString = true
			v = single
		}
		s.start, s.end = t.Nodes[v].Start, t.Nodes[v].End
	default:
		return
	}
	s.chars = s.rawLen                 // OpenClaw counts blocks, not separators
	s.rawLen += max(0, len(s.texts)-1) // joined with "\n"
	if s.image {
		s.chars += imageChars * c.countImages(v)
	}
	s.ptr = t.Pointer(v)
	s.node = v
	c.f.slots = append(c.f.slots, s)
	c.f.chars += s.chars
}

func (c *classifier) countImages(v int) int {
	n := 0
	types := transcript.RegisteredBlocks()
	c.t.Children(v, func(b, _ int) {
		if types.Image(c.str(b, "type")) {
			n++
		}
	})
	return n
}

// anchors records where bs's members go and which values are extracted
// already.
func (c *classifier) anchors(d transcript.Dialect) {
	t, f := c.t, c.f
	root := t.Nodes[0]
	f.rootEnd = t.Nodes[root.Last].End
	if f.id == "" && t.Get(0, "__id") >= 0 {
		f.fixed = true // an __id bs did not derive: restore could not tell
		return
	}
	if e := t.Get(0, "_extracted"); e >= 0 {
		n := t.Nodes[e]
		if n.Kind != '{' {
			f.fixed = true
			return
		}
		if n.Last < 0 {
			f.ext, f.extEmpty = n.Start+1, true
		} else {
			f.ext = t.Nodes[n.Last].End
		}
		t.Children(e, func(m, _ int) { f.extracted = append(f.extracted, t.Key(m)) })
	}
	for i := range f.slots {
		s := &f.slots[i]
		for _, p := range f.extracted {
			if p == s.ptr || strings.HasPrefix(p, s.ptr+"/") || strings.HasPrefix(s.ptr, p+"/") {
				s.locked = true
			}
		}
	}
}

// prune takes what the dialect says the line is to the pruner, and
// counts its values as OpenClaw counts them.
func (c *classifier) prune(d transcript.Dialect) {
	f := c.f
	pv := transcript.PruneView{KeptIndex: f.keptIndex}
	d.Prune(c.t, &pv)
	f.id, f.keepable, f.time, f.timeMs, f.model, f.msgID = pv.ID, pv.Keepable, pv.Time, pv.TimeMs, pv.Model, pv.MsgID
	f.sideItem, f.prompt = pv.SideItem, pv.Prompt
	f.compaction = f.compaction || pv.Compaction
	f.keptID, f.keptIndex = pv.KeptID, pv.KeptIndex
	f.kind = pv.Kind
	if f.kind == other {
		f.chars = otherChars
	}
	for _, n := range pv.Texts {
		f.chars += c.units(n)
	}
	for _, n := range pv.Contents {
		f.chars += c.blocks(n)
	}
	for _, n := range pv.Raws {
		f.chars += c.rawLen(n)
	}
	f.chars += pv.Images*imageChars + pv.EmptyArgs*2 // JSON.stringify({})
	for _, k := range pv.Calls {
		f.calls = append(f.calls, call{k.ID, k.Name})
	}
	for _, r := range pv.Results {
		c.result(r.Node, r.CallID, r.Tool, r.Block)
	}
}
