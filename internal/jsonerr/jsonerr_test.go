package jsonerr

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestWords(t *testing.T) {
	type args struct {
		ID    string   `json:"entry_id"`
		Keys  []string `json:"keys"`
		Limit int      `json:"limit"`
		Deep  struct {
			On bool `json:"on"`
		} `json:"deep"`
	}
	for in, want := range map[string]string{
		`{"entry_id":5}`:            "entry_id: want a string, got number",
		`{"keys":"content"}`:        "keys: want an array, got string",
		`{"limit":1.5}`:             "limit: want an integer, got number 1.5",
		`{"deep":{"on":"yes"}}`:     "deep.on: want true or false, got string",
		`5`:                         "want an object, got number",
		`{"entry_id":`:              "unexpected end of JSON input",
		`{"entry_id":"a"} trailing`: "invalid character 't' after top-level value",
	} {
		var a args
		err := json.Unmarshal([]byte(in), &a)
		if err == nil {
			t.Fatalf("%s: no error", in)
		}
		got := Words(err)
		if got != want {
			t.Errorf("%s: Words = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "Go ") || strings.Contains(got, "args") {
			t.Errorf("%s: a Go name in %q", in, got)
		}
	}
}
