package trim

import (
	"testing"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// TestAdjustAt checks that a usage line's new _adjusted, written where
// the scan found its place (kept in the plan's records and read back),
// is the line the parse of it at write time gives: inserted into an
// empty root, after the root's members, or replacing the one it has.
func TestAdjustAt(t *testing.T) {
	adj := &gauge.Adjustment{Removed: 1200, Added: 30, Scale: 1.25, Measured: 4, Estimator: "chars4"}
	recs, err := newRecords()
	if err != nil {
		t.Fatal(err)
	}
	defer recs.Close()
	lines := []string{
		`{}`,
		`{"type":"message","message":{"role":"assistant","usage":{"input":10}}}`,
		`{"type":"message","_adjusted":{"removed":3},"message":{"usage":{"input":10}}}` + "\n",
		`{"message":{"usage":{"input":10}},"_adjusted":{"removed":3,"added":1}}` + "\r\n",
		` { "a" : 1 } `,
	}
	for _, line := range lines {
		var p transcript.Parser
		tree, err := p.Parse([]byte(line))
		if err != nil {
			t.Fatal(err)
		}
		f := classify(tree, transcript.Fallback(), false)
		if err := recs.add(&rec{n: len(line), entry: true, adjustAt: f.adjustAt}, nil); err != nil {
			t.Fatal(err)
		}
	}
	err = recs.each(func(i int, r *rec, _ *resLine) error {
		line := []byte(lines[i])
		got, err := change(nil, line, nil, adj, r.adjustAt, &Options{})
		if err != nil {
			t.Fatal(err)
		}
		if r.adjustAt.Start == 0 && r.adjustAt.End == 0 {
			t.Fatalf("%s: no place for _adjusted kept", line)
		}
		want, err := change(nil, line, nil, adj, transcript.Edit{}, &Options{}) // parsed
		if err != nil {
			t.Fatal(err)
		}
		if string(got.out) != string(want.out) {
			t.Errorf("%s:\n kept place: %s\n parsed:     %s", line, got.out, want.out)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
