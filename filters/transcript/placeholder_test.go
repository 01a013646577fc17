package transcript

import (
	"strings"
	"testing"
)

// TestIsRawPlaceholder: a string that is a placeholder (extract) or ends
// with one (trim) holds one; anything else does not.
func TestIsRawPlaceholder(t *testing.T) {
	for raw, want := range map[string]bool{
		`"[[extracted-abc]]"`: true,
		`"[Old tool result content cleared] [[extracted-8555a0a4]]"`:                                       true,
		`"head\n...\ntail\n\n[Tool result trimmed: kept first 1 chars] [[extracted-bs-0123456789abcdef]]"`: true,
		`"[[extracted-]]"`:             false,
		`"[[extracted-abc]] and more"`: false,
		`"text [[extracted-a\"b]]"`:    false,
		`"text [[extracted-a]b]]"`:     false,
		`"plain tool output"`:          false,
		`"]]"`:                         false,
		`""`:                           false,
		`"[[extracted-abc]]" `:         false,
		`"` + string(make([]byte, 300)) + `[[extracted-x]]"`: true,
	} {
		if got := IsRawPlaceholder([]byte(raw)); got != want {
			t.Errorf("IsRawPlaceholder(%q) = %v, want %v", raw, got, want)
		}
	}
}

// TestHoldsPlaceholder covers the shapes bs leaves: a string, a text block,
// and an array of exactly one such block (trim of a multi-block result).
func TestHoldsPlaceholder(t *testing.T) {
	var p Parser
	for src, want := range map[string]bool{
		`{"v":"[[extracted-a]]"}`:                                            true,
		`{"v":{"type":"text","text":"[[extracted-a]]"}}`:                     true,
		`{"v":[{"type":"text","text":"cleared [[extracted-a]]"}]}`:           true,
		`{"v":[{"type":"text","text":"x [[extracted-a]]"},{"type":"text"}]}`: false,
		`{"v":[]}`:                  false,
		`{"v":["[[extracted-a]]"]}`: false,
		`{"v":{"type":"text","text":["[[extracted-a]]"]}}`: false,
		`{"v":12}`: false,
	} {
		tr, err := p.Parse([]byte(src))
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.HoldsPlaceholder(tr.Get(0, "v")); got != want {
			t.Errorf("HoldsPlaceholder in %s = %v, want %v", src, got, want)
		}
	}
}

func TestPlaceholderSafe(t *testing.T) {
	for id, want := range map[string]bool{
		"10009aab": true, "0a1b2c3d-4e5f-6789-abcd-ef0123456789": true, "bs-<&>/é": true,
		"": false, "a]]b": false, "br[ack": false, `q"uo`: false, `back\slash`: false, "tab\tid": false,
		strings.Repeat("x", 300): false,
	} {
		if got := PlaceholderSafe(id); got != want {
			t.Errorf("PlaceholderSafe(%q) = %v, want %v", id, got, want)
		}
		// What PlaceholderSafe admits, IsRawPlaceholder finds again.
		if want && !IsRawPlaceholder(AppendQuote(nil, Placeholder(id))) {
			t.Errorf("IsRawPlaceholder misses the placeholder of %q", id)
		}
	}
}
