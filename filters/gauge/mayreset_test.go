package gauge

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/bstools/bs/filters/transcript"
)

// matters reports whether Measure must parse line l rather than keep it
// for later: it resets the gauge, names the model or the window, or opens
// a roll note's scope.
func matters(l Line) bool {
	return l.Role == Usage || l.Role == Compaction || l.Model != "" || l.Window != 0 || l.Scope != 0
}

// spacings gives line as written, with a space after every colon and
// comma (Python's json.dumps), and with white space between every member
// name and its colon: JSON allows all of them, and mayReset looks at the
// bytes around colons. Every spacing of a line that parses parses.
func spacings(t *testing.T, line []byte) [][]byte {
	var p transcript.Parser
	tr, err := p.Parse(line)
	if err != nil {
		return [][]byte{line} // not JSON: nothing to classify
	}
	var ends []int // where each member name ends
	for _, n := range tr.Nodes {
		if n.Name != nil {
			ends = append(ends, n.KeyStart+len(n.Name))
		}
	}
	slices.Sort(ends)
	var around []byte
	last := 0
	for _, e := range ends {
		around = append(append(around, line[last:e]...), " \t\r "...)
		last = e
	}
	around = append(around, line[last:]...)
	spaced := jsontext.Value(bytes.Clone(line))
	if err := spaced.Format(jsontext.SpaceAfterColon(true), jsontext.SpaceAfterComma(true)); err != nil {
		t.Fatalf("formatting %.200s: %v", line, err)
	}
	out := [][]byte{line, spaced, around}
	for _, l := range out[1:] {
		if _, err := p.Parse(l); err != nil {
			t.Fatalf("a spacing of %.200s does not parse: %v\n%.300s", line, err, l)
		}
	}
	return out
}

// TestMayResetMissesNothing: on every line of the corpus, written as the
// runtime wrote it and with JSON white space added, mayReset is true for
// every line that classify finds to matter, so skipping the others never
// changes a gauge.
func TestMayResetMissesNothing(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("corpus not present")
	}
	// Lines of each kind that matters, in every dialect, beside the corpus.
	extra := []struct {
		d    transcript.Dialect
		line string
	}{
		{transcript.OpenClaw, `{"type":"compaction","id":"c","summary":"s","firstKeptEntryId":"a","tokensBefore":5}`},
		{transcript.OpenClaw, `{"type":"model_change","id":"m","provider":"p","modelId":"gpt-5"}`},
		{transcript.OpenClaw, `{"type" : "message","message" : {"role":"assistant","content":[],"model":"m","usage" :{"input":5,"output":1}}}`},
		{transcript.ClaudeCode, `{"type":"system","subtype":"compact_boundary","uuid":"u"}`},
		{transcript.Codex, `{"type":"turn_context","payload":{"model":"gpt-5-codex"}}`},
		{transcript.Codex, `{"type":"event_msg","payload":{"type":"token_count","info":{"model_context_window":1000}}}`},
		{transcript.Codex, `{"type":"compacted","payload":{"message":"summary"}}`},
		{transcript.Generic, `{"_rolled":{"by":"bs roll","tokens":10,"kept_lines":3},"role":"system","content":"rolled"}`},
		{transcript.ClaudeCode, `{"type":"assistant","message":{"id":"m","role":"assistant","model":"claude-opus-4","content":[],"usage":{"input_tokens":5}}}`},
		{transcript.ClaudeCode, `{"message":{"role":"assistant","usage":{"input_tokens":5}}}`}, // ccusage fixtures: no type
		{transcript.OpenClaw, `{"type":"session","version":3,"id":"s","modelId":"gpt-5"}`},
		// A model named without usage is taken in order too.
		{transcript.ClaudeCode, `{"type":"assistant","message":{"role":"assistant","model":"claude-opus-4","content":[]}}`},
		// \u escapes in the names and values classify reads.
		{transcript.OpenClaw, `{"type":"message","message":{"role":"assistant","model":"m","us\u0061ge":{"input":5,"output":1}}}`},
		{transcript.ClaudeCode, `{"type":"system","subtype":"\u0063ompact_boundary"}`},
		{transcript.Codex, `{"type":"event_msg","payload":{"type":"token\u005fcount","info":{"model_context_window":1000}}}`},
		{transcript.Codex, `{"type":"\u0074urn_context","payload":{"model":"gpt-5"}}`},
		{transcript.Generic, `{"\u005frolled":{"by":"bs roll","tokens":10,"kept_lines":3},"role":"system","content":"x"}`},
		{transcript.OpenClaw, `{"\u0074ype":"\u006d\u006f\u0064\u0065\u006c\u005f\u0063\u0068\u0061\u006e\u0067\u0065","modelId":"m"}`},
	}
	mayReset := newResetMarks(transcript.RegisteredMarks()).mayReset
	check := func(t *testing.T, d transcript.Dialect, num int, line []byte) {
		var p transcript.Parser
		for _, l := range spacings(t, line) {
			tr, err := p.Parse(l)
			if err != nil {
				continue
			}
			if c := classify(tr, d, CharsPer4{}, false, nil); matters(c) && !mayReset(l) {
				t.Fatalf("line %d matters (%+v) but mayReset passes it over:\n%.300s", num, c, l)
			}
		}
	}
	for i, e := range extra {
		var p transcript.Parser
		tr, err := p.Parse([]byte(e.line))
		if err != nil || !matters(classify(tr, e.d, CharsPer4{}, false, nil)) {
			t.Fatalf("extra line %d does not matter, so it checks nothing: %s", i+1, e.line)
		}
		check(t, e.d, i+1, []byte(e.line))
	}
	mattered := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d := detect(t, data)
		var p transcript.Parser
		for i, line := range bytes.Split(data, []byte("\n")) {
			if tr, err := p.Parse(line); err == nil && matters(classify(tr, d, CharsPer4{}, false, nil)) {
				mattered++
			}
			check(t, d, i+1, line)
		}
	}
	if mattered == 0 {
		t.Fatal("no line of the corpus matters: the test checks nothing")
	}
}

// TestMayResetPassesOverText: colons and quotes inside strings, keys that
// only end like a marker, and markers as plain text do not make a line
// matter.
func TestMayResetPassesOverText(t *testing.T) {
	mayReset := newResetMarks(transcript.RegisteredMarks()).mayReset
	for _, line := range []string{
		`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"the usage is: see session and compact"}]}}`,
		`{"type":"message","message":{"role":"user","content":"\"usage\": 5, \"type\": \"session\" said nobody"}}`,
		`{"last_token_usage":{"total_tokens":5},"my_rolled":1}`,
		`{"usage":5}`[:7],
		`:`,
		``,
		`{"type":"sessions"}`,
		`{"text":"\"usage\": 1, \"us\u0061ge\": 2, \"type\": \"session\""}`,
		`{"my_model":"m","modelId":"x","text":"\u0075sage"}`,
	} {
		if mayReset([]byte(line)) {
			t.Errorf("mayReset(%s) = true, want false", line)
		}
	}
}

// TestMeasureTakesEscapedMarkers: a roll note whose name is written with a
// \u escape still scopes the gauge, and the model named last wins though a
// line naming one carries no usage.
func TestMeasureTakesEscapedMarkers(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"assistant","message":{"id":"a","role":"assistant","model":"c","content":[],"usage":{"input_tokens":150000}}}`,
		`{"\u005frolled":{"by":"bs roll","tokens":1000,"kept_lines":2},"type":"user","message":{"role":"user","content":"r"}}`,
		`{"type":"user","message":{"role":"user","content":"a"}}`,
		`{"type":"assistant","message":{"id":"b","role":"assistant","model":"c","content":[],"usage":{"input_tokens":150000}}}`,
		`{"type":"user","message":{"role":"user","content":"hi"}}`}, "\n") + "\n"
	r, err := Measure("x", strings.NewReader(in), nil, Options{Format: transcript.ClaudeCode})
	if err != nil || r.Tokens != 1001 {
		t.Errorf("Measure = %d tokens (%v), want 1001", r.Tokens, err)
	}
	in = strings.Join([]string{
		`{"type":"message","id":"1","message":{"role":"assistant","model":"a","content":[],"usage":{"input":5,"output":1}}}`,
		`{"type":"message","id":"2","message":{"role":"assistant","model":"x","content":[]}}`,
		`{"type":"model_change","id":"3","modelId":"y"}`}, "\n") + "\n"
	r, err = Measure("x", strings.NewReader(in), nil, Options{Format: transcript.OpenClaw})
	if err != nil || r.Model != "y" {
		t.Errorf("Measure gave model %q (%v), want y, the last named", r.Model, err)
	}
}

// BenchmarkMayReset runs the pre-filter alone over every line of the
// corpus (of the benchmark session of BenchmarkMeasureStream without it):
// it sees every byte a pipe gives the gauge.
func BenchmarkMayReset(b *testing.B) {
	var data []byte
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d...)
	}
	if len(data) == 0 {
		in, _ := piSession(false, 320, 33000, 300)
		data = []byte(in)
	}
	lines := bytes.Split(data, []byte("\n"))
	mayReset := newResetMarks(transcript.RegisteredMarks()).mayReset
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		n := 0
		for _, l := range lines {
			if mayReset(l) {
				n++
			}
		}
		if n == 0 {
			b.Fatal("no line may reset the gauge")
		}
	}
}
