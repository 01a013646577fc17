package trim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

// quote writes s as JSON the way a runtime might: some characters
// escaped, some (astral ones too) written as UTF-8.
func quote(rng *rand.Rand, s string) []byte {
	b := []byte{'"'}
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\n':
			b = append(b, `\n`...)
		case r < 0x20 || rng.IntN(5) == 0:
			for _, u := range utf16.Encode([]rune{r}) {
				b = fmt.Appendf(b, `\u%04x`, u)
			}
		default:
			b = append(b, string(r)...)
		}
	}
	return append(b, '"')
}

func randText(rng *rand.Rand, n int) string {
	alphabet := []rune("ab \"\\\n\té€😀𝄞x")
	var sb strings.Builder
	for range n {
		sb.WriteRune(alphabet[rng.IntN(len(alphabet))])
	}
	return sb.String()
}

func decode(t *testing.T, raw []byte) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("not a JSON string: %s: %v", raw, err)
	}
	return s
}

// TestUnitsAndCuts checks the UTF-16 counts and the head and tail cuts of
// raw JSON strings against the decoded text: a head is the first k units
// of the parts joined with "\n" and a tail the last k, except that a
// character of two units is never split (it is left out).
func TestUnitsAndCuts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for iter := range 3000 {
		nparts := 1 + rng.IntN(3)
		var texts []string
		var parts [][]byte
		for range nparts {
			s := randText(rng, rng.IntN(40))
			if iter%7 == 0 {
				s = strings.Repeat("plain ascii text ", rng.IntN(8)) + s
			}
			texts = append(texts, s)
			raw := quote(rng, s)
			parts = append(parts, raw)
			if got, want := rawUnits(raw), len(utf16.Encode([]rune(s))); got != want {
				t.Fatalf("rawUnits(%s) = %d, want %d", raw, got, want)
			}
			var p transcript.Parser
			if _, err := p.Parse(raw); err != nil {
				t.Fatalf("test input %s is not JSON: %v", raw, err)
			}
		}
		joined := utf16.Encode([]rune(strings.Join(texts, "\n")))
		k := rng.IntN(len(joined) + 3)
		head := decode(t, append(appendHead([]byte{'"'}, parts, k), '"'))
		wantHead := joined[:min(k, len(joined))]
		if n := len(wantHead); n > 0 && utf16.IsSurrogate(rune(wantHead[n-1])) && wantHead[n-1] < 0xDC00 {
			wantHead = wantHead[:n-1] // a pair is not split
		}
		if head != string(utf16.Decode(wantHead)) {
			t.Fatalf("head %d of %q = %q, want %q", k, texts, head, string(utf16.Decode(wantHead)))
		}
		tail := decode(t, append(appendTail([]byte{'"'}, parts, k), '"'))
		wantTail := joined[len(joined)-min(k, len(joined)):]
		if len(wantTail) > 0 && wantTail[0] >= 0xDC00 && wantTail[0] < 0xE000 {
			wantTail = wantTail[1:]
		}
		if tail != string(utf16.Decode(wantTail)) {
			t.Fatalf("tail %d of %q = %q, want %q", k, texts, tail, string(utf16.Decode(wantTail)))
		}
	}
}

func TestRunUnitsLong(t *testing.T) {
	s := strings.Repeat("abcdefgh", 100) + "é😀" + strings.Repeat("x", 13)
	if got := runUnits([]byte(s)); got != 800+1+2+13 {
		t.Fatalf("runUnits = %d", got)
	}
	if got := unitOffset([]byte(s), 801, false); got != 802 {
		t.Fatalf("unitOffset before the pair = %d, want 802", got)
	}
	if got := unitOffset([]byte(s), 802, false); got != 802 {
		t.Fatalf("unitOffset inside the pair, down = %d, want 802", got)
	}
	if got := unitOffset([]byte(s), 802, true); got != 806 {
		t.Fatalf("unitOffset inside the pair, up = %d, want 806", got)
	}
}

// TestMatcher checks OpenClaw's tool predicate: * wildcards anchored at
// both ends, case folding, deny winning, an empty allow list allowing all.
func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		allow, deny []string
		tool        string
		want        bool
	}{
		{nil, nil, "anything", true},
		{nil, nil, "", true},
		{[]string{"exec", "read"}, nil, "READ", true},
		{[]string{"exec", "read"}, nil, "write", false},
		{[]string{"exec", "read"}, nil, "reader", false},
		{[]string{"web_*"}, nil, "Web_Fetch", true},
		{[]string{"*"}, []string{"*image*"}, "view_image_v2", false},
		{[]string{"read"}, []string{"READ"}, "read", false},
		{nil, []string{"bash"}, "Bash", false},
		{nil, []string{"bash"}, "bash2", true},
		{[]string{"a.c"}, nil, "abc", false}, // only * is special
		{[]string{"  "}, nil, "x", true},     // an empty pattern is dropped
	} {
		if got := newMatcher(c.allow, c.deny).prunable(c.tool); got != c.want {
			t.Errorf("allow %q deny %q: prunable(%q) = %v, want %v", c.allow, c.deny, c.tool, got, c.want)
		}
	}
}

// refUnits is the plain definition rawUnits must agree with: every
// character of the decoded string counts one UTF-16 unit, two outside the
// Basic Multilingual Plane, and each \u escape counts one.
func refUnits(raw []byte) int {
	s := raw[1 : len(raw)-1]
	n := 0
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '\\':
			i += escapeLen(s[i:])
			n++
		case c&0xC0 == 0x80:
			i++
		case c >= 0xF0:
			i++
			n += 2
		default:
			i++
			n++
		}
	}
	return n
}

// TestRawUnitsWords checks the eight-bytes-at-a-time counts at every
// alignment of escapes, backslash runs and multi-byte characters.
func TestRawUnitsWords(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{`a`, `b`, ` `, `\\`, `\"`, `\n`, `\u00e9`, `\ud83d\ude00`, `é`, `€`, `😀`, `𝄞`, "\x7f", `u`, `/`}
	for iter := range 20000 {
		var b strings.Builder
		b.WriteByte('"')
		heavy := rng.IntN(4) == 0 // long runs of backslashes
		for range rng.IntN(300) {
			if heavy && rng.IntN(3) == 0 {
				b.WriteString(`\\\\`)
				continue
			}
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		b.WriteByte('"')
		raw := []byte(b.String())
		if got, want := rawUnits(raw), refUnits(raw); got != want {
			t.Fatalf("%d: rawUnits(%s) = %d, want %d", iter, raw, got, want)
		}
		if in := raw[1 : len(raw)-1]; bytes.IndexByte(in, '\\') < 0 {
			if got, want := runUnits(in), refUnits(raw); got != want {
				t.Fatalf("%d: runUnits(%s) = %d, want %d", iter, in, got, want)
			}
		}
	}
}

// BenchmarkRawUnits counts a tool result shaped like scripts/benchgen's:
// ASCII with an escaped line feed, tab or quote every dozen bytes or so.
func BenchmarkRawUnits(b *testing.B) {
	raw := corpustest.EscapedText(64<<10, 5)
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		rawUnits(raw)
	}
}
