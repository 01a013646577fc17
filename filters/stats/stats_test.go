package stats

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

const corpusDir = "../../../shared/corpus"

func transcripts(t *testing.T) []string {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	return append(files, "../../testdata/sample/session.jsonl")
}

func plan() *Plan {
	x := extract.Defaults()
	x.Workers = 1
	return &Plan{Extract: x}
}

// checkSums: the kinds add up to the totals, and the tools to the tool
// kinds.
func checkSums(t *testing.T, name string, r *Report) {
	t.Helper()
	if r.mismatches != 0 {
		t.Errorf("%s: %d lines whose parts do not add up to the gauge's estimate", name, r.mismatches)
	}
	tokens, b := 0, int64(0)
	ext := Amount{}
	for _, k := range r.Kinds {
		tokens += k.Tokens
		b += k.Bytes
		ext.Values += k.Extracted.Values
		ext.Bytes += k.Extracted.Bytes
		ext.Tokens += k.Extracted.Tokens
		if k.Tokens < 0 || k.Bytes < 0 {
			t.Errorf("%s: negative share %+v", name, k)
		}
	}
	if tokens != r.Tokens || b != r.Bytes || ext != r.Extracted {
		t.Errorf("%s: kinds add up to %d tokens, %d bytes, %+v; totals %d, %d, %+v", name, tokens, b, ext, r.Tokens, r.Bytes, r.Extracted)
	}
	var otherBytes int64
	for _, o := range r.OtherBy {
		otherBytes += o.Bytes
		if o.Bytes <= 0 || o.Lines <= 0 {
			t.Errorf("%s: other part %+v", name, o)
		}
	}
	if otherBytes != r.Kinds[other].Bytes {
		t.Errorf("%s: other's parts add up to %d bytes, other has %d", name, otherBytes, r.Kinds[other].Bytes)
	}
	calls, results, extracted := 0, 0, 0
	for _, tl := range r.Tools {
		calls += tl.CallTokens
		results += tl.ResultTokens
		extracted += tl.ExtractedTokens
		if tl.Tokens != tl.CallTokens+tl.ResultTokens {
			t.Errorf("%s: tool %+v", name, tl)
		}
	}
	if calls != r.Kinds[toolCall].Tokens || results != r.Kinds[toolResult].Tokens ||
		extracted != r.Kinds[toolCall].Extracted.Tokens+r.Kinds[toolResult].Extracted.Tokens {
		t.Errorf("%s: tools add up to %d call, %d result, %d extracted tokens; kinds say %d, %d", name, calls, results, extracted,
			r.Kinds[toolCall].Tokens, r.Kinds[toolResult].Tokens)
	}
}

// TestCorpusTotalIsGauge is the acceptance test: on every transcript the
// total is the gauge's estimate of the whole transcript, the breakdown
// adds up to it, and the largest entries are the largest lines.
func TestCorpusTotalIsGauge(t *testing.T) {
	files := transcripts(t)
	if len(files) == 1 {
		t.Log("corpus not present: the sample only")
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		r, err := Run(context.Background(), name, bytes.NewReader(in), Options{})
		if err != nil {
			t.Fatal(err)
		}
		want, err := gauge.EstimateAll(name, bytes.NewReader(in), gauge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Tokens != want {
			t.Errorf("%s: stats total %d, gauge estimate %d", name, r.Tokens, want)
		}
		if r.Bytes != int64(len(in)) {
			t.Errorf("%s: %d bytes, file has %d", name, r.Bytes, len(in))
		}
		checkSums(t, name, r)
		checkLargest(t, name, in, r)
	}
}

// checkLargest compares the largest entries with every line's estimate,
// sorted.
func checkLargest(t *testing.T, name string, in []byte, r *Report) {
	t.Helper()
	type lt struct{ line, tokens int }
	var all []lt
	src := transcript.NewSource(name, bytes.NewReader(in), transcript.Unknown, func(*transcript.BadLineError) error { return nil })
	for {
		line, tr, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if tr != nil {
			if n := gauge.Contents(tr, src.Dialect(), gauge.CharsPer4{}, nil); n > 0 {
				all = append(all, lt{line.Num, n})
			}
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].tokens > all[j].tokens })
	if len(all) > 10 {
		all = all[:10]
	}
	if len(all) != len(r.Largest) {
		t.Fatalf("%s: %d largest entries, want %d", name, len(r.Largest), len(all))
	}
	for i, e := range r.Largest {
		if e.Line != all[i].line || e.Tokens != all[i].tokens || e.ID == "" {
			t.Errorf("%s: largest #%d is line %d with %d tokens (id %q), want line %d with %d", name, i+1, e.Line, e.Tokens, e.ID, all[i].line, all[i].tokens)
		}
	}
}

// TestWouldFreeIsExtract: what stats says extract would free is what a
// real extract run frees, measured by the gauge on its output, and the
// extracted amounts of that output are what was moved.
func TestWouldFreeIsExtract(t *testing.T) {
	store, err := blobstore.OpenLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range transcripts(t) {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		r, err := Run(context.Background(), name, bytes.NewReader(in), Options{Plan: plan()})
		if err != nil {
			t.Fatal(err)
		}
		x := extract.Defaults()
		x.Store = store
		var out bytes.Buffer
		st, err := extract.Run(context.Background(), name, bytes.NewReader(in), &out, x)
		if err != nil {
			t.Fatal(err)
		}
		after, err := gauge.EstimateAll(name, bytes.NewReader(out.Bytes()), gauge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		f := r.WouldFree
		if f.Tokens != r.Tokens-after || f.Bytes != int64(len(in)-out.Len()) || f.Values != st.Values || f.Entries != st.Entries {
			t.Errorf("%s: would free %d tokens, %d bytes, %d values in %d entries; extract freed %d, %d, %d in %d",
				name, f.Tokens, f.Bytes, f.Values, f.Entries, r.Tokens-after, len(in)-out.Len(), st.Values, st.Entries)
		}
		lean, err := Run(context.Background(), name, bytes.NewReader(out.Bytes()), Options{})
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, name+" (extracted)", lean)
		if lean.Extracted.Values-r.Extracted.Values != st.Values || lean.Tokens != after {
			t.Errorf("%s: after extract, %d values extracted (%d more), total %d; extract moved %d, gauge %d", name,
				lean.Extracted.Values, lean.Extracted.Values-r.Extracted.Values, lean.Tokens, st.Values, after)
		}
		sum := 0
		for _, k := range f.Kinds {
			sum += k.Tokens
		}
		if sum != f.Tokens {
			t.Errorf("%s: would-free kinds add up to %d, total %d", name, sum, f.Tokens)
		}
	}
}

// TestTokenizer: with a tokenizer the total is still the gauge's.
func TestTokenizer(t *testing.T) {
	o200k, err := gauge.NewTokenizer("o200k")
	if err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile("../../testdata/sample/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(context.Background(), "-", bytes.NewReader(in), Options{Estimator: o200k})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := gauge.EstimateAll("-", bytes.NewReader(in), gauge.Options{Estimator: o200k})
	if r.Tokens != want || r.Estimator != "o200k" {
		t.Errorf("o200k total %d (%s), gauge %d", r.Tokens, r.Estimator, want)
	}
	checkSums(t, "sample", r)
}

// TestKinds: each kind of content lands in its bucket, images cost the
// gauge's flat rate, and tool results find their tool by the call's id,
// in the tools and in the largest entries.
func TestKinds(t *testing.T) {
	in := strings.Join([]string{
		`{"type":"user","uuid":"u1","message":{"role":"user","content":[{"type":"text","text":"` + strings.Repeat("u", 40) + `"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AAAA"}}]}}`,
		`{"type":"assistant","uuid":"a1","message":{"role":"assistant","content":[{"type":"thinking","thinking":"` + strings.Repeat("t", 80) + `","signature":"sig"},{"type":"text","text":"` + strings.Repeat("a", 20) + `"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"` + strings.Repeat("c", 12) + `"}}]}}`,
		`{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"` + strings.Repeat("r", 400) + `"}]}}`,
		`{"type":"system","uuid":"s1","subtype":"info","content":"not in context"}`,
	}, "\n") + "\n"
	r, err := Run(context.Background(), "-", strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[kind]int{user: 10, image: gauge.ImageTokens, thinking: 20, assistant: 5, toolCall: 3 + 1, toolResult: 100}
	for k := range numKinds {
		if r.Kinds[k].Tokens != want[k] {
			t.Errorf("%s: %d tokens, want %d", k, r.Kinds[k].Tokens, want[k])
		}
	}
	if r.Dialect != "claude-code" || len(r.Tools) != 1 || r.Tools[0].Name != "Bash" || r.Tools[0].Calls != 1 || r.Tools[0].ResultTokens != 100 {
		t.Errorf("dialect %s, tools %+v", r.Dialect, r.Tools)
	}
	// A Claude Code result names its tool only through the call's id: the
	// largest entries name it all the same.
	if r.Largest[0].ID != "u1" || r.Largest[0].Kind != "image" || r.Largest[1].ID != "u2" || r.Largest[1].Tool != "Bash" {
		t.Errorf("largest %+v", r.Largest)
	}
	// Other, by line type and member: the system line's content, which is
	// in no conversation, is there whole.
	found := false
	for _, o := range r.OtherBy {
		if o.Type == "system" && o.Field == "content" {
			found = o.Bytes == int64(len(`"not in context"`)) && o.Lines == 1
		}
	}
	if !found {
		t.Errorf("other by type and member: %+v", r.OtherBy)
	}
	checkSums(t, "kinds", r)
}

// Past maxTools distinct names, the rest are counted together as
// "(other tools)", so memory stays bounded whatever the transcript holds,
// and the tool totals still add up.
func TestToolsBounded(t *testing.T) {
	var b strings.Builder
	const n = maxTools + 10
	for i := range n {
		fmt.Fprintf(&b, `{"type":"assistant","uuid":"a%d","message":{"role":"assistant","content":[{"type":"tool_use","id":"t%d","name":"tool%d","input":{}}]}}`+"\n", i, i, i)
		fmt.Fprintf(&b, `{"type":"user","uuid":"u%d","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t%d","content":"result"}]}}`+"\n", i, i)
	}
	r, err := Run(context.Background(), "-", strings.NewReader(b.String()), Options{})
	if err != nil {
		t.Fatal(err)
	}
	calls, other := 0, 0
	for _, tl := range r.Tools {
		calls += tl.Calls
		if tl.Name == otherTools {
			other = tl.Calls
		}
	}
	if len(r.Tools) != maxTools+1 || other != n-maxTools || calls != n {
		t.Errorf("%d tools, %d calls under %q, %d calls in all; want %d, %d, %d", len(r.Tools), other, otherTools, calls, maxTools+1, n-maxTools, n)
	}
	checkSums(t, "tools", r)
}
