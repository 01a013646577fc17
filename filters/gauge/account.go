// Package gauge measures how full an agent's context window is: the size
// the provider last reported (usage) plus an estimate of everything after
// it, the accounting seed 003 §6 describes and pi itself uses.
package gauge

import (
	"strings"

	"github.com/bstools/bs/filters/transcript"
)

// Role says what a line means for the accounting.
type Role int

const (
	_          Role = iota // not in context (headers, progress, snapshots, events)
	Content                // in context; its tokens are estimated
	Usage                  // an assistant message carrying the context size the provider saw
	Compaction             // a compaction (or bs roll's note): earlier usage is stale
)

// Line is what one transcript line contributes.
type Line struct {
	Role     Role
	Tokens   int    // for Usage: the context size recorded
	MsgID    string // for Usage in Claude Code: the API message id shared by the lines of one response
	Estimate int    // estimated tokens of the line's context content
	Model    string // a model the line names
	Window   int    // a context window the line states (Codex token_count)
	// Scope, on a bs roll note, is how many lines after it were already
	// counted in its Estimate: their usage is stale and their text is in.
	Scope int
	// On a pi compaction: the first entry it keeps in context, by id (v2+)
	// or by pi's entry number (v1; 0 for none). The kept entries stand
	// before the compaction; Measure and MeasureFile add them to its
	// Estimate.
	KeptID    string
	KeptIndex int
	// On a pi compaction (v2+): its parentId, where the path of the tree
	// that leads to it goes back from; the kept entries are on that path.
	Parent string
	// On a bs roll note: the estimator its figure was made with, when it
	// says.
	Estimator string
	// RollStart marks bs roll's marker in a pi tree, RollEnd its note
	// (for pi the compaction appended last); Marker is the marker's id on
	// both. The lines between are the file as it was before the roll: a
	// path that passes the marker but leaves before the note (a user gone
	// back to a kept entry) has lost the evicted messages, which their
	// usage still counts. On RollStart, Evicted is what roll counted them
	// (State.Add takes it off), and Closes names the earlier markers whose
	// notes the roll evicted: what follows is after those notes.
	RollStart, RollEnd bool
	Marker             string
	Evicted            int
	Closes             []string

	// Adj is a usage line's _adjusted: what bs took out of the context
	// the usage covered since it was recorded.
	Adj Adjustment
	// Extracted is what the line's _extracted records say bs took out of
	// it, in their estimator's tokens. On a bs roll note, KeptExtracted is
	// what the lines of its scope said when roll counted them (-1: the
	// note does not say), and NoteScale its calibration: a line of the
	// scope changed since is worth the difference.
	Extracted     int
	KeptExtracted int
	NoteScale     float64

	// evicts marks the line standing where a roll's evicted range was:
	// for pi a marker before the kept entries, whose note comes after
	// them; for the other dialects the note itself.
	evicts bool
}

// Estimator turns text into an estimated token count.
type Estimator interface {
	Tokens(chars int) int
	Name() string
}

// CharsPer4 is the default estimator: a token per four characters.
type CharsPer4 struct{}

func (CharsPer4) Tokens(chars int) int { return (chars + 3) / 4 }
func (CharsPer4) Name() string         { return "chars/4" }

// ImageTokens is what one image costs in context, roughly, whatever its
// base64 length.
const ImageTokens = 1200

// Classify says what a parsed line contributes in dialect d.
func Classify(t *transcript.Tree, d transcript.Dialect, est Estimator) Line {
	return classify(t, d, est, true, nil)
}

// lineRole is Classify without the estimates, which cost as much as
// parsing the line: what a line is (a usage, a compaction, a roll note),
// for a reader that needs no estimate of it.
func lineRole(t *transcript.Tree, d transcript.Dialect) Line {
	return classify(t, d, nil, true, nil)
}

// Part is one thing the estimate of a line counts: a string the model
// reads (its node, its decoded characters, and its tokens when the
// estimator counts text) or an image.
type Part struct {
	Node   int
	Chars  int
	Tokens int // with a TextEstimator; 0 otherwise
	Image  bool
}

// Contents estimates what one line puts in context, whatever precedes it:
// the Estimate Classify gives a content line, a line carrying usage (its
// own content, which the usage covers) or a compaction (the summary it
// carries), and 0 for a bs roll note, whose Estimate states the context it
// leaves rather than its own text, and for every other line. visit, if not
// nil, is told each part counted, in order: the estimate is est.Tokens of
// their summed Chars (the summed Tokens with a TextEstimator) plus
// ImageTokens per image.
func Contents(t *transcript.Tree, d transcript.Dialect, est Estimator, visit func(Part)) int {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' || t.Get(0, transcript.RolledField) >= 0 {
		return 0
	}
	return classify(t, d, est, true, visit).Estimate
}

// classify is Classify; without usageEstimate it does not estimate a line
// that carries usage, whose own estimate a State never uses (the usage
// covers it). Calibration and roll need it; the gauge does not. visit, if
// not nil, is told each part the estimate counts.
func classify(t *transcript.Tree, d transcript.Dialect, est Estimator, usageEstimate bool, visit func(Part)) Line {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' || t.Get(0, transcript.SpentField) >= 0 {
		return Line{} // a spend record is for cost reports: never in context
	}
	l := classifyRole(t, d, est, usageEstimate, visit, true)
	// What bs wrote on the line: the record of what it took out, and on a
	// usage what it took out of the context the usage covered.
	if x := t.Get(0, "_extracted"); x >= 0 {
		l.Extracted = extractedTokens(t, x)
	}
	if l.Role == Usage || l.RollEnd {
		l.Adj = readAdjustment(t, t.Get(0, transcript.AdjustedField))
	}
	l.evicts = t.Get(0, transcript.EvictedField) >= 0
	return l
}

// runtimeLine is what a line is to the runtime's own view of the context,
// for tests that check the gauge against it: its estimate even when it
// carries usage, and a line bs roll wrote read as what it is in the
// runtime's shape, not as the figure it states: pi's compaction as the
// compaction it is; elsewhere the note's text, in context where the
// evicted range was, the lines before it staying (roll keeps them in
// place, and Codex, say, sends its initial context again after a
// compaction).
func runtimeLine(t *transcript.Tree, d transcript.Dialect, est Estimator) Line {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' || t.Get(0, transcript.SpentField) >= 0 {
		return Line{}
	}
	l := classifyRole(t, d, est, true, nil, false)
	if l.Role == Usage || l.Role == Compaction && d.RollTree() == nil && t.Get(0, transcript.RolledField) >= 0 {
		l.Role = Content
	}
	return l
}

// classifyRole is classify without what bs wrote on the line; without
// rollNotes a line bs roll wrote reads as any other.
func classifyRole(t *transcript.Tree, d transcript.Dialect, est Estimator, usageEstimate bool, visit func(Part), rollNotes bool) Line {
	content := func(i int) Line {
		if est == nil {
			return Line{Role: Content} // its role only (lineRole)
		}
		c := countChars(t, i, est, visit)
		return Line{Role: Content, Estimate: c.tokens + c.images*ImageTokens}
	}
	// A bs roll note states the context it leaves behind, in any dialect.
	// In a tree (RollTree), roll's copy of the compaction the runtime
	// started from, which it evicted, keeps from the marker on: it reads
	// as the compaction it is.
	if r := t.Get(0, transcript.RolledField); rollNotes && r >= 0 && !(d.RollTree() != nil && d.IsCompaction(t) && t.Get(r, "tokens") < 0) {
		if tok := t.Get(r, "tokens"); tok >= 0 {
			l := Line{Role: Compaction, Estimate: intAt(t, tok), Scope: intAt(t, t.Get(r, "kept_lines")), Estimator: t.Str(t.Get(r, "estimator")), RollEnd: true, Marker: t.Str(t.Get(r, "marker")), KeptExtracted: -1}
			if k := t.Get(r, "kept_moved"); k >= 0 {
				l.KeptExtracted, l.NoteScale = intAt(t, k), floatAt(t, t.Get(r, "scale"))
			}
			return l
		}
		if rt := d.RollTree(); rt != nil { // roll's tree protocol (roll/note.go)
			switch rl := rt.ReadRolled(t); {
			case rl.Marker:
				// The marker of a tree (v2+), whose note is in context
				// where the path leaves the compaction.
				l := Line{Role: Content, Estimate: content(rl.Content).Estimate, RollStart: true, Marker: rl.ID, Evicted: intAt(t, t.Get(r, "evicted_tokens"))}
				t.Children(t.Get(r, "closes"), func(c, _ int) { l.Closes = append(l.Closes, t.Str(c)) })
				return l
			default:
				// The model an evicted answer named, which roll keeps
				// (a model change; none on another line).
				return Line{Model: rl.Model}
			}
		}
		return Line{}
	}
	if d == nil {
		d = transcript.Fallback() // what an undetected transcript is read as
	}
	return account(d.Account(t), content, usageEstimate)
}

// account is the Line of a line the dialect accounts as a: content
// estimates the node its context text is at; a usage line's own text is
// estimated only with usageEstimate.
func account(a transcript.Account, content func(int) Line, usageEstimate bool) Line {
	var l Line
	switch a.Role {
	case transcript.InContext:
		l = content(a.Content)
	case transcript.UsageReport:
		if a.Text && usageEstimate {
			l = content(a.Content)
		}
		l.Role, l.Tokens, l.MsgID = Usage, a.Tokens, a.MsgID
	case transcript.CompactionEntry:
		if a.Text {
			l = content(a.Content)
		}
		if a.HasFallback && l.Estimate == 0 {
			l = content(a.Fallback)
		}
		l.Role = Compaction
		l.KeptID, l.KeptIndex, l.Parent = a.KeptID, a.KeptIndex, a.Parent
	}
	l.Model, l.Window = a.Model, a.Window
	return l
}

func intAt(t *transcript.Tree, i int) int { return int(floatAt(t, i)) }

type charCount struct{ tokens, images int }

// countChars estimates the tokens of the strings below node i that the
// model reads, and counts the images (the blocks of a type a dialect
// says holds one: transcript.RegisteredBlocks). With chars/4 the characters are
// counted without decoding; a tokenizer gets each string decoded. visit,
// if not nil, is told each string and image counted. The strings of the
// members a dialect says the model does not read as text
// (transcript.RegisteredNotText) and bs's own members are not counted.
func countChars(t *transcript.Tree, i int, est Estimator, visit func(Part)) charCount {
	var c charCount
	notText := transcript.RegisteredNotText()
	blocks := transcript.RegisteredBlocks()
	te, text := est.(TextEstimator)
	_, walking := est.(partsOnly)
	chars := 0
	var walk func(i int)
	walk = func(i int) {
		n := &t.Nodes[i]
		switch n.Kind {
		case '"':
			p := Part{Node: i}
			switch {
			case walking:
				// Only where: the caller counts the parts it wants.
			case text:
				p.Tokens = te.TextTokens(t.Str(i))
				c.tokens += p.Tokens
			default:
				p.Chars = t.StringChars(i)
				chars += p.Chars
			}
			if visit != nil {
				visit(p)
			}
		case '{':
			if blocks.Image(t.Str(t.Get(i, "type"))) {
				c.images++
				if visit != nil {
					visit(Part{Node: i, Image: true})
				}
				return
			}
			for ch := n.First; ch >= 0; ch = t.Nodes[ch].Next {
				if k := t.Key(ch); !notText[k] && !strings.HasPrefix(k, "_") {
					walk(ch)
				}
			}
		case '[':
			for ch := n.First; ch >= 0; ch = t.Nodes[ch].Next {
				walk(ch)
			}
		}
	}
	if i >= 0 {
		walk(i)
	}
	if !text {
		c.tokens = est.Tokens(chars)
	}
	return c
}

// partsOnly is the estimator of a walk that only tells the parts the
// gauge counts, without counting them (Replaced counts a few of them).
type partsOnly struct{ CharsPer4 }

// ValueTokens estimates the tokens of the value at node i as the gauge
// counts a line's content: the strings the model reads, ImageTokens per
// image. bs stats counts extracted values with it.
func ValueTokens(t *transcript.Tree, i int, est Estimator) int {
	c := countChars(t, i, est, nil)
	return c.tokens + c.images*ImageTokens
}
