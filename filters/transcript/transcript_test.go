package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf16"

	"github.com/bstools/bs/internal/corpustest"
)

func TestReaderKeepsEveryByte(t *testing.T) {
	long := strings.Repeat("x", 3<<20) // longer than the reader's buffer
	for _, in := range []string{"", "a", "a\n", "a\nb", "a\nb\n", "\n\n", "a\r\nb\r\n", long + "\n" + long} {
		r := NewReader(strings.NewReader(in))
		var out []byte
		var all []Line
		n := 0
		for {
			l, err := r.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			n++
			if l.Num != n {
				t.Fatalf("line number %d, want %d", l.Num, n)
			}
			out = l.appendTo(out)
			all = append(all, l)
		}
		if string(out) != in {
			t.Errorf("reading %q gave back %q", trunc(in), trunc(string(out)))
		}
		// Bytes gives the same, and each line's bytes stay its own while
		// later lines are read.
		out = out[:0]
		for _, l := range all {
			out = append(out, l.Bytes()...)
		}
		if string(out) != in {
			t.Errorf("Bytes of %q gave back %q", trunc(in), trunc(string(out)))
		}
	}
}

// TestReaderHandsOverHugeLines: a line longer than maxKeptLong is read
// into memory of its own, which stays intact while later lines are read
// (owned), its line feed after it; shorter ones are views the next read
// reuses.
func TestReaderHandsOverHugeLines(t *testing.T) {
	huge := strings.Repeat("h", 2*maxKeptLong+1) // past maxKeptLong by more than the buffer
	long := strings.Repeat("l", 300<<10)         // longer than the buffer, reused
	in := "x\n" + huge + "\n" + long + "\n" + "short\n" + huge
	// A huge line is read again at its offset where the input allows (a
	// strings.Reader, started past its first bytes, as a file can be), and
	// gathered from pieces where it does not (a pipe), which wait in a
	// temp file past spillParts.
	seekable := strings.NewReader(in)
	seekable.Seek(2, io.SeekStart)
	defer func(old int) { spillParts = old }(spillParts)
	for _, name := range []string{"seekable", "pipe", "pipe spilled"} {
		src := io.Reader(struct{ io.Reader }{strings.NewReader(in[2:])})
		spillParts = 16 << 20
		switch name {
		case "seekable":
			src = seekable
		case "pipe spilled":
			spillParts = 100 << 10
		}
		r := NewReader(src)
		var kept []Line
		var out []byte
		for {
			l, err := r.NextView()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(l.Body) > maxKeptLong && !r.owned() || len(l.Body) < 300<<10 && r.owned() {
				t.Errorf("%s: line %d of %d bytes: Owned %v", name, l.Num, len(l.Body), r.owned())
			}
			out = l.appendTo(out)
			if r.owned() {
				if l.Newline && &l.Bytes()[0] != &l.Body[0] {
					t.Errorf("%s: line %d: Bytes copied a line whose line feed follows it", name, l.Num)
				}
				kept = append(kept, l)
			}
		}
		if string(out) != in[2:] {
			t.Fatalf("%s: NextView did not give the input back", name)
		}
		if len(kept) != 2 || string(kept[0].Body) != huge || string(kept[1].Body) != huge || !kept[0].Newline || kept[1].Newline {
			t.Fatalf("%s: a huge line's memory did not stay as it was read", name)
		}
	}
}

// TestLongPartsSpill: the pieces of a long line from a pipe wait in memory
// up to spillParts, and past it in a temp file (none of them in memory
// then); where no temp file can be made, they stay in memory. Either way
// the line comes back whole.
func TestLongPartsSpill(t *testing.T) {
	defer func(old int) { spillParts = old }(spillParts)
	spillParts = 10
	pieces := []string{"0123", "4567", "89ab", "cdef"}
	for _, tmp := range []string{t.TempDir(), filepath.Join(t.TempDir(), "missing")} {
		t.Setenv("TMPDIR", tmp)
		var p longParts
		for i, piece := range pieces[:3] {
			if err := p.add([]byte(piece)); err != nil {
				t.Fatal(err)
			}
			if i == 1 && (p.f != nil || len(p.mem) != 2) {
				t.Fatalf("TMPDIR %s: 8 bytes, within spillParts: file %v, %d pieces in memory; want them all in memory", tmp, p.f != nil, len(p.mem))
			}
		}
		spilled := p.f != nil
		if canWrite := !strings.HasSuffix(tmp, "missing"); spilled != canWrite || spilled && len(p.mem) != 0 || !spilled && !p.noFile {
			t.Fatalf("TMPDIR %s: past spillParts: file %v, %d pieces in memory, noFile %v", tmp, spilled, len(p.mem), p.noFile)
		}
		line, err := p.line([]byte(pieces[3]))
		if err != nil || string(line) != strings.Join(pieces, "") {
			t.Fatalf("TMPDIR %s: line %q, %v", tmp, line, err)
		}
	}
}

func TestLineBytesCopiesWhenItMust(t *testing.T) {
	buf := []byte("ab\ncd!")
	cases := []struct {
		line Line
		want string
		// shares reports whether the result may share the body's memory.
		shares bool
	}{
		{Line{Body: buf[:2], Newline: true}, "ab\n", true},
		{Line{Body: buf[3:5], Newline: true}, "cd\n", false}, // '!' follows, not a line feed
		{Line{Body: buf[3:5:5], Newline: true}, "cd\n", false},
		{Line{Body: buf[3:5]}, "cd", true},
	}
	for _, c := range cases {
		got := c.line.Bytes()
		if string(got) != c.want {
			t.Errorf("Bytes of %q = %q, want %q", c.line.Body, got, c.want)
		}
		if shared := len(got) > 0 && &got[0] == &c.line.Body[0]; shared != c.shares {
			t.Errorf("Bytes of %q shares memory: %v, want %v", c.line.Body, shared, c.shares)
		}
	}
	if string(buf) != "ab\ncd!" {
		t.Errorf("Bytes wrote into its line: %q", buf)
	}
}

func TestSpliceLine(t *testing.T) {
	edits := func() []Edit {
		return []Edit{{Start: 4, End: 7, Text: []byte(`"x"`)}, {Start: 0, End: 0, Text: []byte(" ")}}
	}
	for _, nl := range []bool{true, false} {
		l := Line{Body: []byte(`{"a":"bc"}`), Newline: nl}
		got, err := SpliceLine(l, edits())
		if err != nil {
			t.Fatal(err)
		}
		want, _ := Splice(nil, l.Body, edits())
		if nl {
			want = append(want, '\n')
		}
		if !bytes.Equal(got, want) {
			t.Errorf("SpliceLine(newline %v) = %q, want %q", nl, got, want)
		}
		pieces, err := SplicePieces(l, edits())
		if err != nil {
			t.Fatal(err)
		}
		if joined := bytes.Join(pieces, nil); !bytes.Equal(joined, want) {
			t.Errorf("SplicePieces(newline %v) = %q, want %q", nl, joined, want)
		}
	}
	bad := []Edit{{Start: 2, End: 5}, {Start: 4, End: 6}}
	if _, err := SplicePieces(Line{Body: []byte(`{"a":"bc"}`)}, bad); err == nil {
		t.Error("SplicePieces took overlapping edits")
	}
}

func trunc(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func TestParseRejects(t *testing.T) {
	var p Parser
	for _, in := range []string{
		`{"a":1}{"b":2}`,   // glued
		`{"a":1} {"b":2}`,  // two values
		`{"a":"x`,          // truncated
		"{\"a\":\"\xff\"}", // invalid UTF-8
		`{"a":1,"a":2}`,    // duplicate names make pointers ambiguous
		`{"a":01}`,
		``,
	} {
		if _, err := p.Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
}

// TestParseTakesLoneSurrogateEscapes: a \u escape of half a surrogate
// pair, as Node's JSON.stringify writes for a string cut inside an emoji,
// is valid JSON: the line parses and the half decodes as U+FFFD. Raw bytes
// that are not UTF-8, an encoded surrogate among them, are still refused.
func TestParseTakesLoneSurrogateEscapes(t *testing.T) {
	var p Parser
	for in, want := range map[string]string{
		`{"a":"cut \ud83d"}`:         "cut \uFFFD",
		`{"a":"\ude00 and \ud83d!"}`: "\uFFFD and \uFFFD!",
		`{"a":"\ud83d\ude00"}`:       "😀",
	} {
		tr, err := p.Parse([]byte(in))
		if err != nil {
			t.Fatalf("Parse(%s): %v", in, err)
		}
		if got := tr.Str(tr.Get(0, "a")); got != want {
			t.Errorf("Str of %s = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"{\"a\":\"\xed\xa0\xbd\"}", "{\"a\":\"\xff\"}", "{\"\xff\":1}"} {
		if _, err := p.Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
}

func TestTreeSpansAndPointers(t *testing.T) {
	in := []byte(` {"a" : [1, {"b/c~d":"x\"y"}, true], "e":{}, "f":null} `)
	var p Parser
	tr, err := p.Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	for ptr, want := range map[string]string{
		"":             `{"a" : [1, {"b/c~d":"x\"y"}, true], "e":{}, "f":null}`,
		"/a":           `[1, {"b/c~d":"x\"y"}, true]`,
		"/a/0":         `1`,
		"/a/1/b~1c~0d": `"x\"y"`,
		"/a/2":         `true`,
		"/e":           `{}`,
		"/f":           `null`,
	} {
		n, err := tr.Resolve(ptr)
		if err != nil {
			t.Fatalf("Resolve(%q): %v", ptr, err)
		}
		if got := string(tr.Raw(n)); got != want {
			t.Errorf("Resolve(%q) = %s, want %s", ptr, got, want)
		}
		if got := tr.Pointer(n); got != ptr {
			t.Errorf("Pointer = %q, want %q", got, ptr)
		}
	}
	for _, bad := range []string{"/x", "/a/3", "/a/01", "/a/-1", "a", "/f/g"} {
		if _, err := tr.Resolve(bad); err == nil {
			t.Errorf("Resolve(%q) succeeded", bad)
		}
	}
	if got := tr.Str(tr.Path(0, "a")); got != "" {
		t.Errorf("Str of an array = %q", got)
	}
}

func TestStringChars(t *testing.T) {
	for _, s := range []string{"", "abc", "café", "😀", "a\nb\t\"c\\", "\u2028", strings.Repeat("é😀x", 100)} {
		raw, _ := json.Marshal(s)
		want := len([]rune(s))
		if got := stringChars(raw); got != want {
			t.Errorf("StringChars(%s) = %d, want %d", raw, got, want)
		}
		for n := 0; n <= want+1; n++ {
			if got := AtLeastChars(raw, n); got != (want >= n) {
				t.Errorf("AtLeastChars(%s, %d) = %v", raw, n, got)
			}
		}
	}
	// An escaped surrogate pair is one character.
	if got := stringChars([]byte(`"\ud83d\ude00x"`)); got != 2 {
		t.Errorf("surrogate pair counted as %d characters, want 2", got)
	}
}

func TestMemberInsertRemoveAreInverse(t *testing.T) {
	for _, in := range []string{`{}`, `{"a":1}`, `{ "a" : 1 , "b":[2] }`, "{\"a\":1\n}"} {
		var p Parser
		tr, err := p.Parse([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		ins := tr.InsertMember(0, "_x", []byte(`{"k":"v"}`))
		out, err := Splice(nil, []byte(in), []Edit{ins})
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(out) {
			t.Fatalf("insert into %s gave invalid %s", in, out)
		}
		tr2, err := p.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		back, err := Splice(nil, out, []Edit{tr2.RemoveMember(tr2.Get(0, "_x"))})
		if err != nil {
			t.Fatal(err)
		}
		if string(back) != in {
			t.Errorf("insert then remove on %q gave %q", in, back)
		}
	}
	// Removing the first of several members keeps the object valid.
	var p Parser
	in := []byte(`{"a":1, "b":2}`)
	tr, _ := p.Parse(in)
	out, _ := Splice(nil, in, []Edit{tr.RemoveMember(tr.Get(0, "a"))})
	if string(out) != `{"b":2}` {
		t.Errorf("removing the first member gave %s", out)
	}
}

func TestSpliceRejectsOverlap(t *testing.T) {
	src := []byte("0123456789")
	if _, err := Splice(nil, src, []Edit{{Start: 2, End: 5}, {Start: 4, End: 6}}); err == nil {
		t.Error("overlapping edits accepted")
	}
	if _, err := Splice(nil, src, []Edit{{Start: 8, End: 12}}); err == nil {
		t.Error("edit past the end accepted")
	}
	got, err := Splice(nil, src, []Edit{{Start: 5, End: 5, Text: []byte("b")}, {Start: 0, End: 1, Text: []byte("X")}, {Start: 5, End: 5, Text: []byte("c")}})
	if err != nil || string(got) != "X1234bc56789" {
		t.Errorf("Splice = %q, %v", got, err)
	}
}

func TestKinds(t *testing.T) {
	k, err := ParseKinds("tool_call, image")
	if err != nil || k != ToolCall|Image || k.String() != "tool_call,image" {
		t.Errorf("ParseKinds = %v (%s), %v", k, k, err)
	}
	if _, err := ParseKinds("tool_output"); err == nil {
		t.Error("unknown kind accepted")
	}
}

// FuzzSplice checks that parsing arbitrary bytes never panics, and that
// on any object an inserted member can be spliced out again exactly.
func FuzzSplice(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c"}]}`, `{"a":1}{"b":2}`, `[1,2]`, `"x"`, "{\"a\":\"\\u00e9\"}", `{"a":1,"a":2}`} {
		f.Add([]byte(s), 0, 0)
	}
	f.Fuzz(func(t *testing.T, in []byte, start, end int) {
		// Arbitrary edits are either applied or refused, never a panic.
		_, _ = Splice(nil, in, []Edit{{Start: start, End: end, Text: []byte("z")}})
		var p Parser
		tr, err := p.Parse(in)
		if err != nil || tr.Nodes[0].Kind != '{' || tr.Get(0, "_extracted") >= 0 {
			return
		}
		for i := range tr.Nodes {
			ptr := tr.Pointer(i)
			if n, err := tr.Resolve(ptr); err != nil || n != i {
				t.Fatalf("Resolve(Pointer(%d)=%q) = %d, %v", i, ptr, n, err)
			}
		}
		out, err := Splice(nil, in, []Edit{tr.InsertMember(0, "_extracted", []byte(`{}`))})
		if err != nil {
			t.Fatal(err)
		}
		tr2, err := p.Parse(out)
		if err != nil {
			t.Fatalf("insert made %q invalid: %v", out, err)
		}
		back, err := Splice(nil, out, []Edit{tr2.RemoveMember(tr2.Get(0, "_extracted"))})
		if err != nil || !bytes.Equal(back, in) {
			t.Fatalf("insert+remove changed %q into %q (%v)", in, back, err)
		}
	})
}

func TestStringCharsWithoutEscapes(t *testing.T) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "café au lait, s'il vous plaît", "😀😀😀😀😀😀😀😀😀", "日本語のテキストです。", strings.Repeat("é", 33) + "x"} {
		if got, want := stringChars([]byte(`"`+s+`"`)), len([]rune(s)); got != want {
			t.Errorf("StringChars of %q = %d, want %d", s, got, want)
		}
	}
}

func TestStrPrefix(t *testing.T) {
	for _, tc := range []struct {
		json string
		max  int
		want string
	}{
		{`"short"`, 10, "short"},
		{`"abcdefghij"`, 4, "abcd"},
		{`"ab\ncdef"`, 3, "ab"},
		{`"ab\ncdef"`, 4, "ab\n"},
		{`"ab\ncdef"`, 5, "ab\nc"},
		{`"a\u00e9bcdefgh"`, 6, "a"},
		{`"a\u00e9bcdefgh"`, 7, "aé"},
		{`"héllo world"`, 2, "h"},
		{`"héllo world"`, 3, "hé"},
		{`"x\ud83d\ude00yyyyyyyyyyy"`, 7, "x"},
		{`"x\ud83d\ude00yyyyyyyyyyy"`, 13, "x😀"},
		{`"\\\\\\\\\\\\"`, 3, `\`},
	} {
		var p Parser
		tr, err := p.Parse([]byte(tc.json))
		if err != nil {
			t.Fatal(err)
		}
		if got := tr.StrPrefix(0, tc.max); got != tc.want {
			t.Errorf("StrPrefix(%s, %d) = %q, want %q", tc.json, tc.max, got, tc.want)
		}
		if full := tr.Str(0); !strings.HasPrefix(full, tr.StrPrefix(0, tc.max)) {
			t.Errorf("StrPrefix(%s) is not a prefix of %q", tc.json, full)
		}
	}
}

// TestStringCharsMatchesDecoding: on random strings of ASCII, escapes,
// multi-byte characters and escaped surrogate pairs, encoded plainly or
// with \u escapes, StringChars is the number of characters the JSON string
// decodes to, and AtLeastChars agrees with it at every n around it.
func TestStringCharsMatchesDecoding(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	pieces := []string{"a", "Z", " ", "\"", "\\", "\n", "\t", "/", "é", "日", "😀", "\u2028", "\x01", "~"}
	for range 3000 {
		var sb strings.Builder
		for range r.IntN(40) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		raw := []byte{'"'}
		for _, c := range s {
			switch {
			case r.IntN(4) == 0 && c > 0xFFFF:
				hi, lo := utf16.EncodeRune(c)
				raw = fmt.Appendf(raw, `\u%04x\u%04X`, hi, lo)
			case r.IntN(4) == 0 && c <= 0xFFFF:
				raw = fmt.Appendf(raw, `\u%04x`, c)
			default:
				q, _ := json.Marshal(string(c))
				raw = append(raw, q[1:len(q)-1]...)
			}
		}
		raw = append(raw, '"')
		want := len([]rune(s))
		if got := stringChars(raw); got != want {
			t.Fatalf("StringChars(%s) = %d, want %d", raw, got, want)
		}
		for n := max(0, want-9); n <= want+9; n++ {
			if got := AtLeastChars(raw, n); got != (want >= n) {
				t.Fatalf("AtLeastChars(%s, %d) = %v, want %v", raw, n, got, want >= n)
			}
		}
	}
}

func BenchmarkStringChars(b *testing.B) {
	text := strings.Repeat(`grep result line with \"quotes\" and a tab\t and more words\n`, 200)
	raw := []byte(`"` + text + `"`)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		stringChars(raw)
	}
}

// BenchmarkStringCharsEscaped counts text whose escapes fall at random, as
// in agent text, so that whether a word holds one cannot be predicted: 16
// MiB of it, since a branch predictor learns the pattern of a short text
// counted over and over.
func BenchmarkStringCharsEscaped(b *testing.B) {
	raw := corpustest.EscapedText(16<<20, 1)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		stringChars(raw)
	}
}

// TestKeyName: the key seed 000 names for a value is the entry's member
// that holds it, below the dialect's envelope.
func TestKeyName(t *testing.T) {
	for _, c := range []struct {
		d         Dialect
		ptr, want string
	}{
		{OpenClaw, "/message/content/0/text", "content"},
		{OpenClaw, "/message/content/1/arguments/command", "content"},
		{ClaudeCode, "/message/content/0/content", "content"},
		{ClaudeCode, "/toolUseResult/stdout", "toolUseResult"},
		{BrainSurgeon, "/output", "output"},
		{BrainSurgeon, "/message", "message"},
		{BrainSurgeon, "/message/content/0/text", "content"},
		{Codex, "/payload/output", "output"},
		{Codex, "/payload/arguments", "arguments"},
		{Generic, "/messages/2/content", "content"}, // a chat line of messages
		{Generic, "/content/0/text", "content"},     // a chat message
		{Generic, "/a~1b/c", "a/b"},
	} {
		if got := KeyName(c.d, c.ptr); got != c.want {
			t.Errorf("KeyName(%v, %q) = %q, want %q", c.d, c.ptr, got, c.want)
		}
	}
}

// TestReturnedImages: an image inside a tool result is part of the
// result, and tool_result moves it (seed 000 extracts an old result's
// data); an image the user sent moves only with image. Each dialect
// writes both.
func TestReturnedImages(t *testing.T) {
	defaults := ToolCall | ToolResult | Thinking
	for _, c := range []struct {
		d          Dialect
		line       string
		ptr        string
		returned   bool
		byDefault  bool
		withImages bool
	}{
		{OpenClaw, `{"type":"message","id":"r","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"image","data":"QUJD","mimeType":"image/png"}]}}`, "/message/content/0", true, true, true},
		{OpenClaw, `{"type":"message","id":"u","message":{"role":"user","content":[{"type":"image","data":"QUJD","mimeType":"image/png"}]}}`, "/message/content/0", false, false, true},
		{ClaudeCode, `{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}}]}]}}`, "/message/content/0/content/0", true, true, true},
		{ClaudeCode, `{"type":"user","uuid":"u","message":{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"QUJD"}}]}}`, "/message/content/0", false, false, true},
		{Codex, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_image","image_url":"data:image/png;base64,QUJD"}]}}`, "/payload/output/0", true, true, true},
		{Codex, `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_image","image_url":"data:image/png;base64,QUJD"}]}}`, "/payload/content/0", false, false, true},
	} {
		var p Parser
		tr, err := p.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		e := View(tr, c.d)
		if len(e.Values) != 1 || e.Values[0].Kind != Image || e.Values[0].Pointer != c.ptr {
			t.Fatalf("%s: values %+v, want one image at %s", c.line, e.Values, c.ptr)
		}
		v := e.Values[0]
		if v.Returned != c.returned || v.Moves(defaults) != c.byDefault || v.Moves(Image) != c.withImages || v.Moves(Text) {
			t.Errorf("%s: returned %v, moves by default %v, with image %v", c.line, v.Returned, v.Moves(defaults), v.Moves(Image))
		}
	}
}

// TestSessionIdentity: what a session is, as each runtime states it, read
// from a file's head or learnt from a stream as it passes, in pieces.
func TestSessionIdentity(t *testing.T) {
	for want, head := range map[string]string{
		"s-81":                     `{"type":"session","version":3,"id":"s-81","timestamp":"t","cwd":"/w"}` + "\n" + `{"type":"message","id":"m1"}`,
		"019c0000-7000":            `{"timestamp":"t","type":"session_meta","payload":{"id":"019c0000-7000","cwd":"/w"}}`,
		"cs":                       `{"type":"file-history-snapshot","messageId":"x","snapshot":{}}` + "\n" + `{"parentUuid":null,"type":"user","uuid":"u1","sessionId":"cs","message":{"role":"user","content":"hi"}}`,
		"cs/agent-a2898e3":         `{"parentUuid":null,"isSidechain":true,"sessionId":"cs","agentId":"a2898e3","type":"user","uuid":"u1","message":{"role":"user","content":"go"}}`,
		"session-1771692606-157d9": `{"__id":"e1","sessionId":"session-1771692606-157d9","type":"user_message","text":"x"}`,
		"":                         `{"role":"user","content":"a chat line names no session"}` + "\n" + `not json`,
	} {
		if got := IdentityOf(strings.NewReader(head)); got != want {
			t.Errorf("IdentityOf(%.60s…) = %q, want %q", head, got, want)
		}
		tap := NewIdentityTap(iotest.OneByteReader(strings.NewReader(head + "\n")))
		if _, err := io.Copy(io.Discard, tap); err != nil {
			t.Fatal(err)
		}
		if got := tap.ID(); got != want {
			t.Errorf("tap of %.60s… = %q, want %q", head, got, want)
		}
	}
}

// shrunk is an input that can no longer give back what it gave: a file cut
// short while it is read.
type shrunk struct{ *strings.Reader }

func (shrunk) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }

// TestReaderHugeLineOfAShrunkInput: a huge line that cannot be read again
// at its offset is an error, never a line of other bytes.
func TestReaderHugeLineOfAShrunkInput(t *testing.T) {
	r := NewReader(shrunk{strings.NewReader(strings.Repeat("h", 2*maxKeptLong) + "\n")})
	if l, err := r.NextView(); err == nil || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("NextView = %d bytes, %v; want an unexpected EOF", len(l.Body), err)
	}
}

// TestLinesBefore: the line feeds before an offset, also past the read
// buffer and past the end.
func TestLinesBefore(t *testing.T) {
	in := strings.Repeat("ab\n", 200<<10) // 600 KiB: more than one read
	r := strings.NewReader(in)
	for _, c := range []struct {
		off  int64
		want int
	}{{0, 0}, {2, 0}, {3, 1}, {300 << 10, 100 << 10}, {int64(len(in)), 200 << 10}, {int64(len(in)) + 10, 200 << 10}} {
		if got := LinesBefore(r, c.off); got != c.want {
			t.Errorf("LinesBefore(%d) = %d, want %d", c.off, got, c.want)
		}
	}
}

// TestCompactedFrom: the size a compaction records it compacted from,
// as each runtime spells it, and none of a line that is no compaction.
func TestCompactedFrom(t *testing.T) {
	for _, c := range []struct {
		d    Dialect
		line string
		n    int
		ok   bool
	}{
		{OpenClaw, `{"type":"compaction","id":"c1","parentId":"m9","summary":"s","firstKeptEntryId":"m5","tokensBefore":182034}`, 182034, true},
		{OpenClaw, `{"type":"compaction","summary":"s","firstKeptEntryIndex":4}`, 0, false},
		{OpenClaw, `{"type":"message","tokensBefore":5,"message":{"role":"user","content":"x"}}`, 0, false},
		{ClaudeCode, `{"type":"system","subtype":"compact_boundary","uuid":"u","compactMetadata":{"trigger":"auto","preTokens":155313}}`, 155313, true},
		{ClaudeCode, `{"type":"user","uuid":"u","compactMetadata":{"preTokens":7},"message":{"role":"user","content":"x"}}`, 0, false},
		{Codex, `{"timestamp":"t","type":"compacted","payload":{"message":"m"}}`, 0, false},
		{Generic, `{"role":"user","content":"x","tokensBefore":3}`, 0, false},
	} {
		var p Parser
		tr, err := p.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := c.d.CompactedFrom(tr); n != c.n || ok != c.ok {
			t.Errorf("%v.CompactedFrom(%s) = %d, %v; want %d, %v", c.d, c.line, n, ok, c.n, c.ok)
		}
	}
}

// TestSessionIdentityHeaderFirst: a header's statement of its session
// is the answer whatever a member stamped on the same line says, and a
// header that names none says none; a stamp stands when no header speaks.
func TestSessionIdentityHeaderFirst(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"type":"session","id":"pi-1","sessionId":"cc-1"}`, "pi-1"},
		{`{"type":"session_meta","payload":{"id":"cx-1"},"sessionId":"cc-1"}`, "cx-1"},
		{`{"type":"session","sessionId":"cc-1"}`, ""},
		{`{"type":"user","sessionId":"cc-1","agentId":"a1"}`, "cc-1/agent-a1"},
		{`{"type":"user","sessionId":""}`, ""},
		{`["type","session"]`, ""},
	} {
		var p Parser
		tr, err := p.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if got := sessionIdentity(tr); got != c.want {
			t.Errorf("SessionIdentity(%s) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestInstructions: a message that is the runtime's instructions (a chat's
// system prompt, Codex's developer messages) is marked, and so stays when
// roll evicts; other messages, and lines that are no message, are not.
func TestInstructions(t *testing.T) {
	for _, c := range []struct {
		d    Dialect
		line string
		want bool
	}{
		{Codex, `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"developer","content":[{"type":"input_text","text":"rules"}]}}`, true},
		{Codex, `{"timestamp":"t","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}}`, false},
		{Codex, `{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"ok"}}`, false},
		{Generic, `{"role":"system","content":"You are helpful."}`, true},
		{Generic, `{"role":"developer","content":"rules"}`, true},
		{Generic, `{"role":"assistant","content":"ok"}`, false},
		{OpenClaw, `{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"hi"}]}}`, false},
		{ClaudeCode, `{"type":"user","uuid":"u","message":{"role":"user","content":"hi"}}`, false},
	} {
		var p Parser
		tree, err := p.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		if e := View(tree, c.d); e.Instructions != c.want {
			t.Errorf("%s %s: Instructions %v, want %v", c.d, c.line, e.Instructions, c.want)
		}
	}
}
