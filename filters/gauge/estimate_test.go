package gauge

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// usageFree removes what makes the gauge stop estimating: usage blocks,
// Codex token counts and compactions, so that Measure has to estimate
// every line.
func usageFree(in []byte) []byte {
	var out bytes.Buffer
	usage := regexp.MustCompile(`,"usage":\{("[a-z_A-Z]+":(\d+|\{[^{}]*\}|null),?)*\}`)
	for _, line := range bytes.SplitAfter(in, []byte("\n")) {
		if bytes.Contains(line, []byte(`"token_count"`)) || bytes.Contains(line, []byte(`compact`)) {
			continue
		}
		out.Write(usage.ReplaceAll(line, nil))
	}
	return out.Bytes()
}

// TestEstimateAllIsTheGaugeWithoutUsage: on transcripts with no usage and
// no compaction, EstimateAll is exactly what the gauge reports.
func TestEstimateAllIsTheGaugeWithoutUsage(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	files = append(files, "../../testdata/sample/session.jsonl")
	tested := 0
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		in = usageFree(in)
		res, err := Measure(f, bytes.NewReader(in), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Source != "estimate" {
			continue // a shape of usage the regexp above does not remove
		}
		tested++
		all, err := EstimateAll(f, bytes.NewReader(in), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if all != res.Tokens {
			t.Errorf("%s: EstimateAll = %d, gauge = %d", filepath.Base(f), all, res.Tokens)
		}
	}
	if tested == 0 {
		t.Fatal("no transcript without usage to compare")
	}
	t.Logf("%d transcripts", tested)
}

// TestContentsParts: the parts Contents reports add up to its estimate,
// for chars/4 and for a tokenizer, on every line of every transcript.
func TestContentsParts(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	files = append(files, "../../testdata/sample/session.jsonl")
	o200k, err := NewTokenizer("o200k")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ests := []Estimator{CharsPer4{}}
		if len(in) < 1<<20 {
			ests = append(ests, o200k) // the tokenizer is slow; small files suffice
		}
		for _, est := range ests {
			src := transcript.NewSource(f, bytes.NewReader(in), transcript.Unknown, func(*transcript.BadLineError) error { return nil })
			for {
				line, tr, err := src.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if tr == nil {
					continue
				}
				chars, tokens, images := 0, 0, 0
				got := Contents(tr, src.Dialect(), est, func(p Part) {
					chars += p.Chars
					tokens += p.Tokens
					if p.Image {
						images++
					}
				})
				want := est.Tokens(chars) + images*ImageTokens
				if _, ok := est.(TextEstimator); ok {
					want = tokens + images*ImageTokens
				}
				if got != want {
					t.Fatalf("%s:%d (%s): Contents = %d, parts give %d", filepath.Base(f), line.Num, est.Name(), got, want)
				}
				l := Classify(tr, src.Dialect(), est)
				if tr.Get(0, transcript.RolledField) < 0 && got != l.Estimate {
					t.Fatalf("%s:%d: Contents = %d, Classify estimates %d", filepath.Base(f), line.Num, got, l.Estimate)
				}
			}
		}
	}
}

// TestContentsSkipsRollNotes: a roll note states the context it leaves;
// that is not its own content.
func TestContentsSkipsRollNotes(t *testing.T) {
	in := `{"role":"user","content":"` + strings.Repeat("x", 400) + `"}` + "\n" +
		`{"role":"assistant","content":"note","_rolled":{"by":"bs roll","tokens":5000,"kept_lines":0}}` + "\n"
	all, err := EstimateAll("-", strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if all != 100 {
		t.Errorf("EstimateAll = %d, want 100", all)
	}
}

// TestNewEstimator: the names --tokenizer takes, and the error that lists
// them.
func TestNewEstimator(t *testing.T) {
	for name, want := range map[string]string{"": "chars/4", "chars4": "chars/4", "o200k": "o200k", "cl100k": "cl100k"} {
		est, err := NewEstimator(name)
		if err != nil || est.Name() != want {
			t.Errorf("NewEstimator(%q) = %v, %v; want %s", name, est, err, want)
		}
	}
	if _, err := NewEstimator("bogus"); err == nil || !strings.Contains(err.Error(), "want chars4, o200k or cl100k") {
		t.Errorf("a bad name: %v", err)
	}
}
