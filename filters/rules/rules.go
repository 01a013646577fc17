// Package rules evaluates the jq predicates that decide, per entry, what
// _extractable would say when the entry does not say it itself.
package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/itchyny/gojq"
)

// CompileError is a rule that does not compile; it maps to exit code 3.
type CompileError struct {
	Rule string
	Err  error
}

func (e *CompileError) Error() string { return fmt.Sprintf("rule %q: %v", e.Rule, e.Err) }
func (e *CompileError) Unwrap() error { return e.Err }

// Verdict is what a rule says about an entry.
type Verdict struct {
	Opinion bool // false: no opinion (null), the next rule or the defaults decide
	Never   bool // false: never extract
	Force   bool // true: extract regardless of type, length, age and protection
	Keep    int  // an integer N: keep for N messages; -1 when not set
}

// Rule is one compiled jq predicate. Gojq's output is only ever used for its
// truthiness or number, never written back: it sorts object keys.
type Rule struct {
	Source string
	code   *gojq.Code
}

// Compile compiles each source once.
func Compile(sources []string) ([]*Rule, error) {
	var rs []*Rule
	for _, src := range sources {
		q, err := gojq.Parse(src)
		if err != nil {
			return nil, &CompileError{Rule: src, Err: err}
		}
		code, err := gojq.Compile(q)
		if err != nil {
			return nil, &CompileError{Rule: src, Err: err}
		}
		rs = append(rs, &Rule{Source: src, code: code})
	}
	return rs, nil
}

// Decode turns an entry's bytes into the value jq rules see.
func Decode(line []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return normalize(v), nil
}

// normalize turns json.Number into the int or float64 gojq expects.
func normalize(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	case json.Number:
		if i, err := x.Int64(); err == nil && i >= math.MinInt && i <= math.MaxInt {
			return int(i)
		}
		f, _ := x.Float64()
		return f
	}
	return v
}

// Eval runs the rule on an entry and interprets its first output the way
// _extractable is interpreted. A rule that errors or yields anything but
// true, false, an integer or null is an error; callers warn and treat it as
// no opinion.
func (r *Rule) Eval(entry any) (Verdict, error) {
	iter := r.code.Run(entry)
	v, ok := iter.Next()
	if !ok {
		return Verdict{Keep: -1}, nil
	}
	if err, isErr := v.(error); isErr {
		return Verdict{Keep: -1}, fmt.Errorf("rule %q: %v", r.Source, err)
	}
	verdict, err := Interpret(v)
	if err != nil {
		return Verdict{Keep: -1}, fmt.Errorf("rule %q: %v", r.Source, err)
	}
	return verdict, nil
}

// Interpret reads an _extractable value: true, false, an integer, or null.
func Interpret(v any) (Verdict, error) {
	switch x := v.(type) {
	case nil:
		return Verdict{Keep: -1}, nil
	case bool:
		if x {
			return Verdict{Opinion: true, Force: true, Keep: -1}, nil
		}
		return Verdict{Opinion: true, Never: true, Keep: -1}, nil
	case int:
		if x < 0 {
			return Verdict{Keep: -1}, fmt.Errorf("negative keep count %d", x)
		}
		return Verdict{Opinion: true, Keep: x}, nil
	case float64:
		if x >= 0 && x == math.Trunc(x) && x < 1<<31 {
			return Verdict{Opinion: true, Keep: int(x)}, nil
		}
	}
	return Verdict{Keep: -1}, fmt.Errorf("got %v, want true, false, an integer or null", v)
}
