package trim

import (
	"bytes"
	"context"
	"io"
	"runtime"
	"sync/atomic"

	"github.com/bstools/bs/filters/internal/par"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/hugemem"
	"github.com/bstools/bs/internal/spool"
)

// The first pass parses every line, by far the costliest step of a run.
// What a line is to the pruner depends on that line alone (classify), so
// the spool is read in batches of whole lines that workers parse and
// classify on every core, and the planner takes their facts in input
// order. Batches in flight are bounded in bytes, so memory stays bounded by
// the longest line plus a constant.

// batchSize is the bytes read per batch (more when a line is longer), a
// variable so that tests can make lines straddle batches.
var batchSize = 512 << 10

// scanBudget bounds the bytes of batches read but not yet planned.
const scanBudget = 16 << 20

// lineState is what parsing made of a line.
type lineState uint8

const (
	blankLine  lineState = iota // only white space: no tree, no warning
	badLine                     // not one valid JSON value
	parsedLine                  // parsed and classified
)

// lineInfo is what a worker reports of one line.
type lineInfo struct {
	n     int // bytes, with the line feed
	state lineState
	err   error // why a bad line is bad
	f     facts
}

// batch is a run of whole lines of the input.
type batch struct {
	buf  []byte
	info []lineInfo
}

// classifyBatch parses and classifies every line of b in dialect d.
func (b *batch) classify(p *transcript.Parser, d transcript.Dialect, estimates bool) {
	defer p.Forget() // the parser would otherwise keep the last line alive
	rest := b.buf
	for len(rest) > 0 {
		n := len(rest)
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			n = i + 1
		}
		body := rest[:n]
		rest = rest[n:]
		if body[len(body)-1] == '\n' {
			body = body[:len(body)-1]
		}
		b.info = append(b.info, lineInfo{n: n})
		li := &b.info[len(b.info)-1]
		if len(bytes.TrimSpace(body)) == 0 {
			continue // blankLine
		}
		if t, err := p.Parse(body); err != nil {
			li.state, li.err = badLine, err
		} else {
			li.state, li.f = parsedLine, classify(t, d, estimates)
		}
	}
}

// detectDialect tells the dialect from the first lines as
// transcript.Source does: the first line whose dialect is known, else
// the fallback dialect.
func detectDialect(sp *spool.Spool) (transcript.Dialect, error) {
	r := transcript.NewReader(sp.Section(0, sp.Size()))
	var p transcript.Parser
	for range transcript.DetectLines {
		l, err := r.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if t, err := p.Parse(l.Body); err == nil {
			if d := transcript.Classify(t); d != nil {
				return d, nil
			}
		}
	}
	return transcript.Fallback(), nil
}

// classifyLines calls each for every line of the spool, in order, with
// what parsing and classifying it in dialect d found. An error from each
// stops the run and is returned.
//
// While measuring reads true the workers estimate each line for the
// ledger (gauge.Ledger.Measuring); the workers run ahead of each, so a
// line each is given while it is true was estimated.
func classifyLines(ctx context.Context, sp *spool.Spool, d transcript.Dialect, measuring *atomic.Bool, each func(*lineInfo) error) error {
	batches := par.NewStream(runtime.GOMAXPROCS(0), 64, scanBudget, func() func(*batch) int {
		var p transcript.Parser
		return func(b *batch) int {
			b.classify(&p, d, measuring.Load())
			return 0
		}
	})
	free := make(chan []byte, 8)
	var readErr error
	read := make(chan struct{})
	go func() {
		defer close(read)
		defer batches.Close()
		readErr = readBatches(sp, free, func(buf []byte) bool {
			return batches.Send(&batch{buf: buf}, len(buf), true)
		})
	}()
	var err error
	var last *batch // handed back for reuse once Next has moved past it
	for b, ok := batches.Next(); ok; b, ok = batches.Next() {
		if last != nil && cap(last.buf) == batchSize {
			select {
			case free <- last.buf[:0]:
			default:
			}
		}
		last = b
		if err != nil {
			continue // drained, so that the reader stops
		}
		if err = ctx.Err(); err == nil {
			for i := range b.info {
				if err = each(&b.info[i]); err != nil {
					break
				}
			}
		}
		if err != nil {
			batches.Stop()
		}
		if cap(b.buf) != batchSize {
			// Grown for a long line, so not used again: let go of it now,
			// for the reader may be waiting for a huge one to go before
			// it reads the next (hugemem.Make).
			b.buf, last = nil, nil
		}
	}
	<-read
	if err == nil {
		err = readErr
	}
	return err
}

// readBatches reads the spool from its start in batches of whole lines
// (the last may lack its line feed) and hands each to emit, which returns
// false to stop. Buffers come from free when it has one.
func readBatches(sp *spool.Spool, free chan []byte, emit func([]byte) bool) error {
	var carry []byte // the start of a line the last batch did not hold
	off := int64(0)
	for off < sp.Size() || len(carry) > 0 {
		var buf []byte
		select {
		case buf = <-free:
		default:
			buf = make([]byte, 0, batchSize)
		}
		buf = append(buf, carry...)
		carry = carry[:0]
		for {
			if len(buf) == cap(buf) {
				// A line longer than the buffer: make room for exactly
				// the rest of it (doubling would peak at three times a
				// huge line).
				end, err := lineEnd(sp, off)
				if err != nil {
					return err
				}
				grown := hugemem.Make(len(buf), len(buf)+int(max(end-off, 1)))
				copy(grown, buf)
				buf = grown
			}
			want := int(min(int64(cap(buf)-len(buf)), sp.Size()-off))
			n, err := sp.ReadAt(buf[len(buf):len(buf)+want], off)
			buf = buf[:len(buf)+n]
			off += int64(n)
			if off >= sp.Size() || err == io.EOF {
				// The end, or the file shrank: what was read is all
				// there is, as for a reader of the section.
				if len(buf) > 0 {
					emit(buf)
				}
				return nil
			}
			if err != nil {
				return err
			}
			if len(buf) < cap(buf) {
				continue
			}
			if i := bytes.LastIndexByte(buf, '\n'); i >= 0 {
				carry = append(carry, buf[i+1:]...)
				if !emit(buf[:i+1]) {
					return nil
				}
				break
			}
		}
	}
	return nil
}

// lineEnd returns the offset just past the first line feed at or after off
// in the spool, or its size when no line feed follows.
func lineEnd(sp *spool.Spool, off int64) (int64, error) {
	var scratch [64 << 10]byte
	for off < sp.Size() {
		n, err := sp.ReadAt(scratch[:min(int64(len(scratch)), sp.Size()-off)], off)
		if i := bytes.IndexByte(scratch[:n], '\n'); i >= 0 {
			return off + int64(i) + 1, nil
		}
		off += int64(n)
		if err == io.EOF {
			break // the file shrank: what was read is all there is
		}
		if err != nil {
			return 0, err
		}
	}
	return off, nil
}
