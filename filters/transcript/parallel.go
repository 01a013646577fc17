package transcript

import (
	"bytes"
	"io"
	"runtime"
	"unsafe"

	"github.com/bstools/bs/filters/internal/par"
)

// Parsing is most of what a filter spends on a line it leaves alone, and
// what a line parses to depends on that line alone. So a Source made
// Parallel reads lines in batches on one goroutine, parses each batch on
// one of several workers, and hands the lines and trees out in input
// order, while its caller works on the lines before them.

// batchBytes is about how many bytes of lines one batch holds (a longer
// line makes a batch of its own); a variable so that tests can make small
// batches.
var batchBytes = 256 << 10

// batchLines is the most lines one batch holds. Each line costs a batch
// some hundred bytes besides its own (its place, its tree, its error),
// which a batch keeps for reuse: without a cap, 256 KiB of short lines
// would make that tens of megabytes.
const batchLines = 4096

// parseBudget bounds the bytes of lines read ahead of the caller, and of
// the trees parsed from them (charged as each batch is parsed, which holds
// the reader back until the caller moves on). A single line longer than
// that is still read, alone, so memory stays bounded by a few times the
// longest line (and its tree) plus a constant.
const parseBudget = 4 << 20

// nodeSize is what a parsed value costs in a tree.
const nodeSize = int(unsafe.Sizeof(Node{}))

// lineBatch is a run of consecutive lines and what parsing made of them.
type lineBatch struct {
	lines []Line
	// arena holds the lines' bytes one after the other, each with its
	// line feed, and ends where each line's bytes end in it: a line's
	// Body is a view of it. One copy into memory the batch reuses costs
	// less than an allocation per line, which the garbage collector
	// would have to clear and reclaim.
	arena   []byte
	ends    []int
	trees   []Tree  // line i's tree; no nodes for a blank or bad line
	errs    []error // why line i is not valid JSON, if it is not
	notes   []any   // what Annotate's function made of line i
	skipped []bool  // line i was left unparsed: ParseIf's function said no
	bytes   int     // of the lines
	nodes   int     // bytes of the trees' nodes, once parsed
}

// add appends a line, whose Body may be a view that the next read
// overwrites, copying its bytes into the arena. seal makes the bodies
// views of the arena once it has stopped growing. A line in memory of its
// own (owned: Reader.owned) stays there: a huge line is not copied.
func (b *lineBatch) add(l Line, owned bool) {
	if owned {
		b.ends = append(b.ends, -1)
		b.bytes += l.Len()
		b.lines = append(b.lines, l)
		return
	}
	b.arena = append(b.arena, l.Body...)
	if l.Newline {
		b.arena = append(b.arena, '\n')
	}
	b.ends = append(b.ends, len(b.arena))
	b.bytes += l.Len()
	l.Body = nil
	b.lines = append(b.lines, l)
}

// seal points every line's Body into the arena. A Body's capacity takes
// in its line feed and no more, so that Line.Bytes need not copy and an
// append to a Body cannot overwrite the next line.
func (b *lineBatch) seal() {
	start := 0
	for i := range b.lines {
		if b.ends[i] < 0 {
			continue // in memory of its own (add)
		}
		end, n := b.ends[i], b.ends[i]-start
		if b.lines[i].Newline {
			n--
		}
		b.lines[i].Body = b.arena[start : start+n : end]
		start = end
	}
}

// release drops the batch's references to its lines, so that a batch
// waiting to be reused holds no line alive.
func (b *lineBatch) release() {
	clear(b.lines)
	clear(b.notes)
	for i := range b.trees {
		b.trees[i] = Tree{Nodes: reusable(b.trees[i].Nodes)}
	}
	b.lines, b.ends = b.lines[:0], b.ends[:0]
	b.arena = b.arena[:0]
	if cap(b.arena) > maxKeptArena {
		b.arena = nil // a huge line's bytes are not held on to
	}
}

// moveTo makes t a tree of src, a copy of the bytes it was parsed from:
// its spans are offsets, but its member names are views of those bytes.
func (t *Tree) moveTo(src []byte) {
	t.Src = src
	for i := range t.Nodes {
		if n := &t.Nodes[i]; n.Name != nil {
			n.Name = src[n.KeyStart : n.KeyStart+len(n.Name)]
		}
	}
}

// maxKeptArena is the most bytes a reused batch keeps room for: a few
// batches' worth of lines, so that the reuse does not hold on to a long
// line's memory for the rest of the run.
const maxKeptArena = 1 << 20

// maxKeptNodes is the most nodes a reused tree keeps room for: a huge
// line's tree is not held on to for the lines after it.
const maxKeptNodes = 64 << 10

// reusable returns nodes emptied for reuse: cleared, since their names
// point into the line they came from, or nil when they are many.
func reusable(nodes []Node) []Node {
	if cap(nodes) > maxKeptNodes {
		return nil
	}
	clear(nodes)
	return nodes[:0]
}

// parse parses every line of the batch that parseIf, if not nil, accepts
// with p, and runs annotate, if not nil, on each tree.
func (b *lineBatch) parse(p *Parser, parseIf func([]byte) bool, annotate func(*Tree, Dialect) any, d Dialect) {
	n := len(b.lines)
	b.trees = grow(b.trees, n)
	b.errs = grow(b.errs, n)
	b.notes = grow(b.notes, n)
	b.skipped = grow(b.skipped, n)
	b.nodes = 0
	defer p.Forget() // the parser would otherwise keep the last line alive
	for i, l := range b.lines {
		b.errs[i], b.notes[i] = nil, nil
		b.trees[i].Nodes = b.trees[i].Nodes[:0]
		b.skipped[i] = parseIf != nil && !parseIf(l.Body)
		if b.skipped[i] || len(bytes.TrimSpace(l.Body)) == 0 {
			continue
		}
		t, err := p.Parse(l.Body)
		if err != nil {
			b.errs[i] = err
			continue
		}
		// The parser reuses its nodes for the next line: give it the
		// batch's spare array for that and keep the one just filled
		// (no copy, and no second tree of a long line in memory). The
		// batch's arrays are reused in turn once the caller has moved
		// past the batch.
		b.trees[i].Src = t.Src
		b.trees[i].Nodes, p.tree.Nodes = t.Nodes, b.trees[i].Nodes[:0]
		b.nodes += len(t.Nodes) * nodeSize
		if annotate != nil {
			b.notes[i] = annotate(&b.trees[i], d)
		}
	}
}

// grow returns s with length n, reusing its array when it can.
func grow[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return append(s[:cap(s)], make([]T, n-cap(s))...)
}

// pipeline is the machinery behind a Parallel Source: a stream of batches
// the reader sends, the workers parse and Next takes in order.
type pipeline struct {
	stream *par.Stream[*lineBatch]
	free   chan *lineBatch // batches the caller is done with
	slots  chan struct{}   // one per batch in existence: few trees at once
	err    error           // the read error that ended the input; set before the stream closes

	cur *lineBatch // the batch the caller is in
	i   int        // the next line of cur to hand out
}

// Parallel makes Next parse lines on up to workers goroutines (no more
// than there are cores, and at most 4) ahead of its caller, from the first
// call after the dialect is known. Lines and trees come out exactly as
// they would otherwise. Close stops the goroutines when the caller stops
// before the end of the input. It must be called before the first call to
// Next; fewer than 2 workers leave the Source as it is.
func (s *Source) Parallel(workers int) {
	// No more parsers than cores. Each may hold a tree, and a tree of many
	// small values is many times its line: beyond a few the caller, which
	// takes the lines in order, is the bottleneck anyway.
	s.workers = min(workers, runtime.GOMAXPROCS(0), maxParsers)
}

// maxParsers caps the workers of a Parallel Source.
const maxParsers = 4

// Close stops the goroutines of a Parallel Source. It does not wait for
// them: the reader may be blocked on a live pipe (tail -f | bs extract),
// and a run that stopped on an error must not hang until the next line
// arrives; it ends when its read returns. Close is safe to call more than
// once and on any Source.
func (s *Source) Close() {
	if s.pipe == nil {
		return
	}
	s.pipe.stream.Stop()
}

// startPipeline starts the reader and the parsers.
func (s *Source) startPipeline() {
	annotate, parseIf, d, keeps := s.annotate, s.parseIf, s.dialect, s.keeps
	p := &pipeline{
		// The trees are memory too: a batch's count against the budget
		// until the caller moves past it.
		stream: par.NewStream(s.workers, s.workers+1, parseBudget, func() func(*lineBatch) int {
			var parser Parser
			return func(b *lineBatch) int {
				b.parse(&parser, parseIf, annotate, d)
				return b.nodes
			}
		}),
		free:  make(chan *lineBatch, s.workers+1),
		slots: make(chan struct{}, s.workers+1),
	}
	s.pipe = p
	limit := batchBytes // read once: the reader may outlive Close
	go func() {
		defer p.stream.Close()
		for eof := false; !eof; {
			select {
			case p.slots <- struct{}{}: // given back as the caller moves past a batch
			case <-p.stream.Stopped():
				return
			}
			var b *lineBatch
			select {
			case b = <-p.free:
				b.bytes = 0
			default:
				b = &lineBatch{}
			}
			for b.bytes < limit && len(b.lines) < batchLines {
				var line Line
				var err error
				if keeps {
					line, err = s.r.next()
				} else {
					line, err = s.r.NextView()
				}
				if err != nil {
					if err != io.EOF {
						p.err = err
					}
					eof = true
					break
				}
				b.add(line, keeps || s.r.owned())
				if !s.r.lineBuffered() {
					// The next line may take waiting for (a live pipe,
					// a line still being written): hand on what there
					// is, so each whole line goes out promptly.
					break
				}
			}
			if len(b.lines) == 0 {
				return
			}
			b.seal()
			if !p.stream.Send(b, b.bytes, true) {
				return
			}
		}
	}()
}

// nextParsed is Next for a Parallel Source; NextView when view is set.
func (s *Source) nextParsed(view bool) (Line, *Tree, error) {
	p := s.pipe
	for p.cur == nil || p.i == len(p.cur.lines) {
		if p.cur != nil {
			p.cur.release()
			<-p.slots
			select {
			case p.free <- p.cur:
			default:
			}
			p.cur = nil
		}
		b, ok := p.stream.Next() // gives the last batch's bytes back to the budget
		if !ok {
			if p.err != nil {
				return Line{}, nil, p.err
			}
			return Line{}, nil, io.EOF
		}
		p.cur, p.i = b, 0
	}
	b, i := p.cur, p.i
	p.i++
	line := b.lines[i]
	if !view && b.ends[i] >= 0 {
		// The caller may keep the line, and what it takes from the
		// tree's spans: its own copy, line feed included, as
		// Reader.next makes it, which the tree is then of. A line in
		// memory of its own is the caller's already.
		body := bytes.Clone(line.Bytes())
		line.Body = body[:len(line.Body)]
		if len(b.trees[i].Nodes) > 0 {
			b.trees[i].moveTo(line.Body)
		}
	}
	s.skipped = b.skipped[i]
	switch {
	case len(b.trees[i].Nodes) > 0: // a parsed line has at least its root
		s.note = b.notes[i]
		return line, &b.trees[i], nil
	case b.errs[i] != nil:
		if err := s.onBad(&BadLineError{Name: s.Name, Line: line.Num, Err: b.errs[i]}); err != nil {
			return Line{}, nil, err
		}
	}
	return line, nil, nil
}
