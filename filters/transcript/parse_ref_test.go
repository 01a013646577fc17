package transcript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/bstools/bs/internal/corpustest"
)

// refParser is the parser as it was before Parse became a hand-written
// scanner: jsontext's decoder, walked into a tree. FuzzParse holds Parse to
// its verdicts and spans.
type refParser struct {
	dec  *jsontext.Decoder
	tree Tree
}

func (p *refParser) Parse(line []byte) (*Tree, error) {
	// jsontext, told to allow invalid UTF-8 so that it lets such escapes
	// through, would let raw invalid bytes through too: those are checked
	// here, at memory speed.
	if !utf8.Valid(line) {
		return nil, errInvalidUTF8
	}
	// A bytes.Buffer lets the decoder read line in place, without a copy.
	if p.dec == nil {
		p.dec = jsontext.NewDecoder(bytes.NewBuffer(line), jsontext.AllowInvalidUTF8(true))
	} else {
		p.dec.Reset(bytes.NewBuffer(line), jsontext.AllowInvalidUTF8(true))
	}
	p.tree.Src = line
	p.tree.Nodes = p.tree.Nodes[:0]
	if _, err := p.value(-1, nil, 0); err != nil {
		return nil, err
	}
	if _, err := p.dec.ReadToken(); err != io.EOF {
		if err == nil {
			return nil, errTrailing
		}
		return nil, err
	}
	return &p.tree, nil
}

func (p *refParser) value(parent int, name []byte, keyStart int) (int, error) {
	d := p.dec
	idx := len(p.tree.Nodes)
	kind := d.PeekKind()
	if kind == 0 {
		_, err := d.ReadToken()
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return -1, err
	}
	p.tree.Nodes = append(p.tree.Nodes, Node{Kind: kind, KeyStart: keyStart, Name: name, Parent: parent, First: -1, Next: -1, Last: -1})
	switch kind {
	case '{', '[':
		if _, err := d.ReadToken(); err != nil {
			return -1, err
		}
		p.tree.Nodes[idx].Start = int(d.InputOffset()) - 1
		prev, children := -1, 0
		for {
			k := d.PeekKind()
			if k == '}' || k == ']' {
				if _, err := d.ReadToken(); err != nil {
					return -1, err
				}
				break
			}
			if k == 0 {
				_, err := d.ReadToken()
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return -1, err
			}
			var childName []byte
			childKeyStart := 0
			if kind == '{' {
				n, err := d.ReadValue()
				if err != nil {
					return -1, err
				}
				childName = p.tree.Src[int(d.InputOffset())-len(n) : d.InputOffset()]
				childKeyStart = int(d.InputOffset()) - len(n)
			}
			c, err := p.value(idx, childName, childKeyStart)
			if err != nil {
				return -1, err
			}
			p.tree.Nodes[c].Index = children
			children++
			if prev < 0 {
				p.tree.Nodes[idx].First = c
			} else {
				p.tree.Nodes[prev].Next = c
			}
			prev = c
		}
		p.tree.Nodes[idx].Last = prev
		p.tree.Nodes[idx].End = int(d.InputOffset())
	default:
		v, err := d.ReadValue()
		if err != nil {
			return -1, err
		}
		end := int(d.InputOffset())
		p.tree.Nodes[idx].Start = end - len(v)
		p.tree.Nodes[idx].End = end
		if kind == '"' {
			// What Parse counts on its way (Tree.StringChars) of an
			// ASCII string without a surrogate pair, counted as
			// StringChars does.
			if !slices.ContainsFunc(v, func(c byte) bool { return c >= utf8.RuneSelf }) && stringChars(v) == utf16Units(v) {
				p.tree.Nodes[idx].chars = int32(stringChars(v)) + 1
			}
		}
	}
	return idx, nil
}

// checkParse fails unless Parse and the reference agree on line: both
// refuse it, or both accept it with the same tree.
func checkParse(t *testing.T, line []byte) {
	t.Helper()
	var p Parser
	var ref refParser
	got, err := p.Parse(line)
	want, refErr := ref.Parse(line)
	switch {
	case (err == nil) != (refErr == nil):
		t.Fatalf("Parse(%.200q): error %v, jsontext's %v", line, err, refErr)
	case err == nil && !reflect.DeepEqual(got.Nodes, want.Nodes):
		for i := range min(len(got.Nodes), len(want.Nodes)) {
			if !reflect.DeepEqual(got.Nodes[i], want.Nodes[i]) {
				t.Fatalf("Parse(%.200q): node %d is %+v, jsontext's %+v", line, i, got.Nodes[i], want.Nodes[i])
			}
		}
		t.Fatalf("Parse(%.200q): %d nodes, jsontext's %d", line, len(got.Nodes), len(want.Nodes))
	}
}

// TestParseAsJSONText holds Parse to jsontext on every corpus line and on
// lines chosen for the grammar's corners.
func TestParseAsJSONText(t *testing.T) {
	lines := []string{
		``, ` `, `{}`, `[]`, ` {"a" : [1, {"b/c~d":"x\"y"}, true], "e":{}, "f":null} `,
		`0`, `-0`, `-`, `01`, `1.`, `1.5`, `1e`, `1e+`, `1E-7`, `-12.5e10`, `.5`, `+1`, `1.5.2`,
		`true`, `tru`, `truex`, `nul`, `null`, `false `, `[true,false,null]`, `[1,]`, `[,1]`, `{"a":1,}`,
		`{"a"}`, `{"a":}`, `{a:1}`, `{"a" 1}`, `{"a":1 "b":2}`, `[1 2]`, `"x"`, `"x`, `"\x"`, `"\u12"`, `"\u12g4"`,
		`"\ud83d"`, `"\ud83d\ude00"`, "\"a\tb\"", "\"a\x01b\"", `{"a":1}{"b":2}`, `{"a":1} {"b":2}`, `{"a":1}x`, `{"a":1}}`,
		`{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"a":{"a":1},"b":{"a":2}}`, `{"\ud800":1,"\udbff":2}`,
		"{\"a\":\"\xff\"}", "\xef\xbb\xbf{}", "{\"a\":1}\r\n", "\t[ 1 ,\n2 ]\r",
		// Characters counted on the way (Tree.StringChars): a high
		// surrogate pairs with the escape after it, whatever that is;
		// escapes and multi-byte characters straddle words.
		`"\ud800\ud800\udc00"`, `"\ud83d\ude00\ud83d"`, `"ab\ud83dcd"`, `"1234567\\\\89\n\"\u00e9"`,
		`{"a":"d\u00e9j\u00e0 vu, \"quoted\"\n\ttab"}`, "\"r\u00e9sum\u00e9 \u00e9t\u00e9 \u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 \U0001F600\"",
	}
	many := []string{}
	for i := range 40 {
		many = append(many, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	lines = append(lines, "{"+strings.Join(many, ",")+"}", "{"+strings.Join(many, ",")+`,"k33":0}`,
		"{"+strings.Join(many, ",")+`,"k\u0033":0}`, "{"+strings.Join(many[:16], ",")+`,"k3":0}`)
	for _, depth := range []int{9999, 10000, 10001} {
		lines = append(lines, strings.Repeat("[", depth)+strings.Repeat("]", depth))
		lines = append(lines, strings.Repeat(`{"a":`, depth)+"1"+strings.Repeat("}", depth))
	}
	for _, l := range lines {
		checkParse(t, []byte(l))
	}
	for _, l := range corpustest.Lines(t, 4<<20) {
		checkParse(t, l)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":[1,{"b":"x\"y"}],"c":-1.5e3,"d":true,"e":null}`, `{"a":1,"\u0061":2}`, `[1,,2]`, `"\ud83d"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkParse(t, line) })
}

// utf16Units is the UTF-16 length of the JSON string raw, decoded.
func utf16Units(raw []byte) int {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return -1
	}
	return len(utf16.Encode([]rune(s)))
}
