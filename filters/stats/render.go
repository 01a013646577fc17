package stats

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// TextOptions choose how WriteText renders a report for people.
type TextOptions struct {
	Chart bool // bar charts, for a terminal
	Color bool // ANSI colours in the charts
	Width int  // the longest bar, in cells (default 30)
	Tools int  // how many tools to list (default 10; the JSON has all)
}

// WriteText writes the report as plain text, or with Chart as bar charts.
func WriteText(w io.Writer, r *Report, o TextOptions) error {
	if o.Width <= 0 {
		o.Width = 30
	}
	if o.Tools <= 0 {
		o.Tools = 10
	}
	bw := bufio.NewWriter(w)
	p := printer{w: bw, o: o, r: r}
	if o.Chart {
		p.chart()
	} else {
		p.plain()
	}
	return bw.Flush()
}

type printer struct {
	w *bufio.Writer
	o TextOptions
	r *Report
}

func (p *printer) f(format string, args ...any) { fmt.Fprintf(p.w, format, args...) }

func (p *printer) pct(n int) string {
	if p.r.Tokens == 0 {
		return "0.0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(p.r.Tokens))
}

func (p *printer) header() {
	r := p.r
	p.f("%s: %d tokens (%s), %d bytes in %d lines, %s", r.File, r.Tokens, r.Estimator, r.Bytes, r.Lines, r.Dialect)
	if r.BadLines > 0 {
		p.f(", %s", plural(r.BadLines, "bad line"))
	}
	p.f("\n")
	if r.Context != nil {
		p.f("context: %s (%s)\n", r.Context, r.Context.Source)
	}
}

func (p *printer) plain() {
	r := p.r
	p.header()
	p.f("\n%-12s %10s %7s %12s %10s %12s\n", "kind", "tokens", "share", "bytes", "extracted", "ext. bytes")
	for k := range numKinds {
		ks := r.Kinds[k]
		p.f("%-12s %10d %7s %12d %10d %12d\n", k, ks.Tokens, p.pct(ks.Tokens), ks.Bytes, ks.Extracted.Tokens, ks.Extracted.Bytes)
	}
	p.f("%-12s %10d %7s %12d %10d %12d\n", "total", r.Tokens, p.pct(r.Tokens), r.Bytes, r.Extracted.Tokens, r.Extracted.Bytes)
	p.otherBy()
	if len(r.Tools) > 0 {
		nw := p.nameWidth()
		p.f("\n%-*s %6s %10s %10s %10s %10s\n", nw, "tool", "calls", "tokens", "call", "result", "extracted")
		for i, t := range r.Tools {
			if i == p.o.Tools {
				p.f("(%d more)\n", len(r.Tools)-i)
				break
			}
			p.f("%-*s %6d %10d %10d %10d %10d\n", nw, clip(t.Name, nw), t.Calls, t.Tokens, t.CallTokens, t.ResultTokens, t.ExtractedTokens)
		}
	}
	if len(r.Largest) > 0 {
		p.f("\nlargest entries\n%8s %10s  %-11s %-10s %-16s %s\n", "line", "tokens", "kind", "role", "tool", "id")
		for _, e := range r.Largest {
			p.f("%8d %10d  %-11s %-10s %-16s %s\n", e.Line, e.Tokens, e.Kind, clip(e.Role, 10), clip(e.Tool, 16), e.ID)
		}
	}
	p.f("\n")
	p.extracted()
	p.wouldFree()
}

// otherBy lists what fills other: the bytes of each line type's members,
// the largest first.
func (p *printer) otherBy() {
	r := p.r
	if len(r.OtherBy) == 0 || r.Kinds[other].Bytes == 0 {
		return
	}
	p.f("\nother, by line type and member %12s %7s %8s\n", "bytes", "share", "lines")
	for i, o := range r.OtherBy {
		if i == otherRows {
			p.f("(%d more)\n", len(r.OtherBy)-i)
			break
		}
		name := o.Type + " " + o.Field
		if o.Field == "" {
			name = o.Type + " (keys, punctuation)"
		}
		if o.Type == notJSON {
			name = notJSON
		}
		p.f("%-30s %12d %6.1f%% %8d\n", clip(name, 30), o.Bytes, 100*float64(o.Bytes)/float64(r.Kinds[other].Bytes), o.Lines)
	}
}

// otherRows is how many rows of other's breakdown the text shows (the
// JSON has them all).
const otherRows = 8

func (p *printer) extracted() {
	r := p.r
	p.f("extracted: %s in %s, %d bytes, about %d tokens\n", plural(r.Extracted.Values, "value"), plural(r.ExtractedEntries, "entry"), r.Extracted.Bytes, r.Extracted.Tokens)
}

func (p *printer) wouldFree() {
	f := p.r.WouldFree
	if f == nil {
		return
	}
	s := f.Settings
	p.f("would free: %d tokens (%s), %d bytes, %s in %s (bs extract --keep-recent %d --min-length %d --types %s --keep-after-restore %s",
		f.Tokens, p.pct(f.Tokens), f.Bytes, plural(f.Values, "value"), plural(f.Entries, "entry"), s.KeepRecent, s.MinLength, s.Types, s.KeepAfterRestore)
	for _, rule := range s.Rules {
		p.f(" --rule %q", rule)
	}
	p.f(")\n")
	if f.Context != nil && p.r.Context != nil {
		p.f("context after extract: %s, from %s\n", f.Context, p.r.Context)
	}
}

func (p *printer) nameWidth() int {
	w := 8
	for i, t := range p.r.Tools {
		if i == p.o.Tools {
			break
		}
		w = max(w, len(t.Name))
	}
	return min(w, 24)
}

// clip shortens s to n characters, the last an ellipsis.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// Colours of the kinds, as SGR parameters.
var kindColors = [numKinds]string{"34", "32", "35", "33", "36", "31", "90"}

func (p *printer) paint(sgr, s string) string {
	if !p.o.Color || s == "" {
		return s
	}
	return "\x1b[" + sgr + "m" + s + "\x1b[0m"
}

// bar draws n of scale in eighths of a cell.
func (p *printer) bar(n, scale int) string {
	if scale <= 0 || n <= 0 {
		return ""
	}
	eighths := int(int64(n) * int64(p.o.Width) * 8 / int64(scale))
	if eighths == 0 {
		eighths = 1 // something, however small, shows
	}
	return strings.Repeat("█", eighths/8) + []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}[eighths%8]
}

func (p *printer) cells(s string) int { return len([]rune(s)) }

// row writes one line of a chart: a label, a live bar and an extracted
// bar (light shade), padded so that the numbers after line up.
func (p *printer) row(label string, sgr string, live, ext, scale int, tail string) {
	lb, eb := p.bar(live, scale), ""
	if ext > 0 {
		eb = strings.Repeat("░", max(1, int(int64(ext)*int64(p.o.Width)/int64(scale))))
	}
	pad := max(0, p.o.Width+1-p.cells(lb)-p.cells(eb))
	p.f("%-12s %s%s%s %s\n", label, p.paint(sgr, lb), p.paint("2", eb), strings.Repeat(" ", pad), tail)
}

func (p *printer) chart() {
	r := p.r
	p.header()
	scale := 1
	for k := range numKinds {
		scale = max(scale, r.Kinds[k].Tokens+r.Kinds[k].Extracted.Tokens)
	}
	p.f("\ntokens by kind (█ live, ░ extracted)\n")
	for k := range numKinds {
		ks := r.Kinds[k]
		tail := fmt.Sprintf("%10d %6s", ks.Tokens, p.pct(ks.Tokens))
		if ks.Extracted.Tokens > 0 {
			tail += fmt.Sprintf("  +%d extracted", ks.Extracted.Tokens)
		}
		p.row(k.String(), kindColors[k], ks.Tokens, ks.Extracted.Tokens, scale, tail)
	}
	p.otherBy()
	if len(r.Tools) > 0 {
		p.f("\ntokens by tool (█ live, ░ extracted)\n")
		scale = 1
		for _, t := range r.Tools {
			scale = max(scale, t.Tokens+t.ExtractedTokens)
		}
		for i, t := range r.Tools {
			if i == p.o.Tools {
				p.f("(%d more)\n", len(r.Tools)-i)
				break
			}
			k := toolResult
			if t.CallTokens > t.ResultTokens {
				k = toolCall
			}
			tail := fmt.Sprintf("%10d  %s, call %d, result %d", t.Tokens, plural(t.Calls, "call"), t.CallTokens, t.ResultTokens)
			if t.ExtractedTokens > 0 {
				tail += fmt.Sprintf("  +%d extracted", t.ExtractedTokens)
			}
			p.row(clip(t.Name, 12), kindColors[k], t.Tokens, t.ExtractedTokens, scale, tail)
		}
	}
	if len(r.Largest) > 0 {
		p.f("\nlargest entries\n")
		scale = max(1, r.Largest[0].Tokens)
		for _, e := range r.Largest {
			k := other
			for i, n := range kindNames {
				if n == e.Kind {
					k = kind(i)
				}
			}
			p.row(fmt.Sprintf("line %d", e.Line), kindColors[k], e.Tokens, 0, scale, fmt.Sprintf("%10d  %-11s %-12s %s", e.Tokens, e.Kind, clip(e.Tool, 12), e.ID))
		}
	}
	p.f("\n")
	p.extracted()
	p.wouldFree()
}

func plural(n int, what string) string {
	switch {
	case n == 1:
		return "1 " + what
	case strings.HasSuffix(what, "y"):
		return fmt.Sprintf("%d %sies", n, what[:len(what)-1])
	}
	return fmt.Sprintf("%d %ss", n, what)
}
