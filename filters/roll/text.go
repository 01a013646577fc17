package roll

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"unicode/utf8"
)

// EntryText is the text of an entry for the search index: its strings,
// decoded, without image data or signatures.
func EntryText(body []byte) string {
	var s string
	if json.Unmarshal(EntryTextJSON(body), &s) != nil {
		return ""
	}
	return s
}

// EntryTextJSON is EntryText as a JSON string: the contents of the
// entry's non-empty strings, joined by spaces, except the values of the
// members in skipKey. The text stops after about 1 MiB.
//
// A roll hands on the text of every line it evicts, so this is on its
// hot path: it copies the strings' raw bytes, which are already valid
// JSON string contents, and finds them with a scan rather than a parse
// (building a tree for it took a fifth of a forced roll's CPU). The scan
// trusts the structure of body, a line the transcript parser accepted, but
// checks every string it copies, so the result is a valid JSON string
// whatever body is. For a line that is not JSON the text is unspecified
// (and empty for one that is not UTF-8).
func EntryTextJSON(body []byte) []byte {
	if !utf8.Valid(body) {
		return []byte(`""`)
	}
	out := []byte{'"'}
	var name []byte // the quoted name of the member whose value is next, if any
	for i := 0; i < len(body); {
		c := body[i]
		if c != '"' {
			if !isSpace(c) {
				name = nil // a value other than a string, or a separator
			}
			i++
			continue
		}
		end, ok := stringEnd(body, i)
		if !ok {
			return []byte(`""`) // not JSON: nothing here can be vouched for
		}
		raw := body[i:end]
		i = end
		for i < len(body) && isSpace(body[i]) {
			i++
		}
		if i < len(body) && body[i] == ':' {
			name = raw
			i++
			continue
		}
		if len(raw) > 2 && (name == nil || !skipped(name)) {
			if len(out) > 1 {
				out = append(out, ' ')
			}
			out = append(out, raw[1:len(raw)-1]...)
			if len(out) > 1<<20 {
				break
			}
		}
		name = nil
	}
	return append(out, '"')
}

var skipKey = map[string]bool{"data": true, "image_url": true, "signature": true, "thinkingSignature": true, "encrypted_content": true}

// skipped reports whether the member named by the quoted name is left out
// of the text (escapes are rare in names: only those are decoded).
func skipped(name []byte) bool {
	if bytes.IndexByte(name, '\\') < 0 {
		return skipKey[string(name[1:len(name)-1])]
	}
	var s string
	return json.Unmarshal(name, &s) == nil && skipKey[s]
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// stringEnd returns the end of the JSON string that starts at b[i], and
// whether it is one: closed, with valid escapes and no control character.
// It goes eight bytes at a time to the next quote, backslash or control
// character: agent text has an escape every few words.
func stringEnd(b []byte, i int) (int, bool) {
	i++
	for {
		for ; i+8 <= len(b); i += 8 {
			if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
		}
		if i >= len(b) {
			return 0, false
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c == '\\':
			if i+1 >= len(b) {
				return 0, false
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, false
				}
				i += 6
			default:
				return 0, false
			}
		case c < 0x20:
			return 0, false
		default:
			i++ // a plain byte of the last few
		}
	}
}

// special marks the bytes of w (little-endian) that may end a run of
// plain string characters: a quote, a backslash or a control character.
// The lowest mark is always right; marks above it may be false (borrows).
func special(w uint64) uint64 {
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	quote, backslash := w^(lo*'"'), w^(lo*'\\')
	return ((quote-lo)&^quote | (backslash-lo)&^backslash | (w-lo*0x20)&^w) & hi
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
