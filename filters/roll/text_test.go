package roll

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
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
		[]byte(`{bad`),
	}
	files, _ := filepath.Glob(filepath.Join("../../../shared/corpus", "*", "*.jsonl"))
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if len(sc.Bytes()) < 1<<20 {
				lines = append(lines, bytes.Clone(sc.Bytes()))
			}
		}
		fh.Close()
	}
	for _, l := range lines {
		raw := EntryTextJSON(l)
		var got string
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatalf("EntryTextJSON of %.80q is not a JSON string: %v", l, err)
		}
		if want := decodedText(l); got != want {
			t.Fatalf("EntryTextJSON of %.80q means %.80q, want %.80q", l, got, want)
		}
		if EntryText(l) != got {
			t.Fatalf("EntryText and EntryTextJSON of %.80q differ", l)
		}
	}
}
