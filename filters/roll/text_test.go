package roll

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

// decodedText is EntryText as it was first written, decoding each string
// and joining them: EntryTextJSON must mean exactly the same text.
func decodedText(body []byte) string {
	var p transcript.Parser
	t, err := p.Parse(body)
	if err != nil {
		return ""
	}
	var parts []string
	for i, n := range t.Nodes {
		if n.Kind == '"' && n.End-n.Start > 2 && (n.Name == nil || !skipKey[t.Key(i)]) {
			parts = append(parts, t.Str(i))
		}
	}
	return strings.Join(parts, " ")
}

func TestEntryTextJSONMeansTheDecodedText(t *testing.T) {
	lines := [][]byte{
		[]byte(`{"a":"x\"y\\z\n\u00e9\ud83d\ude00","data":"skipped","b":["",{"c":"\u0041\t"}],"n":1}`),
		[]byte(`{"signature":"s","text":"only this"}`),
		[]byte(`[]`),
		[]byte(`{"data" : "skipped" , "d\u0061ta":"skipped too","x":{"data":["kept"]},"y":[1,true,null,"z"]}`),
		[]byte(`"a top-level string"`),
		[]byte(`{"e\u0301":"\/\b\f\r\u00E9"}`),
		[]byte(`{bad`),
		[]byte(`{"a":"b`),
		[]byte(`{"a":"\x"}`),
		[]byte("{\"a\":\"\x01\"}"),
		[]byte("{\"a\":\"\xff\"}"),
	}
	lines = append(lines, corpustest.Lines(t, 1<<20-1)...)
	for _, l := range lines {
		checkEntryText(t, l)
	}
}

// checkEntryText checks that EntryTextJSON of a line is a JSON string,
// and one that means the decoded text when the line is JSON.
func checkEntryText(t *testing.T, l []byte) {
	t.Helper()
	raw := EntryTextJSON(l)
	var got string
	if err := json.Unmarshal(raw, &got); err != nil || !utf8.Valid(raw) {
		t.Fatalf("EntryTextJSON of %.80q is %.80q, not a JSON string (%v)", l, raw, err)
	}
	var p transcript.Parser
	if _, err := p.Parse(l); err != nil {
		return // not JSON: any text will do
	}
	if want := decodedText(l); got != want {
		t.Fatalf("EntryTextJSON of %.80q means %.80q, want %.80q", l, got, want)
	}
	if EntryText(l) != got {
		t.Fatalf("EntryText and EntryTextJSON of %.80q differ", l)
	}
}

func FuzzEntryTextJSON(f *testing.F) {
	f.Add([]byte(`{"a":"x\"y\\z\n\u00e9","data":"s","b":["",{"c":"\u0041\t"}],"n":1}`))
	f.Add([]byte(`{"signature" :"s", "text": "t"}`))
	f.Add([]byte(`["a", "b\u12"]`))
	f.Fuzz(func(t *testing.T, l []byte) { checkEntryText(t, l) })
}

// BenchmarkEntryTextJSON runs over the corpus lines a roll would index.
func BenchmarkEntryTextJSON(b *testing.B) {
	lines := corpustest.Lines(b, 1<<20-1)
	n := 0
	for _, l := range lines {
		n += len(l)
	}
	b.SetBytes(int64(n))
	for b.Loop() {
		for _, l := range lines {
			EntryTextJSON(l)
		}
	}
}
