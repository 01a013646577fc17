package transcript

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Parser parses lines into trees, reusing its buffers between lines.
type Parser struct {
	tree  Tree
	stack []frame
	maps  bool // a frame of stack's array holds a name map
	depth int  // the deepest the stack went in this line: frames to clear
}

// frame is a container being parsed.
type frame struct {
	node, last int             // the container, and its last child so far
	escaped    bool            // for an object: a name so far holds an escape
	names      map[string]bool // for an object of many members: their names
}

// children is how many children the frame's container has so far.
func (f *frame) children(nodes []Node) int {
	if f.last < 0 {
		return 0
	}
	return nodes[f.last].Index + 1
}

// errInvalidUTF8 reports a line whose bytes are not UTF-8.
var errInvalidUTF8 = errors.New("invalid UTF-8")

// errTrailing reports a line that holds more than one JSON value, such as
// two objects glued together by a runtime that lost a line feed.
var errTrailing = errors.New("more than one JSON value on the line")

// syntaxError reports where and why a line is not JSON.
type syntaxError struct {
	Offset int // of the byte where it went wrong
	Msg    string
}

func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.Msg, e.Offset) }

// maxDepth is how deeply values may nest, as in encoding/json/jsontext.
const maxDepth = 10000

// Parse validates line as exactly one JSON value (RFC 8259) and returns
// its tree. The tree is valid until the next call to Parse. Invalid UTF-8,
// duplicate object names, trailing values and truncated input are errors:
// such lines are passed through untouched by every filter, since a splice
// into them could not be proven safe.
//
// A \u escape of a lone surrogate is not an error: the JSON grammar
// allows it, the line is still UTF-8 (the escape is ASCII), and Node's
// JSON.stringify writes one for a string cut inside an emoji, so real
// transcripts hold them (FORMATS.md §6). Str decodes it as U+FFFD.
//
// Parsing is most of what a filter spends on a line it leaves alone, so
// this is a hand-written scanner, not a general decoder: one pass, no
// recursion, strings crossed eight bytes at a time. Its verdicts and spans
// are those of encoding/json/jsontext (FuzzParse compares them).
func (p *Parser) Parse(line []byte) (*Tree, error) {
	if !utf8.Valid(line) {
		return nil, errInvalidUTF8
	}
	p.tree.Src = line
	p.tree.Nodes = p.tree.Nodes[:0]
	p.stack = p.stack[:0]
	p.depth = 0
	err := p.parse(line)
	if p.maps {
		// No name map is kept for the next line. Only the frames this
		// line used can hold one: one deep line must not make every later
		// line clear its whole stack.
		clear(p.stack[:p.depth])
		p.maps = false
	}
	if err != nil {
		return nil, err
	}
	return &p.tree, nil
}

// Forget drops the parser's references to the last line it parsed, so
// that a parser kept for later does not keep that line alive.
func (p *Parser) Forget() {
	p.tree.Src, p.tree.Nodes = nil, reusable(p.tree.Nodes)
}

func (p *Parser) parse(b []byte) error {
	nodes := p.tree.Nodes
	defer func() { p.tree.Nodes = nodes }()
	i := skipSpace(b, 0)
	var name []byte // of the value to come, when it is an object member
	keyStart := 0
	for {
		// A value starts at b[i].
		if i >= len(b) {
			return unexpectedEnd(b)
		}
		parent := -1
		if len(p.stack) > 0 {
			parent = p.stack[len(p.stack)-1].node
		}
		idx := len(nodes)
		nodes = append(nodes, Node{Start: i, KeyStart: keyStart, Name: name, Parent: parent, First: -1, Next: -1, Last: -1})
		if parent >= 0 {
			f := &p.stack[len(p.stack)-1]
			nodes[idx].Index = f.children(nodes)
			if f.last < 0 {
				nodes[parent].First = idx
			} else {
				nodes[f.last].Next = idx
			}
			f.last = idx
		}
		n := &nodes[idx]
		switch c := b[i]; c {
		case '{', '[':
			n.Kind = kindOf(c)
			if len(p.stack) >= maxDepth {
				return &syntaxError{i, "values nested too deeply"}
			}
			p.stack = append(p.stack, frame{node: idx, last: -1})
			p.depth = max(p.depth, len(p.stack))
			i = skipSpace(b, i+1)
			if i < len(b) && b[i] == closing(c) {
				break // empty: closed below
			}
			var err error
			if name, keyStart, i, err = p.child(b, i, n.Kind, nodes); err != nil {
				return err
			}
			continue
		case '"':
			end, chars, err := stringEnd(b, i)
			if err != nil {
				return err
			}
			n.Kind, n.End, i = '"', end, end
			if 0 <= chars && chars < math.MaxInt32 {
				n.chars = int32(chars) + 1
			}
		case 't', 'f', 'n':
			lit := literal(c)
			if !bytes.HasPrefix(b[i:], lit) {
				return invalid(b, i, "in literal "+string(lit))
			}
			n.Kind, i = kindOf(c), i+len(lit)
			n.End = i
		default:
			end, err := numberEnd(b, i)
			if err != nil {
				return err
			}
			n.Kind, n.End, i = '0', end, end
		}
		// After a value: close the containers it ends, or go on to the
		// next member or element.
		for {
			i = skipSpace(b, i)
			if len(p.stack) == 0 {
				if i < len(b) {
					if startsValue(b[i]) {
						return errTrailing
					}
					return invalid(b, i, "after top-level value")
				}
				return nil
			}
			if i >= len(b) {
				return unexpectedEnd(b)
			}
			f := &p.stack[len(p.stack)-1]
			open := nodes[f.node].Kind
			switch c := b[i]; {
			case c == closing(byte(open)):
				nodes[f.node].End = i + 1
				nodes[f.node].Last = f.last
				p.stack = p.stack[:len(p.stack)-1]
				i++
				continue
			case c == ',':
				var err error
				if name, keyStart, i, err = p.child(b, skipSpace(b, i+1), open, nodes); err != nil {
					return err
				}
			default:
				return invalid(b, i, "after "+childName(open))
			}
			break
		}
	}
}

// child reads what comes before the next child of a container of kind
// open at b[i]: nothing in an array; in an object, the member's name and
// colon (see member). It returns the child's name, where that starts, and
// where the child's value starts.
func (p *Parser) child(b []byte, i int, open jsontext.Kind, nodes []Node) (name []byte, keyStart, next int, err error) {
	if open == '[' {
		return nil, 0, i, nil
	}
	return p.member(b, i, nodes)
}

// member reads an object member's name and colon at b[i], checks that the
// name is new in its object, and returns it, where it starts, and where
// the member's value starts.
func (p *Parser) member(b []byte, i int, nodes []Node) (name []byte, keyStart, next int, err error) {
	if i >= len(b) {
		return nil, 0, 0, unexpectedEnd(b)
	}
	if b[i] != '"' {
		return nil, 0, 0, invalid(b, i, "at start of object member name")
	}
	end, err := StringEnd(b, i)
	if err != nil {
		return nil, 0, 0, err
	}
	name = b[i:end]
	if err := p.newName(name, nodes, i); err != nil {
		return nil, 0, 0, err
	}
	j := skipSpace(b, end)
	if j >= len(b) {
		return nil, 0, 0, unexpectedEnd(b)
	}
	if b[j] != ':' {
		return nil, 0, 0, invalid(b, j, "after object member name")
	}
	return name, i, skipSpace(b, j+1), nil
}

// newName checks that the object being parsed has no member named name
// yet (names are compared decoded, as jsontext does). Small objects are
// searched; a large one keeps its names in a map.
func (p *Parser) newName(name []byte, nodes []Node, at int) error {
	const searchUpTo = 16
	f := &p.stack[len(p.stack)-1]
	escaped := bytes.IndexByte(name, '\\') >= 0
	dup := false
	switch {
	case f.children(nodes) < searchUpTo:
		// Names without escapes are the same exactly when their bytes
		// are; only an escape needs decoding.
		plain := !escaped && !f.escaped
		for c := nodes[f.node].First; c >= 0 && !dup; c = nodes[c].Next {
			if plain {
				dup = string(nodes[c].Name) == string(name)
			} else {
				dup = unquote(nodes[c].Name) == unquote(name)
			}
		}
	default:
		if f.names == nil {
			p.maps = true
			f.names = make(map[string]bool, 2*searchUpTo)
			for c := nodes[f.node].First; c >= 0; c = nodes[c].Next {
				f.names[unquote(nodes[c].Name)] = true
			}
		}
		key := unquote(name)
		dup = f.names[key]
		f.names[key] = true
	}
	f.escaped = f.escaped || escaped
	if dup {
		return &syntaxError{at, "duplicate object member name " + string(name)}
	}
	return nil
}

// StringEnd returns the end of the JSON string that starts at b[i] (the
// byte after its closing quote), or why there is none there. It goes eight bytes at a time to the next
// quote, backslash or control character: agent text has an escape every
// few words.
func StringEnd(b []byte, i int) (int, error) {
	end, _, err := stringEnd(b, i)
	return end, err
}

// stringEnd is StringEnd that also counts the characters an ASCII string
// decodes to (an escape is one), or -1 for a string with a byte above
// ASCII or a surrogate pair of \u escapes, which Tree.StringChars counts when
// asked. Such a string's characters are its UTF-16 units too (Node.chars).
// The words are in hand already, so the count costs an OR a word and a
// sum an escape, rather than a second pass over the string.
func stringEnd(b []byte, i int) (end, chars int, err error) {
	start := i
	i++
	var high uint64 // the OR of the words read: its top bits say whether one was above ASCII
	saved := 0      // the bytes escapes take beyond the character each gives
	paired := false // the \u escape to come is the second of a pair
	pairs := false  // the string holds a surrogate pair
	for {
		for ; i+8 <= len(b); i += 8 {
			w := binary.LittleEndian.Uint64(b[i:])
			if m := stringSpecial(w); m != 0 {
				plain := bits.TrailingZeros64(m) / 8
				high |= w & (1<<(8*plain) - 1)
				i += plain
				break
			}
			high |= w
		}
		if i >= len(b) {
			return 0, 0, unexpectedEnd(b)
		}
		switch c := b[i]; {
		case c == '"':
			if high&0x8080808080808080 != 0 || pairs {
				return i + 1, -1, nil
			}
			return i + 1, i - start - 1 - saved, nil
		case c == '\\':
			if i+1 >= len(b) {
				return 0, 0, unexpectedEnd(b)
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
				saved++
			case 'u':
				for k := i + 2; k < i+6; k++ {
					if k >= len(b) {
						return 0, 0, unexpectedEnd(b)
					}
					if !isHex(b[k]) {
						return 0, 0, invalid(b, k, "in \\u escape of string starting at byte "+fmt.Sprint(start))
					}
				}
				if paired {
					paired, saved = false, saved+6
				} else {
					saved += 5
					paired = i+8 <= len(b) && b[i+6] == '\\' && b[i+7] == 'u' && isHighSurrogate(b[i+2:i+6])
					pairs = pairs || paired
				}
				i += 6
			default:
				return 0, 0, invalid(b, i+1, "in escape of string starting at byte "+fmt.Sprint(start))
			}
		case c < 0x20:
			return 0, 0, invalid(b, i, "in string starting at byte "+fmt.Sprint(start))
		default:
			high |= uint64(c)
			i++ // a plain byte of the last few
		}
	}
}

// stringSpecial marks the bytes of w (little-endian) that may end a run of
// plain string characters: a quote, a backslash or a control character.
// The lowest mark is always right; marks above it may be false (borrows).
func stringSpecial(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(lo*'"'), w^(lo*'\\')
	return ((quote-lo)&^quote | (backslash-lo)&^backslash | (w-lo*0x20)&^w) & hi
}

// numberEnd returns the end of the number that starts at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func numberEnd(b []byte, i int) (int, error) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i >= len(b):
		return 0, unexpectedEnd(b)
	case b[i] == '0':
		i++
	case '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return 0, invalid(b, i, "at start of value")
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, numberError(b, j)
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, numberError(b, j)
		}
		i = j
	}
	return i, nil
}

func numberError(b []byte, i int) error {
	if i >= len(b) {
		return unexpectedEnd(b)
	}
	return invalid(b, i, "in number")
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// IsSpace reports whether c is JSON white space.
func IsSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && IsSpace(b[i]) {
		i++
	}
	return i
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func startsValue(c byte) bool {
	return c == '{' || c == '[' || c == '"' || c == '-' || '0' <= c && c <= '9' || c == 't' || c == 'f' || c == 'n'
}

func closing(open byte) byte {
	if open == '{' {
		return '}'
	}
	return ']'
}

// childName names what a container of kind open holds, for errors.
func childName(open jsontext.Kind) string {
	if open == '{' {
		return "object member"
	}
	return "array element"
}

func literal(c byte) []byte {
	switch c {
	case 't':
		return []byte("true")
	case 'f':
		return []byte("false")
	}
	return []byte("null")
}

func kindOf(c byte) jsontext.Kind { return jsontext.Kind(c) }

func invalid(b []byte, i int, where string) error {
	r, _ := utf8.DecodeRune(b[i:])
	return &syntaxError{i, fmt.Sprintf("invalid character %q %s", r, where)}
}

func unexpectedEnd(b []byte) error { return &syntaxError{len(b), "unexpected end of line"} }

// JSONLossily reports whether b, which the Parser rejects, is a JSON value
// once its invalid UTF-8 is replaced by U+FFFD, as a JavaScript runtime
// decodes a file it reads as UTF-8: pi reads such a line as an entry and
// counts it among its entries.
func JSONLossily(b []byte) bool {
	if utf8.Valid(b) {
		return false
	}
	var p Parser
	_, err := p.Parse(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	return err == nil
}
