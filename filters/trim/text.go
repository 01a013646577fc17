package trim

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// OpenClaw measures text with JavaScript's String length: UTF-16 code
// units. Every count here is in those units, taken from the raw JSON
// string without decoding it: a character outside the Basic Multilingual
// Plane (four bytes of UTF-8, or a surrogate pair of \u escapes) is two.
// A string of a parsed line is measured by the parser on its way, when it
// is ASCII without a surrogate pair (transcript.Tree.StringUnits, as the
// classifier's units asks first); rawUnits counts the others.

// rawUnits returns the UTF-16 length of the JSON string raw (with quotes).
// Every byte counts one unit, less one for each continuation byte of a
// multi-byte character, plus one for each four-byte lead (a character
// outside the Basic Multilingual Plane), less one for each escaped byte
// (the byte after an escape's backslash) and four more for the hex digits
// of a \u escape. Tool output escapes a line feed or a quote every few
// dozen bytes, so rather than look for each escape, rawUnits finds the
// escaped bytes 64 at a time with bit masks (as simdjson does).
func rawUnits(raw []byte) int {
	if len(raw) < 2 {
		return 0
	}
	s := raw[1 : len(raw)-1]
	n := len(s)
	var carry uint64 // 1 when the next block starts with an escaped byte
	for len(s) >= 64 {
		n += blockUnits(s, &carry)
		s = s[64:]
	}
	if len(s) > 0 {
		// Zeros count nothing here: they are neither backslashes, nor
		// 'u', nor parts of multi-byte characters.
		var pad [64]byte
		copy(pad[:], s)
		n += blockUnits(pad[:], &carry)
	}
	return n
}

// blockUnits returns what the first 64 bytes of s count beyond one unit
// each (see rawUnits); carry links one block's escapes to the next.
func blockUnits(s []byte, carry *uint64) int {
	_ = s[63]
	var bs, us uint64
	n := 0
	for j := 0; j < 64; j += 8 {
		w := binary.LittleEndian.Uint64(s[j:])
		bs |= moveMask(byteMask(w, '\\')) << j
		us |= moveMask(byteMask(w, 'u')) << j
		if w&hiBits != 0 {
			n += multiUnits(w)
		}
	}
	esc := escapedBytes(bs, carry)
	return n - bits.OnesCount64(esc) - 4*bits.OnesCount64(esc&us)
}

// escapedBytes returns the bytes of a block that follow an escape's
// backslash, given the bitmap bs of its backslashes: in a run of
// backslashes every other one is escaped, counting from the run's start.
// carry says that the block's first byte is escaped, and is set when the
// next block's first byte is. This is simdjson's find_escaped_branchless.
func escapedBytes(bs uint64, carry *uint64) uint64 {
	const even = 0x5555555555555555
	bs &^= *carry
	follows := bs<<1 | *carry
	oddStarts := bs &^ even &^ follows
	seq, c := bits.Add64(oddStarts, bs, 0)
	*carry = c
	return (even ^ seq<<1) & follows
}

// moveMask packs the high bits of the eight bytes of m, which has no other
// bit set, into the low eight bits, byte i's into bit i.
func moveMask(m uint64) uint64 {
	return (m >> 7) * 0x0102040810204080 >> 56
}

const hiBits = 0x8080808080808080

// byteMask has the high bit of each byte of w that equals c set, and no
// other bit. (Adding 0x7F to the low seven bits of a byte sets its high
// bit unless they are zero, and never carries into the next byte.)
func byteMask(w uint64, c byte) uint64 {
	x := w ^ (0x0101010101010101 * uint64(c))
	nz := ((x &^ hiBits) + 0x7F7F7F7F7F7F7F7F) | x
	return ^nz & hiBits
}

// multiUnits corrects the count of eight bytes of valid UTF-8 taken as one
// unit each: a continuation byte (10xxxxxx) counts for none and a
// four-byte lead (11110xxx) for two.
func multiUnits(w uint64) int {
	cont := w &^ (w << 1) & hiBits
	lead4 := w & (w << 1) & (w << 2) & (w << 3) & hiBits
	return bits.OnesCount64(lead4) - bits.OnesCount64(cont)
}

// escapeLen is the length of the escape s starts with: \uXXXX or a
// two-byte one (the parser has checked the string).
func escapeLen(s []byte) int {
	if len(s) > 1 && s[1] == 'u' {
		return min(6, len(s))
	}
	return min(2, len(s))
}

// escapeWidth returns the byte length and UTF-16 units of the escape s
// starts with, taking a surrogate pair of \u escapes as one piece.
func escapeWidth(s []byte) (size, units int) {
	if len(s) >= 12 && s[1] == 'u' && s[6] == '\\' && s[7] == 'u' && isSurrogate(s[2:6], 0xD800) && isSurrogate(s[8:12], 0xDC00) {
		return 12, 2
	}
	return escapeLen(s), 1
}

// isSurrogate reports whether the four hex digits h lie in [base, base+0x400).
func isSurrogate(h []byte, base uint64) bool {
	v, err := strconv.ParseUint(string(h), 16, 16)
	return err == nil && v >= base && v < base+0x400
}

// runUnits counts the UTF-16 units of valid UTF-8 without escapes, eight
// bytes at a time: every byte but a continuation byte starts a character,
// and a four-byte lead (11110xxx) starts one that takes two units.
func runUnits(b []byte) int {
	const hi = 0x8080808080808080
	n := len(b)
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if w&hi == 0 {
			continue
		}
		n += multiUnits(w)
	}
	for ; i < len(b); i++ {
		switch c := b[i]; {
		case c&0xC0 == 0x80:
			n--
		case c >= 0xF0:
			n++
		}
	}
	return n
}

// unitWidth returns the byte length and UTF-16 units of the character or
// escape at the start of s.
func unitWidth(s []byte) (size, units int) {
	if s[0] == '\\' {
		return escapeLen(s), 1
	}
	if s[0] < utf8.RuneSelf {
		return 1, 1
	}
	_, size = utf8.DecodeRune(s)
	if size == 4 {
		return 4, 2
	}
	return size, 1
}

// unitOffset returns the byte offset in the inner bytes s of a JSON string
// after k UTF-16 units. A character of two units that straddles k is never
// split: with up it is included (the offset lies after it), else not.
func unitOffset(s []byte, k int, up bool) int {
	off, n := 0, 0
	for off < len(s) && n < k {
		if s[off] == '\\' {
			size, units := escapeWidth(s[off:])
			if n+units > k && !up {
				return off
			}
			off += size
			n += units
			continue
		}
		// A run without escapes: skip it whole while it stays short of k.
		end := len(s)
		if j := bytes.IndexByte(s[off:], '\\'); j >= 0 {
			end = off + j
		}
		if u := runUnits(s[off:end]); n+u <= k {
			n += u
			off = end
			continue
		}
		// k falls inside this run: ASCII eight bytes at a time, then
		// character by character.
		for off+8 <= end && n+8 <= k && binary.LittleEndian.Uint64(s[off:])&0x8080808080808080 == 0 {
			off += 8
			n += 8
		}
		for off < end && n < k {
			size, units := unitWidth(s[off:])
			if n+units > k && !up {
				return off
			}
			n += units
			off += size
		}
	}
	return off
}

// jsUnits is the UTF-16 length of a Go string.
func jsUnits(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// appendHead appends the raw bytes of the first k units of the parts
// joined with "\n" (OpenClaw's takeHeadFromJoinedText).
func appendHead(dst []byte, parts [][]byte, k int) []byte {
	for i, p := range parts {
		if k <= 0 {
			break
		}
		if i > 0 {
			dst = append(dst, `\n`...)
			k--
			if k <= 0 {
				break
			}
		}
		in := p[1 : len(p)-1]
		u := rawUnits(p)
		if u <= k {
			dst = append(dst, in...)
			k -= u
			continue
		}
		dst = append(dst, in[:unitOffset(in, k, false)]...)
		k = 0
	}
	return dst
}

// appendTail appends the raw bytes of the last k units of the parts joined
// with "\n" (OpenClaw's takeTailFromJoinedText).
func appendTail(dst []byte, parts [][]byte, k int) []byte {
	if k <= 0 || len(parts) == 0 {
		return dst
	}
	// Walk back to find where the tail starts, then write it forwards.
	first, from := len(parts), 0 // parts[first][from:] onwards, inner bytes
	sepBefore := false           // a "\n" separator before parts[first]
	for i := len(parts) - 1; i >= 0 && k > 0; i-- {
		p := parts[i]
		in := p[1 : len(p)-1]
		u := rawUnits(p)
		if u <= k {
			first, from = i, 0
			k -= u
			if k > 0 && i > 0 {
				sepBefore = true
				k--
			} else {
				sepBefore = false
			}
			continue
		}
		first, from, sepBefore = i, unitOffset(in, u-k, true), false
		break
	}
	if first == len(parts) {
		return dst
	}
	if sepBefore {
		dst = append(dst, `\n`...)
	}
	for i := first; i < len(parts); i++ {
		in := parts[i][1 : len(parts[i])-1]
		if i == first {
			in = in[from:]
		} else {
			dst = append(dst, `\n`...)
		}
		dst = append(dst, in...)
	}
	return dst
}

// matcher is OpenClaw's tool predicate: glob patterns where * matches any
// run of characters, case-insensitive; deny wins; an empty allow list
// allows every tool.
type matcher struct {
	allow, deny []*regexp.Regexp
}

func newMatcher(allow, deny []string) *matcher {
	return &matcher{allow: compileGlobs(allow), deny: compileGlobs(deny)}
}

func compileGlobs(raw []string) []*regexp.Regexp {
	var out []*regexp.Regexp
	for _, g := range raw {
		g = strings.ToLower(strings.TrimSpace(g))
		if g == "" {
			continue // an empty pattern matches nothing
		}
		parts := strings.Split(g, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		out = append(out, regexp.MustCompile(`^(?s:`+strings.Join(parts, ".*")+`)$`))
	}
	return out
}

func (m *matcher) prunable(tool string) bool {
	name := strings.ToLower(strings.TrimSpace(tool))
	for _, re := range m.deny {
		if re.MatchString(name) {
			return false
		}
	}
	if len(m.allow) == 0 {
		return true
	}
	for _, re := range m.allow {
		if re.MatchString(name) {
			return true
		}
	}
	return false
}
