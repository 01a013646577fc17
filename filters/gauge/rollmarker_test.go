package gauge

import (
	"bytes"
	"strings"
	"testing"
)

func TestLastRollMarker(t *testing.T) {
	m := string(rollMarker)
	cases := []struct {
		in   string
		want int
	}{
		{"", -1},
		{`{"text":"run bs roll --trigger 0.5"}`, -1}, // the key alone
		{`bs roll` + m[:len(m)-1], -1},               // a marker cut short
		{m, 0},                                       // at the start
		{`{"a":1,` + m + `:5}}`, 7},                  // inside a line
		{`{` + m + `:5}}` + "\n" + `{"x":"bs roll"}` + "\n{" + m + `:6}}`, 57}, // the last of two
	}
	for _, c := range cases {
		got := lastRollMarker([]byte(c.in))
		if got != c.want {
			t.Errorf("lastRollMarker(%q) = %d, want %d", c.in, got, c.want)
		}
		if want := bytes.LastIndex([]byte(c.in), rollMarker); got != want {
			t.Errorf("lastRollMarker(%q) = %d, bytes.LastIndex says %d", c.in, got, want)
		}
	}
	big := strings.Repeat(`{"text":"bs roll bs roll"}`+"\n", 50000) + "{" + m + ":1}}\n" + strings.Repeat("x", 1000)
	if got, want := lastRollMarker([]byte(big)), strings.LastIndex(big, m); got != want {
		t.Errorf("in a long text: %d, want %d", got, want)
	}
}
