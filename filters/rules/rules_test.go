package rules

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestCompileError(t *testing.T) {
	for _, src := range []string{".[", "nosuchfunction(1)", "$undefined"} {
		_, err := Compile([]string{"true", src})
		var ce *CompileError
		if !errors.As(err, &ce) {
			t.Fatalf("Compile(%q) = %v, want a *CompileError", src, err)
		}
		if ce.Rule != src || ce.Unwrap() == nil || !strings.Contains(ce.Error(), src) {
			t.Errorf("Compile(%q): %#v names the wrong rule or no cause", src, ce)
		}
	}
	rs, err := Compile(nil)
	if err != nil || rs != nil {
		t.Errorf("Compile(nil) = %v, %v; want no rules and no error", rs, err)
	}
}

func TestEval(t *testing.T) {
	line := []byte(`{"id":"a1","message":{"role":"toolResult","toolName":"bash","n":3,"big":12345678901234567890,"f":1.5}}`)
	entry, err := Decode(line)
	if err != nil {
		t.Fatal(err)
	}
	unset := Verdict{Keep: -1}
	for _, tc := range []struct {
		rule string
		want Verdict
		err  string // a part of the error, "" for none
	}{
		{`.message.role == "toolResult"`, Verdict{Opinion: true, Force: true, Keep: -1}, ""},
		{`.message.toolName == "read"`, Verdict{Opinion: true, Never: true, Keep: -1}, ""},
		{`null`, unset, ""},
		{`empty`, unset, ""}, // no output: no opinion
		{`.message.n`, Verdict{Opinion: true, Keep: 3}, ""},     // an integer from the entry
		{`.message.n * 2`, Verdict{Opinion: true, Keep: 6}, ""}, // arithmetic stays integral
		{`4.0`, Verdict{Opinion: true, Keep: 4}, ""},            // a whole float is a count
		{`0`, Verdict{Opinion: true, Keep: 0}, ""},
		{`.message.f`, unset, "want true, false, an integer or null"},
		{`-1`, unset, "negative keep count"},
		{`.message.big`, unset, "want true, false"}, // too large for a count
		{`"yes"`, unset, "want true, false"},
		{`{}`, unset, "want true, false"},
		{`error("boom")`, unset, "boom"},
		{`true, false`, Verdict{Opinion: true, Force: true, Keep: -1}, ""}, // the first output decides
	} {
		rs, err := Compile([]string{tc.rule})
		if err != nil {
			t.Fatalf("Compile(%q): %v", tc.rule, err)
		}
		got, err := rs[0].Eval(entry)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want one containing %q", tc.rule, err, tc.err)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("%q", tc.rule)) {
			t.Errorf("%s: error %q does not name the rule", tc.rule, err)
		}
		if got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.rule, got, tc.want)
		}
	}
}

func TestDecode(t *testing.T) {
	v, err := Decode([]byte(`{"a":[1,2.5,{"b":-7}],"c":"x","d":null,"e":true}`))
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)
	a := m["a"].([]any)
	if _, ok := a[0].(int); !ok {
		t.Errorf("1 decoded as %T, want int (gojq's integer)", a[0])
	}
	if f, ok := a[1].(float64); !ok || f != 2.5 {
		t.Errorf("2.5 decoded as %T %v, want float64", a[1], a[1])
	}
	if n, ok := a[2].(map[string]any)["b"].(int); !ok || n != -7 {
		t.Errorf("nested -7 decoded as %v, want int -7", a[2])
	}
	for _, bad := range []string{`{"a":`, ``, `{"a":1}}`[:3]} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%q) succeeded, want an error", bad)
		}
	}
}

func TestInterpret(t *testing.T) {
	for _, tc := range []struct {
		v    any
		want Verdict
		ok   bool
	}{
		{nil, Verdict{Keep: -1}, true},
		{true, Verdict{Opinion: true, Force: true, Keep: -1}, true},
		{false, Verdict{Opinion: true, Never: true, Keep: -1}, true},
		{5, Verdict{Opinion: true, Keep: 5}, true},
		{5.0, Verdict{Opinion: true, Keep: 5}, true},
		{5.5, Verdict{Keep: -1}, false},
		{-2, Verdict{Keep: -1}, false},
		{-2.0, Verdict{Keep: -1}, false},
		{float64(1 << 31), Verdict{Keep: -1}, false},
		{"5", Verdict{Keep: -1}, false},
		{[]any{}, Verdict{Keep: -1}, false},
	} {
		got, err := Interpret(tc.v)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Interpret(%#v) = %+v, %v; want %+v, ok %v", tc.v, got, err, tc.want, tc.ok)
		}
	}
}
