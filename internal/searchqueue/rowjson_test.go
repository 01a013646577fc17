package searchqueue

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/bstools/bs/filters/index"
)

// appendQueued writes what encoding/json writes of a queued row, byte for
// byte where encoding/json escapes nothing JSON does not require, and a
// line that decodes to the same row otherwise (<, > and & as themselves,
// invalid UTF-8 as U+FFFD either way).
func TestAppendQueuedAsEncodingJSON(t *testing.T) {
	row := index.Row{Session: "/s/a b.jsonl", EntryID: "e1", Pointer: "/message/content/0/text", Blob: "sha256:ab", Kind: "tool_result", Tool: "bash", Time: "2026-12-07T00:00:00Z"}
	tricky := row
	tricky.Session, tricky.Tool, tricky.Text = "quote \" backslash \\ tab \t nl \n nul \x00", "<b>&amp;</b>", "bad \xff utf-8 and \u2028"
	with := row
	with.SessionID, with.Store, with.Text = "S-1", "/tmp/store", "the text"
	cases := []queued{
		{Row: row},
		{Row: with},
		{Row: tricky},
		{Row: row, From: "s3://bucket/bs?region=x&endpoint=http://127.0.0.1:1", Value: true},
		{Row: with, From: "/tmp/store", At: 893450, Len: 2853},
		{Row: row, At: -1},
	}
	for i, q := range cases {
		want, err := json.Marshal(q)
		if err != nil {
			t.Fatal(err)
		}
		got := appendQueued(nil, &q, nil)
		if got[len(got)-1] != '\n' {
			t.Errorf("case %d: %q does not end its line", i, got)
		}
		var a, b queued
		if err := json.Unmarshal(want, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(got, &b); err != nil {
			t.Fatalf("case %d: %q: %v", i, got, err)
		}
		if a != b {
			t.Errorf("case %d: decodes as %+v, encoding/json's as %+v", i, b, a)
		}
		if exact := !bytes.Contains(want, []byte(`\u`)); exact && string(got) != string(want)+"\n" {
			t.Errorf("case %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// A raw text goes in as it is, in Text's place.
func TestAppendQueuedRawText(t *testing.T) {
	q := queued{Row: index.Row{Blob: "sha256:ab", Kind: "entry"}, From: "/st", At: 3, Len: 4}
	got := string(appendQueued(nil, &q, []byte(`"a \u00e9 \"b\""`)))
	want := `{"Session":"","EntryID":"","Pointer":"","Blob":"sha256:ab","Kind":"entry","Tool":"","Time":"","Text":"a \u00e9 \"b\"","From":"/st","At":3,"Len":4}` + "\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
