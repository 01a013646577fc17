package transcript

import "testing"

// TestMarkHeldBy: a mark ending in a quote is a whole name or value, one
// without a prefix; a name mark is not found in a value or the other way
// round; names and values are compared decoded.
func TestMarkHeldBy(t *testing.T) {
	for _, c := range []struct {
		mark Mark
		line string
		want bool
	}{
		{Mark{Text: `usage"`, Name: true}, `{"message":{"usage":{"input":1}}}`, true},
		{Mark{Text: `usage"`, Name: true}, `{"last_usage":1,"usage_total":2}`, false},
		{Mark{Text: `usage"`, Name: true}, `{"type":"usage"}`, false},
		{Mark{Text: `usage"`, Name: true}, `{"us\u0061ge":1}`, true},
		{Mark{Text: `compact`}, `{"type":"compacted"}`, true},
		{Mark{Text: `compact`}, `{"compacted":true}`, false},
		{Mark{Text: `compact`}, `{"list":["compacted"]}`, false}, // not a member's value
		{Mark{Text: `session"`}, `{"type":"sessions"}`, false},
		{Mark{Text: `session"`}, `{"type":"\u0073ession"}`, true},
	} {
		var p Parser
		tr, err := p.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if got := c.mark.heldBy(tr); got != c.want {
			t.Errorf("%+v HeldBy(%s) = %v, want %v", c.mark, c.line, got, c.want)
		}
	}
}

// badSpendMark declares a spend mark that is not a whole string.
type badSpendMark struct{ generic }

func (badSpendMark) String() string    { return "bad-spend-mark" }
func (badSpendMark) Aliases() []string { return nil }
func (badSpendMark) Marks() Marks      { return Marks{Spend: []Mark{{Text: "usage", Name: true}}} }

// TestRegisterRefusesBadMarks: archive looks for a spend mark at the end
// of a string, so one without its closing quote would never be found.
func TestRegisterRefusesBadMarks(t *testing.T) {
	defer func() {
		if recover() == nil {
			Unregister(badSpendMark{})
			t.Error("Register took a spend mark without a closing quote")
		}
	}()
	Register(badSpendMark{})
}
