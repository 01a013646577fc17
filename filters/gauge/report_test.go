package gauge

import (
	"fmt"
	"strings"
	"testing"
)

// TestWriteReport: JSON says first which file the object is of; a line
// is named only when asked.
func TestWriteReport(t *testing.T) {
	res := Result{Tokens: 162000, Window: 200000, Ratio: 0.81, Source: "usage", Estimator: "chars4"}
	cal := Calibration{Pairs: 2, MeanAbsError: 0.25, WorstError: -0.5, WorstLine: 6, TotalError: -1.0 / 3, Estimator: "chars4"}
	for _, tc := range []struct {
		name  string
		r     fmt.Stringer
		json  bool
		named bool
		want  string
	}{
		{"s.jsonl", res, false, false, "[Context: 81% | 162k/200k tokens]\n"},
		{"s.jsonl", res, false, true, "s.jsonl: [Context: 81% | 162k/200k tokens]\n"},
		{"-", res, true, false, `{"file":"-","tokens":162000,"window":200000,"ratio":0.81,"source":"usage","usage_tokens":0,"estimated_tokens":0,"estimator":"chars4"}` + "\n"},
		{"a.jsonl", cal, false, true, "a.jsonl: [Calibration: chars4 over 2 turns | overall -33% | per turn: mean 25%, worst -50% at line 6]\n"},
		{`a "b".jsonl`, cal, true, true, `{"file":"a \"b\".jsonl","pairs":2,"mean_abs_error":0.25,"worst_error":-0.5,"worst_line":6,"total_error":-0.3333333333333333,"real_tokens":0,"estimated_tokens":0,"scale":0,"estimator":"chars4"}` + "\n"},
	} {
		var b strings.Builder
		WriteReport(&b, tc.name, tc.r, tc.json, tc.named)
		if b.String() != tc.want {
			t.Errorf("WriteReport(%q, %v, json %v, named %v):\n%s\nwant\n%s", tc.name, tc.r, tc.json, tc.named, b.String(), tc.want)
		}
	}
}
