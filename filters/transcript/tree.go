package transcript

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Node is one JSON value inside a line, located by its byte span.
type Node struct {
	Kind jsontext.Kind // '{', '[', '"', '0', 't', 'f' or 'n'
	// chars is one more than the characters an ASCII string without
	// surrogate escapes decodes to, which are its UTF-16 units too, as the
	// parser counted them on its way through (Tree.StringChars,
	// Tree.StringUnits), or 0 when it did not (not such a string, or
	// above what an int32 holds). It sits in Kind's padding: a Node is no
	// larger for it.
	chars      int32
	Start, End int    // the value's bytes are line[Start:End]
	KeyStart   int    // for object members: where the quoted name starts
	Name       []byte // for object members: the raw quoted name
	Parent     int    // index of the parent node, -1 for the root
	Index      int    // its place among its parent's children, from 0
	First      int    // first child, -1 if none
	Next       int    // next sibling, -1 if none
	Last       int    // last child, -1 if none
}

// Tree is a parsed line: every value with its byte span. Strings are not
// decoded; callers decode only the few they need.
type Tree struct {
	Src   []byte
	Nodes []Node
}

// Raw returns the bytes of node i.
func (t *Tree) Raw(i int) []byte { n := &t.Nodes[i]; return t.Src[n.Start:n.End] }

// Get returns the member of object i named name, or -1.
func (t *Tree) Get(i int, name string) int {
	if i < 0 || t.Nodes[i].Kind != '{' {
		return -1
	}
	for c := t.Nodes[i].First; c >= 0; c = t.Nodes[c].Next {
		if nameIs(t.Nodes[c].Name, name) {
			return c
		}
	}
	return -1
}

// Path follows a sequence of member names from node i; -1 if any is missing.
func (t *Tree) Path(i int, names ...string) int {
	for _, n := range names {
		i = t.Get(i, n)
	}
	return i
}

// Str returns the decoded string at node i, or "" when i is not a string.
func (t *Tree) Str(i int) string {
	if i < 0 || t.Nodes[i].Kind != '"' {
		return ""
	}
	return unquote(t.Raw(i))
}

// StrPrefix returns the start of the decoded string at node i: about max
// bytes of it, cut before an escape or a character that would not fit, so
// that a gist of a long tool output costs its first bytes, not a decode of
// the whole.
func (t *Tree) StrPrefix(i, max int) string {
	if i < 0 || t.Nodes[i].Kind != '"' {
		return ""
	}
	raw := t.Raw(i)
	if len(raw) <= max+2 {
		return unquote(raw)
	}
	body := raw[1 : len(raw)-1]
	end := 0
	for end < len(body) {
		n := 1
		switch c := body[end]; {
		case c == '\\':
			n = 2
			if end+1 < len(body) && body[end+1] == 'u' {
				n = 6
			}
		case c >= utf8.RuneSelf:
			_, n = utf8.DecodeRune(body[end:])
		}
		if end+n > max {
			break
		}
		end += n
	}
	// A high surrogate escape needs its low half: drop it when cut apart.
	if end >= 6 && body[end-6] == '\\' && body[end-5] == 'u' && isHighSurrogate(body[end-4:end]) {
		end -= 6
	}
	q := make([]byte, 0, end+2)
	q = append(append(append(q, '"'), body[:end]...), '"')
	return unquote(q)
}

// Key returns the decoded member name of node i.
func (t *Tree) Key(i int) string { return unquote(t.Nodes[i].Name) }

// Children calls fn for each child of node i in order.
func (t *Tree) Children(i int, fn func(c, index int)) {
	if i < 0 {
		return
	}
	k := 0
	for c := t.Nodes[i].First; c >= 0; c = t.Nodes[c].Next {
		fn(c, k)
		k++
	}
}

// Resolve finds the node at an RFC 6901 JSON Pointer below the root.
func (t *Tree) Resolve(ptr string) (int, error) {
	toks, err := SplitPointer(ptr)
	if err != nil {
		return -1, err
	}
	i := 0
	for _, tok := range toks {
		switch t.Nodes[i].Kind {
		case '{':
			i = t.Get(i, tok)
		case '[':
			k, err := strconv.Atoi(tok)
			if err != nil || k < 0 || (len(tok) > 1 && tok[0] == '0') {
				return -1, fmt.Errorf("pointer %s: bad array index %q", ptr, tok)
			}
			c := t.Nodes[i].First
			for ; c >= 0 && k > 0; k-- {
				c = t.Nodes[c].Next
			}
			i = c
		default:
			i = -1
		}
		if i < 0 {
			return -1, fmt.Errorf("pointer %s: no such value", ptr)
		}
	}
	return i, nil
}

// Pointer returns the JSON Pointer of node i.
func (t *Tree) Pointer(i int) string {
	var toks []string
	for ; t.Nodes[i].Parent >= 0; i = t.Nodes[i].Parent {
		p := t.Nodes[i].Parent
		if t.Nodes[p].Kind == '{' {
			toks = append(toks, t.Key(i))
			continue
		}
		toks = append(toks, strconv.Itoa(t.Nodes[i].Index))
	}
	var b []byte
	for j := len(toks) - 1; j >= 0; j-- {
		b = append(b, '/')
		b = appendPointerToken(b, toks[j])
	}
	return string(b)
}

// nameIs reports whether the raw quoted name equals name, without
// allocating in the common case of a name with no escapes.
func nameIs(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return false
	}
	return unquote(raw) == name
}

func unquote(raw []byte) string {
	if len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	// On a string Parse accepted, the only error is a lone surrogate
	// escape, which AppendUnquote has decoded as U+FFFD and gone past.
	v, err := jsontext.AppendUnquote(nil, raw)
	if err != nil && len(v) == 0 {
		return ""
	}
	return string(v)
}

// stringChars reports the number of characters the JSON string raw decodes
// to, counting a \uXXXX escape (or a surrogate pair of them) as one.
func stringChars(raw []byte) int { return countChars(raw, -1) }

// StringChars is stringChars of string node i, which the parser counted
// as it went through the string's words to find its end: counting them
// again, from memory, cost the gauge and extract's ledger more than the
// parser's sum beside its search (the values they count are most of a
// session's bytes).
func (t *Tree) StringChars(i int) int {
	if c := t.Nodes[i].chars; c > 0 {
		return int(c) - 1
	}
	return stringChars(t.Raw(i))
}

// StringUnits is the UTF-16 length of string node i (what JavaScript's
// length says of it decoded) when the parser counted it, and whether it
// did: for a string of ASCII and escapes, without a surrogate pair, each
// character is one unit. Other strings the caller counts itself.
func (t *Tree) StringUnits(i int) (int, bool) {
	c := t.Nodes[i].chars
	return int(c) - 1, c > 0
}

// countChars counts like stringChars but stops once it has seen limit
// characters (limit < 0: no limit). It goes eight bytes at a time: a word
// without a backslash holds as many characters as it has bytes that do
// not continue a UTF-8 sequence (the parser has checked the UTF-8), less
// one for each backslash when every one it holds starts a two-byte escape.
// Agent text is dense with such escapes (quotes, newlines, tabs), so
// counting them word by word, and going byte by byte only for the rare
// others, matters: going by words at all was 1.4 times as fast as
// searching from escape to escape with bytes.IndexByte, and counting the
// words with escapes 1.7 times as fast again (BenchmarkStringChars).
func countChars(raw []byte, limit int) int {
	if len(raw) < 2 {
		return 0
	}
	s := raw[1 : len(raw)-1]
	n, i := 0, 0
	for {
		for ; i+8 <= len(s); i += 8 {
			if limit >= 0 && n >= limit {
				return n
			}
			w := binary.LittleEndian.Uint64(s[i:])
			bs := bytesEqual(w, '\\')
			// A word whose every backslash starts a two-byte escape
			// (\n, \t, \"): each backslash and the byte it escapes are
			// one character, the escaped byte counted as any other,
			// also when it begins the next word. Anything else (\\, \u)
			// goes byte by byte. A word without a backslash is the same
			// sum, with none to subtract, and is not singled out: in
			// agent text about every other word holds one, at random,
			// and a branch on it, mispredicted half the time, cost more
			// than the sum (BenchmarkStringCharsEscaped: 0.9 GB/s with
			// it, 1.3 without).
			if bs&(bs<<8) != 0 || (bs<<8)&bytesEqual(w, 'u') != 0 {
				break
			}
			if bs>>56 != 0 && (i+8 == len(s) || s[i+8] == 'u' || s[i+8] == '\\') {
				break
			}
			n += 8 - continuations(w) - bits.OnesCount64(bs)
		}
		if i >= len(s) || (limit >= 0 && n >= limit) {
			return n
		}
		// Byte by byte to the end of the word, or of the string.
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c != '\\' {
				if c&0xC0 != 0x80 {
					n++
				}
				i++
				continue
			}
			// An escape: \uXXXX (a surrogate pair of them is one
			// character) or a two-byte one. It may run past the word.
			switch {
			case i+1 < len(s) && s[i+1] == 'u':
				if i+12 <= len(s) && s[i+6] == '\\' && s[i+7] == 'u' && isHighSurrogate(s[i+2:i+6]) {
					i += 12
				} else {
					i += 6
				}
			default:
				i += 2
			}
			n++
			break
		}
		i = min(i, len(s))
	}
}

// bytesEqual marks each byte of w that is c with its high bit, exactly
// (the shorter (x-lo)&^x&hi test for a zero byte x may also mark the
// byte after one).
func bytesEqual(w uint64, c byte) uint64 {
	const lo, low7 = 0x0101010101010101, 0x7F7F7F7F7F7F7F7F
	x := w ^ (lo * uint64(c))
	return ^((x&low7 + low7) | x | low7)
}

// continuations counts the bytes of w that continue a UTF-8 sequence
// (10xxxxxx).
func continuations(w uint64) int {
	const hi = 0x8080808080808080
	return bits.OnesCount64(w &^ (w << 1) & hi)
}

func isHighSurrogate(hex []byte) bool {
	v, err := strconv.ParseUint(string(hex), 16, 16)
	return err == nil && v >= 0xD800 && v < 0xDC00
}

// AtLeastChars reports whether the JSON string raw decodes to at least n
// characters, deciding from the length alone when it can: a character takes
// at least one and at most twelve bytes of JSON.
func AtLeastChars(raw []byte, n int) bool {
	l := len(raw) - 2
	switch {
	case l < n:
		return false
	case l >= 12*n:
		return true
	}
	return countChars(raw, n) >= n
}
