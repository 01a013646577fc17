package gauge

import (
	"bytes"
	"os"
	"path/filepath"
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
// comma (Python's json.dumps), and with white space before and after
// every colon that follows a quote: JSON allows all of them, and mayReset
// looks at the bytes around colons.
func spacings(line []byte) [][]byte {
	spaced := jsontext.Value(bytes.Clone(line))
	if err := spaced.Format(jsontext.SpaceAfterColon(true), jsontext.SpaceAfterComma(true)); err != nil {
		return [][]byte{line} // not JSON: nothing to classify
	}
	around := bytes.ReplaceAll(line, []byte(`":`), []byte("\" \t:\r "))
	return [][]byte{line, spaced, around}
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
	}
	check := func(t *testing.T, d transcript.Dialect, num int, line []byte) {
		var p transcript.Parser
		for _, l := range spacings(line) {
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
	for _, line := range []string{
		`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"the usage is: see session and compact"}]}}`,
		`{"type":"message","message":{"role":"user","content":"\"usage\": 5, \"type\": \"session\" said nobody"}}`,
		`{"last_token_usage":{"total_tokens":5},"my_rolled":1}`,
		`{"usage":5}`[:7],
		`:`,
		``,
		`{"type":"sessions"}`,
	} {
		if mayReset([]byte(line)) {
			t.Errorf("mayReset(%s) = true, want false", line)
		}
	}
}
