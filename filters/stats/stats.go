// Package stats says where a transcript's tokens go: by kind of content,
// by tool, live versus extracted, the largest entries, and what bs extract
// would free. Its total is the gauge's estimate of the whole transcript
// (gauge.EstimateAll): the same estimator over the same members, broken
// down rather than recomputed.
package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sort"
	"strconv"
	"sync"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// kind is a bucket of the breakdown.
type kind int

const (
	user       kind = iota // text of user messages
	assistant              // text of assistant messages
	thinking               // thinking and reasoning
	toolCall               // tool-call arguments and names
	toolResult             // tool output
	image                  // images (a flat ImageTokens each)
	other                  // everything else: text of other roles, summaries, JSON structure and metadata
	numKinds
)

var kindNames = [numKinds]string{"user", "assistant", "thinking", "tool_call", "tool_result", "image", "other"}

func (k kind) String() string { return kindNames[k] }

// Options configure a run.
type Options struct {
	Estimator gauge.Estimator
	Format    transcript.Dialect
	OnBadLine func(*transcript.BadLineError) error
	// Plan, when set, also measures what bs extract with these options
	// would free, by running its planner over the same bytes.
	Plan *Plan
	Top  int // how many of the largest entries to list (default 10)
	// Store, when set, is read for the extracted values, so that their
	// tokens are counted rather than estimated from their bytes. A blob
	// that cannot be read is told to OnBlobError and estimated.
	Store       blobstore.Store
	OnBlobError func(line int, entryID, blob string, err error)
}

// Plan is bs extract's options, and the rules as written, for the report.
type Plan struct {
	Extract extract.Options
	Rules   []string
}

// Amount is a quantity of removed (or removable) content.
type Amount struct {
	Values int   `json:"values"`
	Bytes  int64 `json:"bytes"`
	Tokens int   `json:"tokens"`
}

// KindStats is one kind's share.
type KindStats struct {
	Tokens    int    `json:"tokens"`    // live: in the transcript now
	Bytes     int64  `json:"bytes"`     // live bytes of its values
	Extracted Amount `json:"extracted"` // what _extracted says moved to the store
}

// Kinds is the breakdown, written as an object keyed by kind name in a
// fixed order.
type Kinds [numKinds]KindStats

// MarshalJSON writes {"user":{...},"assistant":{...},...}.
func (ks Kinds) MarshalJSON() ([]byte, error) { return marshalByKind(ks[:]) }

// marshalByKind writes one value per kind as a JSON object keyed by kind
// name, in the kinds' fixed order (a map would sort them).
func marshalByKind[T any](vs []T) ([]byte, error) {
	b := []byte{'{'}
	for k, v := range vs {
		if k > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, kindNames[k])
		b = append(b, ':')
		enc, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = append(b, enc...)
	}
	return append(b, '}'), nil
}

// Tool is one tool's share.
type Tool struct {
	Name            string `json:"name"`
	Calls           int    `json:"calls"`
	Tokens          int    `json:"tokens"` // call_tokens + result_tokens
	CallTokens      int    `json:"call_tokens"`
	ResultTokens    int    `json:"result_tokens"`
	ExtractedTokens int    `json:"extracted_tokens"`
}

// Entry is one of the largest entries.
type Entry struct {
	Line   int    `json:"line"`
	ID     string `json:"id"` // the dialect's id, or the __id bs extract derives
	Role   string `json:"role,omitempty"`
	Kind   string `json:"kind"` // the kind with most of its tokens
	Tool   string `json:"tool,omitempty"`
	Tokens int    `json:"tokens"`
	Bytes  int    `json:"bytes"`
}

// Free is what bs extract with the given settings would free.
type Free struct {
	Tokens   int       `json:"tokens"`
	Bytes    int64     `json:"bytes"`
	Values   int       `json:"values"`
	Entries  int       `json:"entries"`
	Kinds    FreeKinds `json:"kinds"` // tokens freed and values, bytes moved, by kind
	Settings Settings  `json:"settings"`
	// Context is the gauge of what extract would write: the context the
	// runtime would send after it.
	Context *gauge.Result `json:"context,omitempty"`
}

// FreeKinds writes the per-kind amounts as an object like Kinds.
type FreeKinds [numKinds]Amount

func (fk FreeKinds) MarshalJSON() ([]byte, error) { return marshalByKind(fk[:]) }

// Settings are the extract options the estimate used.
type Settings struct {
	KeepRecent       int      `json:"keep_recent"`
	MinLength        int      `json:"min_length"`
	Types            string   `json:"types"`
	KeepAfterRestore string   `json:"keep_after_restore"`
	Rules            []string `json:"rules"`
}

// Report is the statistics of one transcript.
type Report struct {
	File             string  `json:"file"`
	Dialect          string  `json:"dialect"`
	Estimator        string  `json:"estimator"`
	Lines            int     `json:"lines"`
	BadLines         int     `json:"bad_lines"`
	Bytes            int64   `json:"bytes"`
	Tokens           int     `json:"tokens"` // live; equals gauge.EstimateAll
	Kinds            Kinds   `json:"kinds"`
	Tools            []Tool  `json:"tools"`
	Extracted        Amount  `json:"extracted"`
	ExtractedEntries int     `json:"extracted_entries"`
	Largest          []Entry `json:"largest"`
	// OtherBy breaks the bytes of other down by the type a line states
	// of itself (Dialect.OuterType) and the top-level member that holds
	// them, most first: what fills a file besides the conversation
	// (progress lines' data, tool results' copies, snapshots). Field ""
	// is the keys and punctuation of the lines; type "(not JSON)" the
	// lines that are not.
	OtherBy   []OtherPart `json:"other_by"`
	WouldFree *Free       `json:"would_free,omitempty"`
	// Context is the gauge of the transcript: the context its runtime
	// would send next, as bs gauge reads it.
	Context *gauge.Result `json:"context,omitempty"`

	mismatches int // lines whose parts did not add up to the gauge's estimate (tests check 0)
}

// OtherPart is the bytes of other one line type and member hold.
type OtherPart struct {
	Type  string `json:"type"`
	Field string `json:"field"`
	Bytes int64  `json:"bytes"`
	Lines int    `json:"lines"` // lines whose member it is
}

// otherKey names an OtherPart.
type otherKey struct{ typ, field string }

const (
	maxOtherParts = 256 // distinct line types and members before the rest are lumped
	otherParts    = "(more)"
	notJSON       = "(not JSON)"
)

const (
	maxPending = 4096 // tool-call ids awaiting their result
	maxTools   = 256  // distinct tool names before the rest are lumped
	otherTools = "(other tools)"
	noTool     = "(unknown)"
)

// Run reads a transcript and reports on it. With opt.Plan it runs bs
// extract's planner (extract.Preview) over a copy of the same bytes and
// measures its output the same way: what would be freed is the
// difference, exactly.
func Run(ctx context.Context, name string, r io.Reader, opt Options) (*Report, error) {
	if opt.Estimator == nil {
		opt.Estimator = gauge.CharsPer4{}
	}
	if opt.Top == 0 {
		opt.Top = 10
	}
	if opt.Plan == nil {
		r, gauged := gaugeBeside(name, r, opt)
		rep, err := count(ctx, name, r, opt)
		if res := gauged(); err == nil {
			rep.Context = res
		}
		return rep, err
	}
	r, gaugedLive := gaugeBeside(name, r, opt)
	defer gaugedLive() // however the count ends, the gauge's reader too
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var (
		wg    sync.WaitGroup
		xst   extract.Stats
		xerr  error
		after *Report
		aerr  error
	)
	quiet := opt
	quiet.OnBadLine, quiet.Plan, quiet.Store = nil, nil, nil // told once, by the live count; the output's new blobs are not stored
	wg.Add(2)
	go func() {
		defer wg.Done()
		xo := opt.Plan.Extract
		xo.Format, xo.OnBadLine = opt.Format, nil
		xst, xerr = extract.Preview(ctx, name, inR, outW, xo)
		inR.CloseWithError(xerr)
		outW.CloseWithError(xerr)
	}()
	var gaugedAfter func() *gauge.Result
	go func() {
		defer wg.Done()
		var out io.Reader
		out, gaugedAfter = gaugeBeside(name, outR, quiet)
		after, aerr = count(ctx, name, out, quiet)
		outR.CloseWithError(aerr)
		if aerr != nil {
			gaugedAfter()
		}
	}()
	live, err := count(ctx, name, io.TeeReader(r, inW), opt)
	inW.CloseWithError(err)
	wg.Wait()
	var bad *transcript.BadLineError
	switch {
	case err != nil && (errors.As(err, &bad) || xerr == nil):
		return nil, err
	case xerr != nil:
		return nil, xerr
	case aerr != nil:
		return nil, aerr
	}
	f := &Free{Tokens: live.Tokens - after.Tokens, Bytes: xst.BytesIn - xst.BytesOut, Values: xst.Values, Entries: xst.Entries}
	for k := range numKinds {
		f.Kinds[k] = Amount{
			Values: after.Kinds[k].Extracted.Values - live.Kinds[k].Extracted.Values,
			Bytes:  after.Kinds[k].Extracted.Bytes - live.Kinds[k].Extracted.Bytes,
			Tokens: live.Kinds[k].Tokens - after.Kinds[k].Tokens,
		}
	}
	x := opt.Plan.Extract
	f.Settings = Settings{KeepRecent: x.KeepRecent, MinLength: x.MinLength, Types: x.Types.String(),
		KeepAfterRestore: x.KeepAfterRestore.String(), Rules: opt.Plan.Rules}
	if f.Settings.Rules == nil {
		f.Settings.Rules = []string{}
	}
	live.Context, f.Context = gaugedLive(), gaugedAfter()
	live.WouldFree = f
	return live, nil
}

// gaugeBeside returns a reader that reads r while bs gauge measures the
// same bytes on a goroutine of its own, and a function that waits for the
// reading once r is read to its end (nil if it failed).
func gaugeBeside(name string, r io.Reader, opt Options) (io.Reader, func() *gauge.Result) {
	pr, pw := io.Pipe()
	done := make(chan *gauge.Result, 1)
	go func() {
		res, err := gauge.Measure(name, pr, nil, gauge.Options{Estimator: opt.Estimator, Format: opt.Format})
		pr.CloseWithError(err)
		if err != nil {
			done <- nil
			return
		}
		// Nothing may be left unread: the reader must not block on it.
		io.Copy(io.Discard, pr)
		done <- &res
	}()
	var once sync.Once
	var res *gauge.Result
	return &closingTee{r: io.TeeReader(r, pw), w: pw}, func() *gauge.Result {
		once.Do(func() {
			pw.Close()
			res = <-done
		})
		return res
	}
}

// closingTee is a TeeReader that closes its pipe at the end of input, so
// the reader on the other side sees the end too.
type closingTee struct {
	r io.Reader
	w *io.PipeWriter
}

func (c *closingTee) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	if err != nil {
		c.w.CloseWithError(err)
	}
	return n, err
}

// span is a candidate value of the current line, with its bucket.
type span struct {
	node       int
	start, end int
	kind       kind
	tool       string
	counted    kind // the kind its bytes count under (a placeholder's: the kind it stands for)
}

// placed is where a part goes.
type placed struct {
	kind kind
	tool string
}

// slot gathers a line's parts of one kind and tool.
type slot struct {
	kind   kind
	tool   string
	chars  int // or tokens, with a TextEstimator
	images int
	tokens int
}

type counter struct {
	ctx     context.Context
	opt     Options
	blobs   transcript.Parser // for extracted values read from the store
	rep     *Report
	text    bool // the estimator counts text
	pending map[string]string
	tools   map[string]*Tool
	other   map[otherKey]*OtherPart
	spans   []span
	slots   []slot
	ext     map[int]placed // nodes standing where _extracted values were
}

// count measures one stream.
func count(ctx context.Context, name string, r io.Reader, opt Options) (*Report, error) {
	c := &counter{ctx: ctx, opt: opt, rep: &Report{File: name, Estimator: opt.Estimator.Name(), Largest: []Entry{}},
		pending: map[string]string{}, tools: map[string]*Tool{}}
	_, c.text = opt.Estimator.(gauge.TextEstimator)
	onBad := func(e *transcript.BadLineError) error {
		c.rep.BadLines++
		if opt.OnBadLine != nil {
			return opt.OnBadLine(e)
		}
		return nil
	}
	src := transcript.NewSource(name, r, opt.Format, onBad)
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		line, t, err := src.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		c.rep.Lines++
		c.rep.Bytes += int64(line.Len())
		if t == nil {
			c.rep.Kinds[other].Bytes += int64(line.Len())
			if len(bytes.TrimSpace(line.Body)) > 0 {
				c.otherBytes(otherKey{notJSON, ""}, int64(line.Len()))
			}
			continue
		}
		c.line(line, t, src.Dialect())
	}
	c.rep.Dialect = src.Dialect().String()
	c.rep.Tools = make([]Tool, 0, len(c.tools))
	for _, t := range c.tools {
		t.Tokens = t.CallTokens + t.ResultTokens
		c.rep.Tools = append(c.rep.Tools, *t)
	}
	sort.Slice(c.rep.Tools, func(i, j int) bool {
		a, b := c.rep.Tools[i], c.rep.Tools[j]
		if a.Tokens+a.ExtractedTokens != b.Tokens+b.ExtractedTokens {
			return a.Tokens+a.ExtractedTokens > b.Tokens+b.ExtractedTokens
		}
		return a.Name < b.Name
	})
	c.rep.OtherBy = make([]OtherPart, 0, len(c.other))
	for k, p := range c.other {
		if p.Bytes > 0 {
			c.rep.OtherBy = append(c.rep.OtherBy, OtherPart{Type: k.typ, Field: k.field, Bytes: p.Bytes, Lines: p.Lines})
		}
	}
	sort.Slice(c.rep.OtherBy, func(i, j int) bool {
		a, b := c.rep.OtherBy[i], c.rep.OtherBy[j]
		if a.Bytes != b.Bytes {
			return a.Bytes > b.Bytes
		}
		return a.Type+"."+a.Field < b.Type+"."+b.Field
	})
	return c.rep, nil
}

// otherOf breaks the line's bytes of other down by the type it states of
// itself (Dialect.OuterType) and its top-level members: each member's
// bytes but its values counted under another kind, and the rest of the
// line (keys, punctuation) under "".
func (c *counter) otherOf(line transcript.Line, t *transcript.Tree, d transcript.Dialect) {
	typ := ""
	if t.Nodes[0].Kind == '{' {
		typ = d.OuterType(t)
	}
	if typ == "" {
		typ = "(no type)"
	}
	rest := int64(line.Len())
	if t.Nodes[0].Kind == '{' {
		t.Children(0, func(m, _ int) {
			start, end := t.Nodes[m].Start, t.Nodes[m].End
			n := int64(end - start)
			rest -= n
			for _, sp := range c.spans {
				if sp.counted != other && sp.start >= start && sp.end <= end {
					n -= int64(sp.end - sp.start)
				}
			}
			c.otherBytes(otherKey{typ, t.Key(m)}, n)
		})
	} else {
		for _, sp := range c.spans {
			if sp.counted != other {
				rest -= int64(sp.end - sp.start)
			}
		}
	}
	c.otherBytes(otherKey{typ, ""}, rest)
}

// otherBytes adds n bytes of other under k.
func (c *counter) otherBytes(k otherKey, n int64) {
	if n <= 0 {
		return
	}
	if c.other == nil {
		c.other = map[otherKey]*OtherPart{}
	}
	p, ok := c.other[k]
	if !ok {
		if len(c.other) >= maxOtherParts {
			k = otherKey{otherParts, ""}
			if p, ok = c.other[k]; !ok {
				p = &OtherPart{}
				c.other[k] = p
			}
		} else {
			p = &OtherPart{}
			c.other[k] = p
		}
	}
	p.Bytes += n
	p.Lines++
}

// line accounts for one parsed line.
func (c *counter) line(line transcript.Line, t *transcript.Tree, d transcript.Dialect) {
	e := transcript.View(t, d)
	c.spans = c.spans[:0]
	for _, v := range e.Values {
		n := t.Nodes[v.Node]
		sp := span{node: v.Node, start: n.Start, end: n.End, kind: c.kindOf(t, d, &e, v)}
		sp.tool = c.toolOf(t, d, &e, v.Node, sp.kind)
		c.spans = append(c.spans, sp)
	}
	sort.Slice(c.spans, func(i, j int) bool { return c.spans[i].start < c.spans[j].start })
	for _, name := range e.Tools {
		c.tool(name).Calls++
	}
	c.register(&e)
	clear(c.ext)
	if e.Extracted >= 0 && t.Nodes[e.Extracted].Kind == '{' {
		c.extracted(line.Num, t, &e)
	}
	// Bytes: each value's under its kind (a placeholder's under the kind
	// it stands for), the rest of the line under other.
	var valueBytes int64
	for i := range c.spans {
		sp := &c.spans[i]
		k := sp.kind
		if pl, ok := c.ext[sp.node]; ok {
			k = pl.kind
		} else if pl, ok := c.ext[t.Nodes[sp.node].Parent]; ok {
			k = pl.kind
		}
		sp.counted = k
		c.rep.Kinds[k].Bytes += int64(sp.end - sp.start)
		valueBytes += int64(sp.end - sp.start)
	}
	c.rep.Kinds[other].Bytes += int64(line.Len()) - valueBytes
	c.otherOf(line, t, d)

	// The line's tokens, part by part, as the gauge counts them.
	c.slots = c.slots[:0]
	tokens := gauge.Contents(t, d, c.opt.Estimator, func(p gauge.Part) {
		k, tool := c.place(t, p)
		s := c.slot(k, tool)
		switch {
		case p.Image:
			s.images++
		case c.text:
			s.chars += p.Tokens
		default:
			s.chars += p.Chars
		}
	})
	// Characters become tokens once per line in the gauge; rounding the
	// running sum gives each slot its share and the shares add up exactly.
	cum, prev := 0, 0
	var byKind [numKinds]int
	bigTool, bigToolTokens := "", 0 // the tool of the line's largest call or result
	for i := range c.slots {
		s := &c.slots[i]
		if c.text {
			s.tokens = s.chars
		} else {
			cum += s.chars
			now := c.opt.Estimator.Tokens(cum)
			s.tokens = now - prev
			prev = now
		}
		s.tokens += s.images * gauge.ImageTokens
		byKind[s.kind] += s.tokens
		c.rep.Kinds[s.kind].Tokens += s.tokens
		switch s.kind {
		case toolCall:
			c.tool(s.tool).CallTokens += s.tokens
		case toolResult:
			c.tool(s.tool).ResultTokens += s.tokens
		}
		if (s.kind == toolCall || s.kind == toolResult) && s.tool != noTool && s.tool != "" && s.tokens > bigToolTokens {
			bigTool, bigToolTokens = s.tool, s.tokens
		}
	}
	sum := 0
	for _, n := range byKind {
		sum += n
	}
	if sum != tokens { // cannot happen while parts add up; never lose tokens
		c.rep.Kinds[other].Tokens += tokens - sum
		byKind[other] += tokens - sum
		c.rep.mismatches++
	}
	c.rep.Tokens += tokens
	if tokens > 0 {
		c.largest(line, &e, tokens, byKind, bigTool)
	}
}

func (c *counter) slot(k kind, tool string) *slot {
	if k != toolCall && k != toolResult {
		tool = ""
	}
	for i := range c.slots {
		if c.slots[i].kind == k && c.slots[i].tool == tool {
			return &c.slots[i]
		}
	}
	c.slots = append(c.slots, slot{kind: k, tool: tool})
	return &c.slots[len(c.slots)-1]
}

// place says which kind (and tool) a counted part belongs to: the value
// that holds it, else the first value inside its nearest ancestor that
// holds any (a tool call's name goes with its arguments), else other.
func (c *counter) place(t *transcript.Tree, p gauge.Part) (kind, string) {
	if p.Image {
		return image, ""
	}
	n := p.Node
	if pl, ok := c.ext[n]; ok {
		return pl.kind, pl.tool
	}
	if par := t.Nodes[n].Parent; par >= 0 {
		if pl, ok := c.ext[par]; ok {
			return pl.kind, pl.tool
		}
	}
	if sp := c.within(t.Nodes[n].Start, t.Nodes[n].End); sp != nil {
		return sp.kind, sp.tool
	}
	for a := t.Nodes[n].Parent; a >= 0; a = t.Nodes[a].Parent {
		if sp := c.inside(t.Nodes[a].Start, t.Nodes[a].End); sp != nil {
			return sp.kind, sp.tool
		}
	}
	return other, ""
}

// within returns the value whose span holds [start, end), or nil.
func (c *counter) within(start, end int) *span {
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].start > start }) - 1
	if i >= 0 && c.spans[i].end >= end {
		return &c.spans[i]
	}
	return nil
}

// inside returns the first value inside [start, end), or nil.
func (c *counter) inside(start, end int) *span {
	i := sort.Search(len(c.spans), func(i int) bool { return c.spans[i].start >= start })
	if i < len(c.spans) && c.spans[i].end <= end {
		return &c.spans[i]
	}
	return nil
}

// kindOf maps a candidate value to its bucket: text by who says it.
func (c *counter) kindOf(t *transcript.Tree, d transcript.Dialect, e *transcript.Entry, v transcript.Value) kind {
	switch v.Kind {
	case transcript.ToolCall:
		return toolCall
	case transcript.ToolResult:
		return toolResult
	case transcript.Thinking:
		return thinking
	case transcript.Image:
		return image
	case transcript.Bookkeeping:
		return other // never in the context, whatever role its subagent message has
	}
	switch d.Speaker(t, e, v.Node) {
	case "user":
		return user
	case "assistant":
		return assistant
	}
	return other
}

// toolOf names the tool a tool call or result belongs to: the call's, or
// the one the result's line names, else that of the call it answers, made
// on an earlier line.
func (c *counter) toolOf(t *transcript.Tree, d transcript.Dialect, e *transcript.Entry, node int, k kind) string {
	switch k {
	case toolCall:
		if name := d.CallName(t, node); name != "" {
			return name
		}
		if len(e.Tools) > 0 && e.Tools[0] != "" {
			return e.Tools[0]
		}
	case toolResult:
		if e.ToolName != "" {
			return e.ToolName
		}
		if name, ok := c.pending[d.AnsweredCall(t, node)]; ok {
			return name
		}
	default:
		return ""
	}
	return noTool
}

// register remembers the ids of the tool calls a line makes, so that
// results that name only the id find the tool.
func (c *counter) register(e *transcript.Entry) {
	for i, id := range e.CallIDs {
		if id == "" || e.Tools[i] == "" {
			continue
		}
		if len(c.pending) >= maxPending {
			for k := range c.pending {
				delete(c.pending, k)
				break
			}
		}
		c.pending[id] = e.Tools[i]
	}
}

func (c *counter) tool(name string) *Tool {
	if name == "" {
		name = noTool
	}
	if t, ok := c.tools[name]; ok {
		return t
	}
	if len(c.tools) >= maxTools {
		name = otherTools
		if t, ok := c.tools[name]; ok {
			return t
		}
	}
	t := &Tool{Name: name}
	c.tools[name] = t
	return t
}

// extracted accounts for what the entry's _extracted says moved away, and
// notes the nodes holding placeholders so their few tokens count under the
// kind they stand for.
func (c *counter) extracted(num int, t *transcript.Tree, e *transcript.Entry) {
	if c.ext == nil {
		c.ext = map[int]placed{}
	}
	found := false
	t.Children(e.Extracted, func(m, _ int) {
		if t.Nodes[m].Kind != '{' {
			return
		}
		found = true
		bytes := 0
		if b := t.Get(m, "bytes"); b >= 0 && t.Nodes[b].Kind == '0' {
			bytes, _ = strconv.Atoi(string(t.Raw(b)))
		}
		k, tool := other, ""
		if n, err := t.Resolve(t.Key(m)); err == nil && n >= 0 {
			if t.Nodes[n].Kind == '{' {
				// A thinking or image block became a text block holding
				// the placeholder: only assistants think.
				k = image
				if e.Role == "assistant" {
					k = thinking
				}
			} else {
				k, tool = c.place(t, gauge.Part{Node: n})
			}
			c.ext[n] = placed{k, tool}
		}
		tokens, ok := c.exact(num, t, e, m)
		switch {
		case ok:
		case k == image:
			tokens = gauge.ImageTokens
		default:
			tokens = c.opt.Estimator.Tokens(bytes)
		}
		a := &c.rep.Kinds[k].Extracted
		a.Values++
		a.Bytes += int64(bytes)
		a.Tokens += tokens
		c.rep.Extracted.Values++
		c.rep.Extracted.Bytes += int64(bytes)
		c.rep.Extracted.Tokens += tokens
		if k == toolCall || k == toolResult {
			c.tool(tool).ExtractedTokens += tokens
		}
	})
	if found {
		c.rep.ExtractedEntries++
	}
}

// largest keeps the top entries, most tokens first, earlier lines first
// among equals.
func (c *counter) largest(line transcript.Line, e *transcript.Entry, tokens int, byKind [numKinds]int, bigTool string) {
	top := c.rep.Largest
	if len(top) == c.opt.Top && tokens <= top[len(top)-1].Tokens {
		return
	}
	id := e.ID
	if id == "" {
		id = transcript.DeriveIDOf(e.Tree)
	}
	best := other
	for k := range numKinds {
		if byKind[k] > byKind[best] {
			best = k
		}
	}
	// The tool of its largest call or result (a result whose line names
	// only the call's id is found by it), else the one the entry names.
	tool := bigTool
	if tool == "" {
		tool = e.ToolName
	}
	if tool == "" && len(e.Tools) > 0 {
		tool = e.Tools[0]
	}
	en := Entry{Line: line.Num, ID: id, Role: e.Role, Kind: best.String(), Tool: tool, Tokens: tokens, Bytes: line.Len()}
	i := sort.Search(len(top), func(i int) bool { return top[i].Tokens < tokens })
	if len(top) < c.opt.Top {
		top = append(top, Entry{})
	}
	copy(top[i+1:], top[i:])
	top[i] = en
	c.rep.Largest = top
}

// exact counts an extracted value's tokens from its blob, when there is a
// store to read.
func (c *counter) exact(num int, t *transcript.Tree, e *transcript.Entry, m int) (int, bool) {
	if c.opt.Store == nil {
		return 0, false
	}
	name := t.Str(t.Get(m, "blob"))
	fail := func(err error) (int, bool) {
		if c.opt.OnBlobError != nil {
			c.opt.OnBlobError(num, e.ID, name, err)
		}
		return 0, false
	}
	d, err := blobstore.ParseDigest(name)
	if err != nil {
		return fail(err)
	}
	raw, err := c.opt.Store.Get(c.ctx, d)
	if err != nil {
		return fail(err)
	}
	v, err := c.blobs.Parse(raw)
	if err != nil {
		return fail(err)
	}
	return gauge.ValueTokens(v, 0, c.opt.Estimator), true
}
