package gauge

import (
	"errors"
	"reflect"
	"testing"

	"github.com/bstools/bs/filters/internal/binrec"
)

// TestMarkBinary: every field of a Mark, its _adjusted included, comes
// back from its binary form, and a cut form is malformed.
func TestMarkBinary(t *testing.T) {
	marks := []Mark{
		{},
		{kind: markOut},
		{kind: markKept, KeptFrom: true, at: 7, from: 3},
		{kind: markUsage, scale: 1.0625, measured: 12, at: 1 << 30},
		{kind: markNote, scale: 0.5, measured: -1, adj: &Adjustment{Removed: 120, Added: -4, Scale: 1.5, Measured: 9, Estimator: "chars/4"}},
		{kind: markUsage, adj: &Adjustment{}},
	}
	for _, m := range marks {
		b, err := m.AppendBinary([]byte("prefix"))
		if err != nil {
			t.Fatal(err)
		}
		var got Mark
		if err := got.UnmarshalBinary(b[len("prefix"):]); err != nil {
			t.Fatalf("%+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("read %+v, want %+v", got, m)
		}
		b = b[len("prefix"):]
		for cut := range len(b) {
			if err := got.UnmarshalBinary(b[:cut]); !errors.Is(err, binrec.ErrMalformed) {
				t.Errorf("%+v cut at %d: %v", m, cut, err)
			}
		}
	}
}
