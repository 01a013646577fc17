package restore

import "testing"

// TestParseSetExtractable: true, false or a count, written as JSON
// spells it; anything else, or no id, is refused.
func TestParseSetExtractable(t *testing.T) {
	for _, c := range []struct{ in, id, raw string }{
		{"k1=true", "k1", "true"},
		{"k1=false", "k1", "false"},
		{"k1=0", "k1", "0"},
		{"k1=+5", "k1", "5"},
		{"k1=007", "k1", "7"},
		{"a=b=3", "", ""}, // the id ends at the first =
		{"k1=-1", "", ""},
		{"k1=1.5", "", ""},
		{"k1=True", "", ""},
		{"k1=", "", ""},
		{"=true", "", ""},
		{"k1", "", ""},
	} {
		id, raw, ok := ParseSetExtractable(c.in)
		if ok != (c.id != "") || id != c.id || string(raw) != c.raw {
			t.Errorf("ParseSetExtractable(%q) = %q, %q, %v; want %q, %q", c.in, id, raw, ok, c.id, c.raw)
		}
	}
}
