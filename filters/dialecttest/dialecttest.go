// Package dialecttest is the conformance suite every transcript dialect
// passes, as blobstore/storetest is for stores. Given a dialect and
// sample transcripts in it, Run checks that the dialect answers what the
// filters ask (it claims its lines, views its entries, pairs tool calls
// with their results) and runs the filters over each sample: extract and
// restore, trim, archive, a forced roll, gauge and checkpoint. Every
// change a filter makes must come back byte for byte with restore --all,
// no filter may part a tool call from its result, and the lines the
// filters write (roll's notes, archive's markers, checkpoint's context
// entries) must be in the runtime's own shape: they classify as the
// dialect.
//
// It lives beside the filters, not in transcript, because it runs them.
package dialecttest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"path"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/filters/trim"
)

// Sample is a transcript in the dialect under test.
type Sample struct {
	Name string
	Data []byte
	// UsageOnly marks a sample that holds only what cost reports read
	// (ccusage's fixtures): no message, so no value to move.
	UsageOnly bool
}

// now is the time every filter acts at, so runs repeat.
var now = time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)

// Run runs the suite for dialect d over samples. d must be registered.
func Run(t *testing.T, d transcript.Dialect, samples []Sample) {
	t.Helper()
	t.Run("registry", func(t *testing.T) { checkRegistry(t, d) })
	if len(samples) == 0 {
		t.Fatal("no samples: the suite needs transcripts in the dialect")
	}
	// A sample may hold no turn to archive (one conversation a line) or
	// nothing to evict, but a dialect whose samples never give the
	// filters one leaves turns or messages unanswered.
	var archived, rolled, conversed, pruned, content int
	for _, s := range samples {
		t.Run(s.Name, func(t *testing.T) {
			in := answers(t, d, s)
			for _, c := range listed {
				t.Run(c.name, func(t *testing.T) {
					for _, wrong := range c.check(d, s.Data) {
						t.Error(wrong)
					}
				})
			}
			t.Run("identity", func(t *testing.T) { checkIdentity(t, d, s.Data) })
			t.Run("kept-number", func(t *testing.T) { checkKeptNumber(t, d, s.Data) })
			t.Run("extract", func(t *testing.T) { checkExtract(t, d, s, in) })
			t.Run("trim", func(t *testing.T) { pruned += checkTrim(t, d, s.Data, in) })
			t.Run("archive", func(t *testing.T) { archived += checkArchive(t, d, s.Data, in) })
			t.Run("roll", func(t *testing.T) { rolled += checkRoll(t, d, s.Data, in) })
			t.Run("gauge", func(t *testing.T) { checkGauge(t, d, s.Data) })
			t.Run("checkpoint", func(t *testing.T) { conversed += checkCheckpoint(t, d, s.Data) })
		})
		if !s.UsageOnly {
			content++
		}
	}
	if content > 0 && archived == 0 {
		t.Errorf("archive found no turn to archive in any sample: the dialect does not tell prompts, replies and tool results")
	}
	if content > 0 && pruned == 0 {
		t.Errorf("trim pruned no tool result in any sample: the dialect does not tell the pruner its results (Prune)")
	}
	if content > 0 && conversed == 0 {
		t.Errorf("no checkpoint names a topic in any sample: the dialect does not read its conversation (Converse)")
	}
	if content > 0 && rolled == 0 {
		t.Errorf("a forced roll evicted nothing in any sample: the dialect does not tell its messages")
	}
}

// listed are the checks that list what a dialect answers wrong of a
// sample's lines, each a subtest of a sample.
var listed = []struct {
	name  string
	check func(transcript.Dialect, []byte) []string
}{
	{"marks", MarkMisses},
	{"line-type", TypeMixes},
	{"outer-type", OuterTypeMisses},
	{"speaker", SpeakerMisses},
	{"tool-values", ToolValueMisses},
	{"inserted", InsertedUserTexts},
	{"blocks", BlockMisses},
	{"envelope", EnvelopeMisses},
}

// checkRegistry: --format finds the dialect by its names, help lists it,
// and no other dialect answers to its names.
func checkRegistry(t *testing.T, d transcript.Dialect) {
	for _, name := range append([]string{d.String()}, d.Aliases()...) {
		got, err := transcript.ParseDialect(name)
		if err != nil || got != d {
			t.Errorf("ParseDialect(%q) = %v, %v; want %v", name, got, err, d)
		}
	}
	if !slices.Contains(transcript.DialectList(), d.String()) {
		t.Errorf("DialectList %v does not list %q", transcript.DialectList(), d)
	}
	if !slices.Contains(transcript.Dialects(), d) {
		t.Errorf("%v is not registered", d)
	}
	if d.Title() == "" || d.HelpName() == "" {
		t.Errorf("%v has no title or help name", d)
	}
	// Where the runtime keeps its sessions is under the home directory.
	for _, dir := range d.SessionDirs() {
		if dir == "" || path.IsAbs(dir) || path.Clean(dir) != dir || dir == ".." || strings.HasPrefix(dir, "../") {
			t.Errorf("%v: session directory %q is not a clean, slash-separated path under the home directory", d, dir)
		}
	}
	if len(d.IDFields()) == 0 {
		t.Errorf("%v names no member for an entry's id (generated ids go in the last)", d)
	}
	// bs roll writes the note RollNote gives, or with RollTree a marker
	// and a compaction appended last: one of the two, never both.
	note := d.RollNote(transcript.RollNote{
		Text: "note", Now: "2026-01-01T00:00:00Z",
		Evicted: func(int) string { return "{}" },
		Rolled:  func(int) string { return `"` + transcript.RolledField + `":{}` },
		Tag:     `"` + transcript.RolledField + `":{}`,
		Hash:    func(salt string) []byte { return make([]byte, 32) },
		Chain:   func() transcript.RollChain { return transcript.RollChain{Main: true} },
	})
	if (note == nil) == (d.RollTree() == nil) {
		t.Errorf("%v: RollNote gives %d lines and RollTree is %v: bs roll needs exactly one of them", d, len(note), d.RollTree())
	}
}

// MarkMisses lists the object lines of data, in dialect d, of a kind the
// filters find by its marks (Dialect.Marks) that hold none of d's marks
// for the kind: a filter would pass over them unparsed and lose what they
// record (archive the spend records, the gauge a usage, a compaction or a
// model, the web UI a working directory).
func MarkMisses(d transcript.Dialect, data []byte) []string {
	m := d.Marks()
	var misses []string
	for num, t := range objects(data) {
		a := d.Account(t)
		for _, k := range []struct {
			is    bool
			marks []transcript.Mark
			what  string
		}{
			{d.Spends(t), m.Spend, "spends (Marks.Spend)"},
			{a.Role == transcript.UsageReport || a.Window != 0, m.Usage, "records a usage or a window (Marks.Usage)"},
			{a.Role == transcript.CompactionEntry, m.Reset, "is a compaction (Marks.Reset)"},
			{a.Model != "", m.Model, "names a model (Marks.Model)"},
			{d.WorkDir(t) != "", m.WorkDir, "names a working directory (Marks.WorkDir)"},
		} {
			if k.is && !transcript.AnyHeldBy(t, k.marks) {
				misses = append(misses, fmt.Sprintf("line %d %s but holds none of the marks %v: %.200s", num, k.what, k.marks, t.Src))
			}
		}
	}
	return misses
}

// TypeMixes lists the types (Dialect.LineType) that object lines of
// data, in dialect d, give both to messages and to lines that are none
// (the entry view's Message), each once: the web UI labels an entry with
// its type, which must tell a message from the runtime's other lines.
func TypeMixes(d transcript.Dialect, data []byte) []string {
	var mixes []string
	message := func(t *transcript.Tree) string { return strconv.FormatBool(transcript.View(t, d).Message) }
	typeSplits(d, data, message, func(typ string, first, num int, _, _ string) {
		mixes = append(mixes, fmt.Sprintf("lines %d and %d are of type %q, but one is a message and the other not", first, num, typ))
	})
	return mixes
}

// OuterTypeMisses lists the types (Dialect.LineType) of object lines of
// data, in dialect d, that OuterType does not answer as a coarser type,
// each once: a line of one that states no outer type, or two lines of
// one whose outer types differ. bs stats breaks the bytes of other down
// by the outer type, which must keep apart what the line type keeps
// apart, but for what an envelope wraps.
func OuterTypeMisses(d transcript.Dialect, data []byte) []string {
	var misses []string
	none := map[string]bool{}
	for num, t := range objects(data) {
		if typ := d.LineType(t); typ != "" && d.OuterType(t) == "" && !none[typ] {
			none[typ] = true
			misses = append(misses, fmt.Sprintf("line %d is of type %q but states no outer type: %.200s", num, typ, t.Src))
		}
	}
	typeSplits(d, data, d.OuterType, func(typ string, first, num int, a, b string) {
		if typ != "" && !none[typ] {
			misses = append(misses, fmt.Sprintf("lines %d and %d are of type %q, but of outer types %q and %q", first, num, typ, a, b))
		}
	})
	return misses
}

// typeSplits calls split once for each type (Dialect.LineType) of the
// object lines of data, in dialect d, whose lines answer differ, with the
// first line of the type, the first whose answer differs from its, and
// the two answers.
func typeSplits(d transcript.Dialect, data []byte, answer func(*transcript.Tree) string, split func(typ string, first, num int, a, b string)) {
	type seen struct {
		line   int
		answer string
	}
	first := map[string]seen{}
	told := map[string]bool{}
	for num, t := range objects(data) {
		typ, a := d.LineType(t), answer(t)
		f, ok := first[typ]
		switch {
		case !ok:
			first[typ] = seen{num, a}
		case f.answer != a && !told[typ]:
			told[typ] = true
			split(typ, f.line, num, f.answer, a)
		}
	}
}

// SpeakerMisses lists the object lines of data, in dialect d, that are a
// prompt or an answer (Dialect.Turn) holding a text Speaker does not give
// to the user or the assistant: bs stats would count a prompt's text as
// the assistant's, or as neither's.
func SpeakerMisses(d transcript.Dialect, data []byte) []string {
	var misses []string
	for num, t := range objects(data) {
		e := transcript.View(t, d)
		turn := d.Turn(t, &e)
		want := ""
		switch {
		case turn.Prompt:
			want = "user"
		case turn.Assistant:
			want = "assistant"
		default:
			continue
		}
		for _, v := range e.Values {
			if v.Kind != transcript.Text {
				continue
			}
			if got := d.Speaker(t, &e, v.Node); got != want {
				misses = append(misses, fmt.Sprintf("line %d: Speaker gives the text at %s to %q, on a line Turn reads as the %s's", num, v.Pointer, got, want))
				break
			}
		}
	}
	return misses
}

// ToolValueMisses lists the values of tool calls and results of the
// object lines of data, in dialect d, whose tool CallName and
// AnsweredCall do not find as the entry view pairs them: a call's value
// outside every call the entry makes (Entry.Tools), a result's inside one
// the view does not say the line answers, and a line that answers a call
// (Entry.Answers) and holds results none of which AnsweredCall finds in
// it. bs stats files their tokens under the tool they find.
func ToolValueMisses(d transcript.Dialect, data []byte) []string {
	var misses []string
	for num, t := range objects(data) {
		e := transcript.View(t, d)
		found := map[string]bool{}
		results := false
		for _, v := range e.Values {
			switch v.Kind {
			case transcript.ToolCall:
				if name := d.CallName(t, v.Node); !slices.Contains(e.Tools, name) {
					misses = append(misses, fmt.Sprintf("line %d: CallName finds %q for the call's value at %s, not one of the tools %q the line calls", num, name, v.Pointer, e.Tools))
				}
			case transcript.ToolResult:
				results = true
				id := d.AnsweredCall(t, v.Node)
				if id != "" && id != v.Call && !slices.Contains(e.Answers, id) {
					misses = append(misses, fmt.Sprintf("line %d: AnsweredCall finds call %q for the result's value at %s, which the line does not answer (%q)", num, id, v.Pointer, e.Answers))
				}
				found[id] = true
			}
		}
		for _, id := range e.Answers {
			if results && !found[id] {
				misses = append(misses, fmt.Sprintf("line %d answers call %q, but AnsweredCall finds it for none of its results", num, id))
			}
		}
	}
	return misses
}

// EnvelopeMisses lists the values of the object lines of data, in dialect
// d, whose pointer Envelope does not part where the message holding them
// is, each line once: an envelope of all the pointer's tokens, one that
// does not end at an object, or one that ends outside a message (an
// object with a role) that holds the value. Restore names a value by the
// member after the envelope (transcript.KeyName), the message's own:
// content, not message. A runtime's bookkeeping is no message's.
func EnvelopeMisses(d transcript.Dialect, data []byte) []string {
	var misses []string
	for num, t := range objects(data) {
		for _, v := range transcript.View(t, d).Values {
			if v.Kind == transcript.Bookkeeping {
				continue
			}
			if wrong := envelopeMiss(t, d, v); wrong != "" {
				misses = append(misses, fmt.Sprintf("line %d: the value at %s: %s", num, v.Pointer, wrong))
				break
			}
		}
	}
	return misses
}

// envelopeMiss says what is wrong with the envelope d finds of value v
// of line t, "" when nothing is.
func envelopeMiss(t *transcript.Tree, d transcript.Dialect, v transcript.Value) string {
	toks, err := transcript.SplitPointer(v.Pointer)
	if err != nil || len(toks) == 0 {
		return ""
	}
	n := d.Envelope(toks)
	if n < 0 || n >= len(toks) {
		return fmt.Sprintf("Envelope says %d of its %d tokens", n, len(toks))
	}
	// The nodes from the value up to the line, as deep as each token.
	path := make([]int, len(toks)+1)
	for i, a := len(toks), v.Node; i >= 0 && a >= 0; i, a = i-1, t.Nodes[a].Parent {
		path[i] = a
	}
	if t.Nodes[path[n]].Kind != '{' {
		return fmt.Sprintf("Envelope says %d tokens, which lead to no object", n)
	}
	for _, a := range path[n+1 : len(toks)] {
		if t.Nodes[a].Kind == '{' && t.Get(a, "role") >= 0 {
			return fmt.Sprintf("Envelope says %d tokens, which end outside the message (%s) that holds it", n, t.Pointer(a))
		}
	}
	return ""
}

// BlockMisses lists the content blocks of the object lines of data, in
// dialect d, whose type Blocks does not give them, each type once: an
// image the entry view finds in a block of a type Blocks does not name an
// image's (the gauge would count its data as text), and a block whose
// text the view reads as a message's or a result's of a type it does not
// name a text's (trim and a checkpoint would not read it).
func BlockMisses(d transcript.Dialect, data []byte) []string {
	var misses []string
	b := d.Blocks()
	told := map[string]bool{}
	miss := func(num int, typ, what string, v transcript.Value, named []string) {
		if !told[what+typ] {
			told[what+typ] = true
			misses = append(misses, fmt.Sprintf("line %d: the view finds %s in a block of type %q at %s, but Blocks names %q", num, what, typ, v.Pointer, named))
		}
	}
	for num, t := range objects(data) {
		e := transcript.View(t, d)
		for _, v := range e.Values {
			switch {
			case v.Kind == transcript.Image:
				if typ := t.Str(t.Get(v.Node, "type")); !slices.Contains(b.Image, typ) {
					miss(num, typ, "an image", v, b.Image)
				}
			case v.Kind == transcript.Text || v.Kind == transcript.ToolResult:
				if typ, ok := textBlock(t, v.Node); ok && !slices.Contains(b.Text, typ) {
					miss(num, typ, "a text", v, b.Text)
				}
			}
		}
	}
	return misses
}

// textBlock is the type of the block whose text is node: an element of
// an array, with a type, whose member text node is.
func textBlock(t *transcript.Tree, node int) (string, bool) {
	block := t.Nodes[node].Parent
	if block < 0 || t.Nodes[block].Kind != '{' || t.Get(block, "text") != node {
		return "", false
	}
	if list := t.Nodes[block].Parent; list < 0 || t.Nodes[list].Kind != '[' {
		return "", false
	}
	typ := t.Get(block, "type")
	return t.Str(typ), typ >= 0
}

// InsertedUserTexts lists the texts that Converse tells, of the object
// lines of data in dialect d, as the user's, but that Inserted says the
// runtime put there: the two must agree, as a checkpoint takes its topic
// from the one and the web UI a session's title by the other.
func InsertedUserTexts(d transcript.Dialect, data []byte) []string {
	var claims []string
	for num, t := range objects(data) {
		for _, text := range transcript.UserTexts(d, t) {
			if d.Inserted(text) {
				claims = append(claims, fmt.Sprintf("line %d: Converse tells %.80q as the user's, but Inserted says the runtime put it there", num, text))
			}
		}
	}
	return claims
}

// pairing is what a transcript says of its tool calls: the ids of the
// calls made and of the results carried, each in order.
type pairing struct {
	calls, results []string
	tools          int // tool calls, with or without ids
	named          int // results that name their tool
}

// orphans are the results whose call is not in the transcript, and the
// calls with no result in it.
func (p pairing) orphans() (results, calls map[string]bool) {
	results, calls = map[string]bool{}, map[string]bool{}
	for _, r := range p.results {
		if !slices.Contains(p.calls, r) {
			results[r] = true
		}
	}
	for _, c := range p.calls {
		if c != "" && !slices.Contains(p.results, c) {
			calls[c] = true
		}
	}
	return results, calls
}

// view reads data in dialect d: its pairing and its object lines.
func view(t *testing.T, d transcript.Dialect, data []byte) (pairing, [][]byte) {
	t.Helper()
	var p pairing
	var lines [][]byte
	src := transcript.NewSource("sample", bytes.NewReader(data), d, func(*transcript.BadLineError) error { return nil })
	for {
		l, tr, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if tr == nil || tr.Nodes[0].Kind != '{' {
			continue
		}
		lines = append(lines, l.Body)
		e := transcript.View(tr, d)
		p.calls = append(p.calls, e.CallIDs...)
		p.results = append(p.results, e.Answers...)
		p.tools += len(e.Tools)
		if e.ToolName != "" {
			p.named++
		}
	}
	return p, lines
}

// answers checks that d answers the questions the filters ask of a
// sample: detection, entry views, ids where the dialect has them, and
// how tool calls pair with their results. It returns the sample's
// pairing.
func answers(t *testing.T, d transcript.Dialect, s Sample) pairing {
	t.Helper()
	data := s.Data
	if got := transcript.DetectIn(data); got != d {
		t.Errorf("detected as %v, want %v", transcript.NameOf(got), d)
	}
	src := transcript.NewSource("sample", bytes.NewReader(data), nil, func(*transcript.BadLineError) error { return nil })
	if _, _, err := src.Next(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if src.Dialect() != d {
		t.Errorf("a Source detects %v, want %v", src.Dialect(), d)
	}
	p, lines := view(t, d, data)
	messages := 0
	for _, line := range lines {
		var parser transcript.Parser
		tr, err := parser.Parse(line)
		if err != nil {
			t.Fatal(err)
		}
		e := transcript.View(tr, d)
		if e.Message {
			messages++
		}
		if !slices.Contains(d.IDFields(), e.IDField) {
			t.Errorf("an entry's id is in %q, not one of IDFields %v", e.IDField, d.IDFields())
		}
		// A size before compacting is what a compaction records, and
		// a size is never below zero.
		if n, ok := d.CompactedFrom(tr); ok && (!d.IsCompaction(tr) || n < 0) {
			t.Errorf("CompactedFrom says %d tokens of a line that is no compaction or no size (IsCompaction %v): %.200s", n, d.IsCompaction(tr), line)
		}
	}
	numbered(t, d, data, "the sample")
	if messages == 0 && !s.UsageOnly {
		t.Errorf("the dialect finds no message in %d lines: it does not view its entries", len(lines))
	}
	if p.tools > 0 && len(p.calls) == 0 && p.named == 0 {
		t.Errorf("%d tool calls, but neither call ids nor results that name their tool: nothing pairs them", p.tools)
	}
	if len(p.results) > 0 && len(p.calls) == 0 {
		t.Errorf("results answer call ids %v, but no call has an id", p.results[:1])
	}
	return p
}

// kept checks that out parts no tool call from its result that in kept
// together.
func kept(t *testing.T, d transcript.Dialect, in pairing, out []byte) {
	t.Helper()
	p, _ := view(t, d, out)
	inResults, inCalls := in.orphans()
	outResults, outCalls := p.orphans()
	for r := range outResults {
		if !inResults[r] {
			t.Errorf("the result of call %q lost its call", r)
		}
	}
	for c := range outCalls {
		if !inCalls[c] {
			t.Errorf("call %q lost its result", c)
		}
	}
}

// added are the lines of out that are not lines of in: what a filter
// wrote or changed.
func added(in, out []byte) [][]byte {
	had := map[string]bool{}
	for _, l := range bytes.Split(in, []byte("\n")) {
		had[string(l)] = true
	}
	var lines [][]byte
	for _, l := range bytes.Split(out, []byte("\n")) {
		if !had[string(l)] {
			lines = append(lines, l)
		}
	}
	return lines
}

// own checks that every line of out that in does not have (what the
// filter wrote) classifies as d, or says nothing of its dialect.
func own(t *testing.T, d transcript.Dialect, in, out []byte, what string) {
	t.Helper()
	var p transcript.Parser
	for _, l := range added(in, out) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		tr, err := p.Parse(l)
		if err != nil {
			t.Errorf("%s wrote a line that is not JSON: %.200s", what, l)
			continue
		}
		if got := transcript.Classify(tr); got != nil && got != d {
			t.Errorf("%s wrote a line of %v, not %v: %.300s", what, got, d, l)
		}
	}
}

// written checks that the lines of out that are not in in include one of
// the kind the filter writes (field names its member), in the dialect's
// shape.
func written(t *testing.T, d transcript.Dialect, in, out []byte, field, what string) {
	t.Helper()
	var p transcript.Parser
	for _, l := range added(in, out) {
		tr, err := p.Parse(l)
		if err != nil || tr.Nodes[0].Kind != '{' || tr.Get(0, field) < 0 {
			continue
		}
		switch got := transcript.Classify(tr); got {
		case d:
		case nil:
			// A shape the runtime reads but that does not tell its
			// runtime by itself (pi's custom entries): detection goes
			// on to the next line, which the other checks cover.
			t.Logf("%s: %s line says nothing of its dialect: %.200s", what, field, l)
		default:
			t.Errorf("%s: %s line is %v, not in %v's shape: %.300s", what, field, got, d, l)
		}
		return
	}
	t.Errorf("%s wrote no line with %s", what, field)
}

// back checks that restore --all gives in back from out, byte for byte.
func back(t *testing.T, d transcript.Dialect, store blobstore.Store, in, out []byte, what string) {
	t.Helper()
	var got bytes.Buffer
	if _, _, err := restore.Run(context.Background(), "sample", bytes.NewReader(out), &got, restore.Options{All: true, Store: store, Format: d, Now: now}); err != nil {
		t.Fatalf("restore after %s: %v", what, err)
	}
	if !bytes.Equal(got.Bytes(), in) {
		t.Errorf("restore --all after %s does not give the input back: %s", what, firstDiff(in, got.Bytes()))
	}
}

func firstDiff(want, got []byte) string {
	i := 0
	for i < len(want) && i < len(got) && want[i] == got[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d of %d (got %d)\nwant …%.200q\n got …%.200q", i, len(want), len(got), want[lo:], got[lo:])
}

// objects are the lines of data that parse as JSON objects, numbered from
// 1, each with its tree (valid until the next).
func objects(data []byte) iter.Seq2[int, *transcript.Tree] {
	return func(yield func(int, *transcript.Tree) bool) {
		var p transcript.Parser
		for i, l := range bytes.Split(data, []byte("\n")) {
			t, err := p.Parse(l)
			if err != nil || len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
				continue
			}
			if !yield(i+1, t) {
				return
			}
		}
	}
}

// checkKeptNumber: the number KeptNumber points at, on a compaction that
// keeps entries by number, is the one the dialect's pruning reads
// (PruneView.KeptIndex); on every other line there is none. bs archive
// renumbers what it points at, so pointing elsewhere would corrupt a line.
func checkKeptNumber(t *testing.T, d transcript.Dialect, data []byte) {
	for num, tr := range objects(data) {
		pv := transcript.PruneView{KeptIndex: -1}
		d.Prune(tr, &pv)
		k := d.KeptNumber(tr)
		byNumber := d.IsCompaction(tr) && !pv.KeptByID && pv.KeptIndex >= 0
		switch {
		case byNumber && (k < 0 || string(tr.Raw(k)) != strconv.Itoa(pv.KeptIndex)):
			t.Errorf("line %d: a compaction keeping entry %d by number, but KeptNumber points at node %d", num, pv.KeptIndex, k)
		case !byNumber && k >= 0:
			t.Errorf("line %d: KeptNumber points at %s on a line that keeps no entry by number", num, tr.Raw(k))
		}
	}
}

// checkIdentity: the session identity the registry reads from the first
// lines of data (transcript.IdentityOf) is the one the dialect states on
// them, not another dialect's reading of its lines.
func checkIdentity(t *testing.T, d transcript.Dialect, data []byte) {
	own := ""
	for num, tr := range objects(data) {
		if num > transcript.DetectLines {
			break
		}
		if id, how := d.Identity(tr); how != transcript.NotStated && id != "" {
			own = id
			break
		}
	}
	if got := transcript.IdentityOf(bytes.NewReader(data)); got != own {
		t.Errorf("the first lines state session %q, but %v states %q", got, d, own)
	}
	// A line appended to put text in the context (checkpoint inject, the
	// gauge's notice) that states a session states this one: in a file
	// short enough, it is among the lines the identity is read from.
	var tail transcript.Tail
	for _, tr := range objects(data) {
		d.Follow(tr, &tail)
	}
	entry := d.ContextEntry(&tail, transcript.ContextNote{Text: "context", Field: "_bs_test", Meta: "true", Now: time.Unix(0, 0)})
	var p transcript.Parser
	if tr, err := p.Parse(bytes.TrimSuffix(entry, []byte("\n"))); err != nil {
		t.Errorf("ContextEntry wrote a line that is not JSON: %v", err)
	} else if id, how := d.Identity(tr); how != transcript.NotStated && id != own {
		t.Errorf("a line ContextEntry appends states session %q, the file %q", id, own)
	}
}

// sameIdentity checks that a filter's output keeps the session identity
// of its input: a session keeps its identity wherever its file goes.
func sameIdentity(t *testing.T, in, out []byte, what string) {
	t.Helper()
	if a, b := transcript.IdentityOf(bytes.NewReader(in)), transcript.IdentityOf(bytes.NewReader(out)); a != b {
		t.Errorf("%s: the session was %q, its output is %q", what, a, b)
	}
}

func checkExtract(t *testing.T, d transcript.Dialect, s Sample, in pairing) {
	data := s.Data
	store := new(blobstore.Mem)
	opt := extract.Defaults()
	opt.KeepRecent, opt.MinLength, opt.Types = 0, 0, transcript.AllKinds
	opt.KeepAfterRestore, opt.Now, opt.Format, opt.Store = 0, now, d, store
	var out bytes.Buffer
	st, err := extract.Run(context.Background(), "sample", bytes.NewReader(data), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if st.Values == 0 && !s.UsageOnly {
		t.Errorf("extract moved nothing with every kind of every length eligible: the dialect offers no values")
	}
	kept(t, d, in, out.Bytes())
	sameIdentity(t, data, out.Bytes(), "extract")
	back(t, d, store, data, out.Bytes(), "extract")
}

// checkTrim returns the tool results trimmed or cleared.
func checkTrim(t *testing.T, d transcript.Dialect, data []byte, in pairing) int {
	store := new(blobstore.Mem)
	opt := trim.Defaults()
	opt.KeepLastAssistants, opt.MinPrunableChars, opt.SoftMax, opt.SoftHead, opt.SoftTail = 0, 0, 10, 3, 3
	opt.SoftTrimRatio, opt.HardClearRatio, opt.Window = 0.0001, 0.0002, 1000
	opt.Now, opt.Format, opt.Store = now, d, store
	var out bytes.Buffer
	st, err := trim.Run(context.Background(), "sample", bytes.NewReader(data), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	kept(t, d, in, out.Bytes())
	own(t, d, data, out.Bytes(), "trim")
	sameIdentity(t, data, out.Bytes(), "trim")
	back(t, d, store, data, out.Bytes(), "trim")
	return st.Trimmed + st.Cleared
}

// checkArchive returns the turns archived.
func checkArchive(t *testing.T, d transcript.Dialect, data []byte, in pairing) int {
	store := new(blobstore.Mem)
	opt := archive.Defaults()
	opt.TokenThreshold, opt.ToolCallThreshold, opt.KeepRecent = 1, 1, 0
	opt.Now, opt.Format, opt.Store = now, d, store
	var out bytes.Buffer
	st, err := archive.Run(context.Background(), "sample", bytes.NewReader(data), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	kept(t, d, in, out.Bytes())
	own(t, d, data, out.Bytes(), "archive")
	sameIdentity(t, data, out.Bytes(), "archive")
	if st.Archived > 0 {
		written(t, d, data, out.Bytes(), transcript.ArchivedField, "archive")
	} else {
		t.Logf("archive: no turn archived")
	}
	back(t, d, store, data, out.Bytes(), "archive")
	return st.Archived
}

// checkRoll returns the messages evicted.
func checkRoll(t *testing.T, d transcript.Dialect, data []byte, in pairing) int {
	store := new(blobstore.Mem)
	opt := roll.Defaults()
	opt.Window, opt.Trigger, opt.Target, opt.MinKeep = 40, 0.01, 0.005, 1
	opt.Now, opt.Format, opt.Store = now, d, store
	var out bytes.Buffer
	st, err := roll.Run(context.Background(), "sample", bytes.NewReader(data), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if !st.Rolled {
		t.Logf("roll: nothing to evict")
		return 0
	}
	kept(t, d, in, out.Bytes())
	own(t, d, data, out.Bytes(), "roll")
	sameIdentity(t, data, out.Bytes(), "roll")
	checkKeptNumber(t, d, out.Bytes()) // a roll of a transcript that numbers entries keeps them by number
	written(t, d, data, out.Bytes(), transcript.RolledField, "roll")
	compactedFrom(t, d, data, out.Bytes(), st.TokensBefore)
	numbered(t, d, out.Bytes(), "roll")
	back(t, d, store, data, out.Bytes(), "roll")
	return st.Messages
}

// compactedFrom checks that a compaction roll wrote that records the
// size it compacted from reads back, through CompactedFrom, as the size
// the roll started from (tokens), as the web UI's timeline shows it. A
// runtime whose compaction records no size answers false.
func compactedFrom(t *testing.T, d transcript.Dialect, in, out []byte, tokens int) {
	t.Helper()
	var p transcript.Parser
	var sizes []int
	for _, l := range added(in, out) {
		if tr, err := p.Parse(l); err == nil && d.IsCompaction(tr) {
			if n, ok := d.CompactedFrom(tr); ok {
				sizes = append(sizes, n)
			}
		}
	}
	if len(sizes) > 0 && !slices.Contains(sizes, tokens) {
		t.Errorf("roll's compaction reads back as compacted from %v tokens, want %d", sizes, tokens)
	}
}

// numbered checks that a compaction in data that names its first kept
// entry by number stands in a transcript whose dialect numbers its
// entries (NumbersEntries, asked of the first line): else the gauge does
// not number them, and the kept entries are lost to the count.
func numbered(t *testing.T, d transcript.Dialect, data []byte, what string) {
	t.Helper()
	var p transcript.Parser
	byNumber := false
	var first []byte
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		if first == nil {
			first = l
		}
		tr, err := p.Parse(l)
		if err != nil || tr.Nodes[0].Kind != '{' {
			continue
		}
		if a := d.Account(tr); a.Role == transcript.CompactionEntry && a.KeptID == "" && a.KeptIndex > 0 {
			byNumber = true
			break
		}
	}
	if !byNumber {
		return
	}
	tr, err := p.Parse(first)
	if err != nil || !d.NumbersEntries(tr) {
		t.Errorf("%s: a compaction keeps entries from one it names by number, but NumbersEntries of the first line %.200s says they are not numbered", what, first)
	}
}

func checkGauge(t *testing.T, d transcript.Dialect, data []byte) {
	res, err := gauge.Measure("sample", bytes.NewReader(data), nil, gauge.Options{Format: d, Estimator: gauge.CharsPer4{}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens <= 0 {
		t.Errorf("the gauge counts %d tokens: the dialect puts nothing in context", res.Tokens)
	}
}

// checkCheckpoint returns 1 when the checkpoint names the session's
// topic, which it takes from the user's messages.
func checkCheckpoint(t *testing.T, d transcript.Dialect, data []byte) int {
	opt := checkpoint.Defaults()
	opt.Dir = checkpoint.Dir{Root: t.TempDir()}
	opt.SessionKey, opt.Force, opt.NoticeFrom, opt.Now, opt.Format = "sample", true, 0.0001, now, d
	opt.Gauge = gauge.Options{Format: d, Estimator: gauge.CharsPer4{}, Window: 1000}
	var out bytes.Buffer
	res, err := checkpoint.Run("sample", bytes.NewReader(data), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Written == nil {
		t.Fatalf("no checkpoint written under --force: %s", res.Skipped)
	}
	if !bytes.HasPrefix(out.Bytes(), data) {
		t.Fatalf("checkpoint changed the transcript: %s", firstDiff(data, out.Bytes()))
	}
	if res.Injected {
		written(t, d, data, out.Bytes(), checkpoint.InjectedField, "checkpoint")
	} else {
		t.Errorf("checkpoint appended no notice at a gauge of %.2f", res.Gauge.Ratio)
	}
	if res.Written != nil && res.Written.Working.Topic != "" {
		return 1
	}
	return 0
}
