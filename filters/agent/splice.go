package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/transcript"
)

// A restore touches few lines of a session: the entry, and the restore
// calls to redact. splice finds those lines by their bytes without parsing
// the rest, runs them through restore (the same code as bs restore), and
// writes the file back with every other byte copied as it is, so a restore
// in a 100 MiB session costs a scan and a copy, not a parse.

// scanChunk is how much of the file the scan reads at a time (a variable
// for tests).
var scanChunk int64 = 4 << 20

type splice struct {
	res    *restore.Result
	err    error                      // restore's own failure (not found, blob missing)
	values map[string]json.RawMessage // the restored values, by key
}

// span is a line of the file: [start, end) without its line feed.
type span struct{ start, end int64 }

// run edits src (size bytes) into w as restore with opt would, touching
// only the lines that can change.
func (sp *splice) run(ctx context.Context, src File, size int64, w io.Writer, opt restore.Options) error {
	if opt.Format == nil { // auto
		opt.Format = detect(src, size)
	}
	ns := needles(opt)
	lines, in, out, res, rerr := sp.restoreLines(ctx, src, size, ns, opt)
	var nf *restore.NotFoundError
	if errors.As(rerr, &nf) {
		// An id may be spelled with escapes ("\u0065sc" for esc), which
		// the needle misses: try again with every line holding one.
		lines, in, out, res, rerr = sp.restoreLines(ctx, src, size, append(ns, []byte(`\u`)), opt)
	}
	sp.res, sp.err = res, rerr
	var blob *restore.BlobError
	var ke *keyError
	if rerr != nil {
		if errors.As(rerr, &nf) || errors.As(rerr, &blob) || errors.As(rerr, &ke) {
			return errUnchanged // a failed call changes nothing
		}
		return rerr
	}
	newLines := bytes.SplitAfter(out.Bytes(), []byte{'\n'})
	if len(newLines) > 0 && len(newLines[len(newLines)-1]) == 0 {
		newLines = newLines[:len(newLines)-1]
	}
	if len(newLines) != len(lines) {
		return errorf("restore gave %d lines for %d", len(newLines), len(lines))
	}
	if bytes.Equal(in, out.Bytes()) {
		return errUnchanged
	}
	for i := range lines {
		body := bytes.TrimSuffix(newLines[i], []byte{'\n'})
		newLines[i] = body
		if res != nil && res.Restored && sp.values == nil {
			sp.values = restoredValues(body, opt, res.PointersRestored)
		}
	}
	var at int64
	for i, l := range lines {
		if err := copyRange(w, src, at, l.start); err != nil {
			return err
		}
		if _, err := w.Write(newLines[i]); err != nil {
			return err
		}
		at = l.end
	}
	return copyRange(w, src, at, size)
}

// restoreLines runs restore with opt over the lines of src holding any of
// the needles ns, and returns them, the excerpt they make (each line with
// a line feed) and what restore made of it.
func (sp *splice) restoreLines(ctx context.Context, src File, size int64, ns [][]byte, opt restore.Options) (lines []span, excerpt []byte, out *bytes.Buffer, res *restore.Result, err error) {
	lines, err = candidates(ctx, src, size, ns)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(lines) > 0 && opt.ID != "" {
		// Putting values back changes what the usage lines after them
		// carry (gauge.Ledger): restore needs them, and the resets
		// between, to write what it would over the whole file.
		acct, err := candidates(ctx, src, size, accountNeedles())
		if err != nil {
			return nil, nil, nil, nil, err
		}
		// Of the lines before, the ledger needs the last that says what
		// a token is worth (an _adjusted) and the last roll marker, whose
		// note may follow.
		before, err := lastBefore(src, acct, lines[0].start, beforeNeedles)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		lines = mergeSpans(lines, append(before, acct...), lines[0].start)
		lines = mergeSpans(before, lines, 0)
	}
	// The candidate lines, in order, are a small transcript of their own.
	var in bytes.Buffer
	for _, l := range lines {
		if _, err := in.ReadFrom(io.NewSectionReader(src, l.start, l.end-l.start)); err != nil {
			return nil, nil, nil, nil, err
		}
		in.WriteByte('\n')
	}
	if len(opt.Keys) > 0 {
		keys, err := expandKeys(in.Bytes(), opt)
		if err != nil {
			return lines, nil, nil, nil, err
		}
		opt.Keys = keys
	}
	out = new(bytes.Buffer)
	opt.OnBadLine = func(*transcript.BadLineError) error { return nil }
	if opt.Log != nil && opt.Log.Enabled(ctx, slog.LevelDebug) {
		// Log records name a line of the file, not of the excerpt.
		nums, err := lineNumbers(src, lines)
		if err != nil {
			return nil, nil, nil, nil, err
		}
		opt.LineNum = func(n int) int {
			if n >= 1 && n <= len(nums) {
				return nums[n-1]
			}
			return n
		}
	}
	excerpt = in.Bytes()
	res, _, err = restore.Run(ctx, "", bytes.NewReader(excerpt), out, opt)
	return lines, excerpt, out, res, err
}

// keyError is a key that names none of the entry's extracted values.
type keyError struct{ msg string }

func (e *keyError) Error() string { return e.msg }

// expandKeys turns the keys of a restore into the extracted pointers of
// the entry (in excerpt, one line per candidate) that they name: a pointer
// itself, or any of its tokens ("content" names /message/content/0/text,
// as "text" does). A key naming none is an error. Without the entry in
// excerpt the keys are left for restore to report.
func expandKeys(excerpt []byte, opt restore.Options) ([]string, error) {
	var ptrs []string
	var p transcript.Parser
	for line := range bytes.SplitSeq(excerpt, []byte{'\n'}) {
		t, err := p.Parse(line)
		if err != nil {
			continue
		}
		if e := transcript.View(t, opt.Format); e.ID == opt.ID && e.Extracted >= 0 {
			t.Children(e.Extracted, func(m, _ int) { ptrs = append(ptrs, t.Key(m)) })
			break
		}
	}
	if ptrs == nil {
		return opt.Keys, nil
	}
	var out []string
	for _, k := range opt.Keys {
		found := false
		for _, ptr := range ptrs {
			if keyNames(k, ptr) {
				found = true
				if !slices.Contains(out, ptr) {
					out = append(out, ptr)
				}
			}
		}
		if !found {
			return nil, &keyError{fmt.Sprintf("entry %s has no extracted key %q: its keys are %s", opt.ID, k, strings.Join(ptrs, ", "))}
		}
	}
	return out, nil
}

// keyNames reports whether key names the JSON Pointer ptr: it is ptr, or
// one of its tokens.
func keyNames(key, ptr string) bool {
	if key == ptr {
		return true
	}
	toks, _ := transcript.SplitPointer(ptr)
	return slices.Contains(toks, key)
}

// lineNumbers returns the 1-based number in src of each of lines, by
// counting the line feeds before them.
func lineNumbers(src File, lines []span) ([]int, error) {
	nums := make([]int, len(lines))
	buf := make([]byte, 256<<10)
	num, at := 1, int64(0)
	for i, l := range lines {
		for at < l.start {
			b := buf[:min(int64(len(buf)), l.start-at)]
			n, err := src.ReadAt(b, at)
			if n == 0 && err != nil {
				return nil, err
			}
			num += bytes.Count(b[:n], []byte{'\n'})
			at += int64(n)
		}
		nums[i] = num
	}
	return nums, nil
}

// restoredValues reads the restored keys' values out of the entry's new
// line (nil when body is another line).
func restoredValues(body []byte, opt restore.Options, keys []string) map[string]json.RawMessage {
	var p transcript.Parser
	t, err := p.Parse(body)
	if err != nil || transcript.View(t, opt.Format).ID != opt.ID {
		return nil
	}
	vals := map[string]json.RawMessage{}
	for _, k := range keys {
		if n, err := t.Resolve(k); err == nil {
			vals[k] = append(json.RawMessage(nil), t.Raw(n)...)
		}
	}
	return vals
}

// copyRange copies src's bytes [from, to) to w. Through io.Copy from the
// file itself, so an *os.File on both sides lets the kernel copy.
func copyRange(w io.Writer, src File, from, to int64) error {
	if to <= from {
		return nil
	}
	if _, err := src.Seek(from, io.SeekStart); err != nil {
		return err
	}
	n, err := io.Copy(w, io.LimitReader(src, to-from))
	if err == nil && n != to-from {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// accountNeedles are held by every line that can carry usage or reset the
// accounting (gauge.NewSparseLedger): the marks of the registered
// dialects' usage and compactions, a bs roll note, the worth of a token
// bs wrote on a usage.
func accountNeedles() [][]byte {
	m := transcript.RegisteredMarks()
	return append(transcript.Needles(m.Usage, m.Reset), []byte(transcript.RolledField+`"`), []byte(transcript.AdjustedField+`"`))
}

// beforeNeedles are what the lines before a restored entry that the ledger
// needs hold: an _adjusted (the worth of a token), a roll marker.
var beforeNeedles = [][]byte{[]byte(transcript.AdjustedField + `"`), []byte(transcript.EvictedField + `"`)}

// lastBefore returns, among spans, the last before offset end that holds
// each of needles, in order.
func lastBefore(src File, spans []span, end int64, needles [][]byte) ([]span, error) {
	last := make([]int, len(needles))
	for i := range last {
		last[i] = -1
	}
	var buf []byte
	for i, s := range spans {
		if s.start >= end {
			break
		}
		buf = slices.Grow(buf[:0], int(s.end-s.start))[:s.end-s.start]
		if _, err := src.ReadAt(buf, s.start); err != nil && err != io.EOF {
			return nil, err
		}
		for k, n := range needles {
			if bytes.Contains(buf, n) {
				last[k] = i
			}
		}
	}
	slices.Sort(last)
	var out []span
	for i, k := range last {
		if k >= 0 && (i == 0 || k != last[i-1]) {
			out = append(out, spans[k])
		}
	}
	return out, nil
}

// mergeSpans returns the spans of a and those of b from offset from on, in
// order and each once.
func mergeSpans(a, b []span, from int64) []span {
	out := make([]span, 0, len(a)+len(b))
	i, j := 0, 0
	for j < len(b) && b[j].start < from {
		j++
	}
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i].start < b[j].start:
			out = append(out, a[i])
			i++
		case i == len(a) || b[j].start < a[i].start:
			out = append(out, b[j])
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// needles are the byte strings that a line restore may change must hold:
// the entry id as a JSON string (the entry itself; an entry with
// _extractable to set), and, when restore calls are redacted, the end of a
// restore or purge_control tool name (MCP clients prefix the server's
// name, as in mcp__bs__restore).
func needles(opt restore.Options) [][]byte {
	var ns [][]byte
	if opt.ID != "" {
		ns = append(ns, idNeedle(opt.ID))
		if !opt.KeepRestoreCalls {
			ns = append(ns, []byte(`restore"`), []byte(`purge_control"`))
		}
	}
	for id := range opt.SetExtractable {
		ns = append(ns, idNeedle(id))
	}
	return ns
}

// idNeedle is the id as a JSON string writes it, without the quotes when
// the id holds a character a writer may escape in more than one way.
func idNeedle(id string) []byte {
	q := transcript.AppendQuote(nil, id)
	if strings.ContainsAny(id, `"\/<>&`) || bytes.Contains(q[1:len(q)-1], []byte{'\\'}) || !isASCII(id) {
		// Any spelling of such an id holds its longest plain run; taking
		// the whole id minus escapable characters would be wrong, so take
		// the line as a candidate on any plain ASCII letter run of it.
		return []byte(longestPlain(id))
	}
	return q
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// longestPlain is the longest run of s made of characters every JSON
// writer writes as themselves (ASCII letters, digits, '-', '_', '.', ':').
func longestPlain(s string) string {
	best, start := "", 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || !plain(s[i]) {
			if i-start > len(best) {
				best = s[start:i]
			}
			start = i + 1
		}
	}
	return best
}

func plain(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == ':'
}

// candidates returns, in file order, the lines of src holding any needle.
// An empty needle makes every line a candidate. The file is scanned on
// every core, each taking a share of the chunks.
func candidates(ctx context.Context, src File, size int64, ns [][]byte) ([]span, error) {
	overlap := 0
	for _, n := range ns {
		if len(n) == 0 {
			return allLines(src, size)
		}
		overlap = max(overlap, len(n)-1)
	}
	chunks := int((size + scanChunk - 1) / scanChunk)
	workers := max(1, min(runtime.GOMAXPROCS(0), chunks))
	hits := make([][]int64, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, scanChunk+int64(overlap))
			for c := w; c < chunks; c += workers {
				if err := ctx.Err(); err != nil {
					errs[w] = err
					return
				}
				off := int64(c) * scanChunk
				n, err := src.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
				if err != nil && err != io.EOF {
					errs[w] = err
					return
				}
				for _, nd := range ns {
					chunk := buf[:n]
					for i := 0; ; {
						j := bytes.Index(chunk[i:], nd)
						if j < 0 {
							break
						}
						hits[w] = append(hits[w], off+int64(i+j))
						i += j + 1
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	all := slices.Concat(hits...)
	slices.Sort(all)
	var out []span
	covered := int64(0) // lines found end before here
	buf := make([]byte, 64<<10)
	for _, p := range all {
		if p < covered {
			continue
		}
		start, err := scanBack(src, buf, p)
		if err != nil {
			return nil, err
		}
		end, err := scanForward(src, buf, size, p)
		if err != nil {
			return nil, err
		}
		out = append(out, span{start, end})
		covered = end + 1
	}
	return out, nil
}

// scanBack finds the start of the line that holds byte at-1 (0 at the
// start of the file), reading through buf.
func scanBack(src File, buf []byte, at int64) (int64, error) {
	for at > 0 {
		from := max(0, at-int64(len(buf)))
		b := buf[:at-from]
		if _, err := src.ReadAt(b, from); err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			return from + int64(i) + 1, nil
		}
		at = from
	}
	return 0, nil
}

// scanForward finds the line feed at or after at (size when there is
// none), reading through buf.
func scanForward(src File, buf []byte, size, at int64) (int64, error) {
	for at < size {
		b := buf[:min(int64(len(buf)), size-at)]
		n, err := src.ReadAt(b, at)
		if err != nil && err != io.EOF {
			return 0, err
		}
		if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
			return at + int64(i), nil
		}
		at += int64(n)
		if n == 0 {
			break
		}
	}
	return size, nil
}

// allLines splits the whole file into lines, reading it once.
func allLines(src File, size int64) ([]span, error) {
	var out []span
	buf := make([]byte, 64<<10)
	var start, at int64
	for at < size {
		n, err := src.ReadAt(buf[:min(int64(len(buf)), size-at)], at)
		if n == 0 && err != nil && err != io.EOF {
			return nil, err
		}
		if n == 0 {
			break
		}
		for b, off := buf[:n], at; ; {
			i := bytes.IndexByte(b, '\n')
			if i < 0 {
				break
			}
			out = append(out, span{start, off + int64(i)})
			start = off + int64(i) + 1
			b, off = b[i+1:], start
		}
		at += int64(n)
	}
	if start < size {
		out = append(out, span{start, size})
	}
	return out, nil
}

// detect reads the dialect from the first lines of src.
func detect(src File, size int64) transcript.Dialect {
	s := transcript.NewSource("", io.NewSectionReader(src, 0, size), nil, func(*transcript.BadLineError) error { return nil })
	if _, _, err := s.Next(); err != nil {
		return transcript.Fallback()
	}
	return s.Dialect()
}
