package webui

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// point is the context at one usage record: the tokens the provider
// counted, on line Line (from 1), and, when bs has since taken content
// out of that context or put some back (the line's _adjusted), what it
// holds of them now.
type point struct {
	Line   int  `json:"line"`
	Tokens int  `json:"tokens"`
	Now    *int `json:"now,omitempty"`
}

// mark is a compaction on the timeline: the runtime's own, or bs roll's
// note.
type mark struct {
	Line   int    `json:"line"`
	Kind   string `json:"kind"` // compaction or roll
	Before int    `json:"tokens_before,omitempty"`
}

// summary is what one read of a whole file tells.
type summary struct {
	points         []point
	marks          []mark
	moved          int64
	movedValues    int
	title, workDir string
	window         int
}

// summaryNeedles are the bytes a line must hold for the summary to parse
// it: the registered dialects' marks of usage records, compactions and
// working directories, bs's roll notes and _extracted.
func summaryNeedles() [][]byte {
	m := transcript.RegisteredMarks()
	return append(transcript.Needles(m.Usage, m.Reset, m.WorkDir), []byte(transcript.RolledField), []byte("_extracted"))
}

// titleLines is how many lines the summary parses in search of the first
// thing the user said.
const titleLines = 400

// summary reads the file once, in file order, for the usage records,
// compactions and extracted bytes.
func (fi *fileInfo) summary(f *os.File) (*summary, error) {
	fi.sumOnce.Do(func() { fi.sum, fi.sumErr = fi.readSummary(f) })
	return fi.sum, fi.sumErr
}

func (fi *fileInfo) readSummary(f *os.File) (*summary, error) {
	sum := &summary{}
	r := transcript.NewReader(io.NewSectionReader(f, 0, fi.size))
	var p transcript.Parser
	est := gauge.CharsPer4{}
	lastMsg := ""
	needles := summaryNeedles()
	for {
		l, err := r.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		wantTitle := sum.title == "" && l.Num <= titleLines
		if !wantTitle && !hasAny(l.Body, needles) {
			continue
		}
		t, err := p.Parse(l.Body)
		if err != nil {
			continue
		}
		if wantTitle {
			sum.title = firstUserText(t, fi.dialect)
		}
		if sum.workDir == "" {
			sum.workDir = fi.dialect.WorkDir(t)
		}
		e := transcript.View(t, fi.dialect)
		if e.Extracted >= 0 {
			t.Children(e.Extracted, func(c, _ int) {
				if n, err := strconv.ParseInt(string(t.Raw(t.Get(c, "bytes"))), 10, 64); t.Get(c, "bytes") >= 0 && err == nil {
					sum.moved += n
				}
				sum.movedValues++
			})
		}
		line := gauge.Classify(t, fi.dialect, est)
		if line.Window > 0 {
			sum.window = line.Window
		}
		switch line.Role {
		case gauge.Usage:
			if line.MsgID != "" && line.MsgID == lastMsg {
				continue // one response split over several lines
			}
			lastMsg = line.MsgID
			pt := point{Line: l.Num, Tokens: line.Tokens}
			if line.Adj.Present() {
				now := max(line.Tokens-line.Adj.Net(), 0)
				pt.Now = &now
			}
			sum.points = append(sum.points, pt)
		case gauge.Compaction:
			m := mark{Line: l.Num, Kind: "compaction"}
			if t.Get(0, "_rolled") >= 0 || line.RollEnd {
				m.Kind = "roll"
			}
			if n, ok := fi.dialect.CompactedFrom(t); ok {
				m.Before = n
			}
			sum.marks = append(sum.marks, m)
		}
	}
	return sum, nil
}

func hasAny(b []byte, subs [][]byte) bool {
	for _, s := range subs {
		if bytes.Contains(b, s) {
			return true
		}
	}
	return false
}

// firstUserText is the gist of a user message's text, or "": not what the
// runtime puts in a user message of its own accord (Dialect.Inserted:
// its instructions, reminders, command output), nor a text that opens
// with markup, as the context a runtime sends in tags does.
func firstUserText(t *transcript.Tree, d transcript.Dialect) string {
	e := transcript.View(t, d)
	if e.Role != "user" {
		return ""
	}
	for _, v := range e.Values {
		if v.Kind == transcript.Text {
			text := t.StrPrefix(v.Measure, 400)
			s := checkpoint.Gist(text, 90)
			if s != "" && !strings.HasPrefix(s, "<") && !d.Inserted(text) {
				return s
			}
		}
	}
	return ""
}

func (s *Server) timeline(w http.ResponseWriter, r *http.Request, fi *fileInfo, f *os.File) {
	sum, err := fi.summary(f)
	if err != nil {
		failErr(w, err)
		return
	}
	window := s.opt.Window
	if window == 0 {
		if g, err := gauge.MeasureFile(f, s.gaugeOptions()); err == nil {
			window = g.Window
		}
	}
	reply(w, map[string]any{"points": nonNil(sum.points), "marks": nonNil(sum.marks), "window": window, "lines": len(fi.lines)})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
