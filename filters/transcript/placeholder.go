package transcript

import (
	"bytes"
	"strconv"
	"strings"
)

// The members bs roll writes. RolledField marks every line roll writes,
// with "by":RolledBy; on the note that carries the accounting it is
// {"by":…,"tokens":K,"kept_lines":N}: the context after the roll is K
// tokens, counting the N lines that follow the note. EvictedField marks the
// line standing where evicted lines were: {"blobs":[…],"bytes":N,"skip":K}
// names the blobs holding their exact bytes, in order, and how many of the
// following lines are copies of lines kept from the range. A note appended
// after an input whose complete last line had no line feed gave it one,
// and says so with RolledNewline:true in its RolledField.
const (
	RolledField   = "_rolled"
	RolledBy      = "bs roll"
	EvictedField  = "_evicted"
	RolledNewline = "newline_added"
)

// Placeholder returns the text left where a value of entry id was removed:
// exactly [[extracted-<id>]] (seed 000).
func Placeholder(id string) string { return "[[extracted-" + id + "]]" }

// PlaceholderSafe reports whether entry id can stand in a placeholder that
// restore will recognise again: IsRawPlaceholder reads the placeholder from
// a string's raw JSON bytes, so the id must be spelled there as it is (no
// quote, backslash or control character that JSON would escape), must not
// hold the brackets that end it, and must be short enough to be found in
// the string's tail. Filters leave the values of any other entry in place:
// what could not be put back must not be removed.
func PlaceholderSafe(id string) bool {
	if id == "" || len(id) > maxPlaceholderTail-len(`[[extracted-]]"`) || strings.ContainsAny(id, "[]") {
		return false
	}
	// Quote into a buffer on the stack: extract asks this of every entry.
	var buf [maxPlaceholderTail]byte
	return len(AppendQuote(buf[:0], id)) == len(id)+2
}

// IsRawPlaceholder reports whether a raw JSON string holds a placeholder
// left by bs: exactly [[extracted-<id>]] (extract), or text that ends with
// one (trim keeps a head, a tail and a note before it). It looks only at
// the string's last bytes, never decoding it, so a long tool output costs
// a few comparisons. An id holds no brackets, quotes or backslashes.
func IsRawPlaceholder(raw []byte) bool {
	if !bytes.HasSuffix(raw, []byte(`]]"`)) || len(raw) < len(`"[[extracted-x]]"`) {
		return false
	}
	tail := raw[max(1, len(raw)-maxPlaceholderTail) : len(raw)-3]
	i := bytes.LastIndex(tail, []byte("[[extracted-"))
	if i < 0 {
		return false
	}
	id := tail[i+len("[[extracted-"):]
	return len(id) > 0 && bytes.IndexAny(id, `[]"\`) < 0
}

// maxPlaceholderTail bounds how far from the end of a string a placeholder
// is looked for: ids are short (a UUID, 8 hex digits, bs-<16 hex>).
const maxPlaceholderTail = 256

// PlaceholderValue returns the JSON that replaces a removed value: the
// placeholder string, or for a whole block a text block of the given type
// holding it.
func PlaceholderValue(ph, block string) []byte {
	if block == "" {
		return AppendQuote(nil, ph)
	}
	b := []byte(`{"type":`)
	b = AppendQuote(b, block)
	b = append(b, `,"text":`...)
	b = AppendQuote(b, ph)
	return append(b, '}')
}

// ExtractedMeta builds the _extracted member of an entry: JSON Pointer →
// {"blob":"sha256:…","bytes":N,"tokens":T}, T being what the removal took
// out of the context, as the gauge counts it (what the value held less
// what stands in its place; 0 for a value out of context). Existing
// members keep their bytes and order; new ones are appended.
type ExtractedMeta struct {
	t     *Tree
	node  int // the existing _extracted object, or -1
	added []byte
}

// NewExtractedMeta starts from the entry's existing _extracted (node, or -1).
func NewExtractedMeta(t *Tree, node int) *ExtractedMeta {
	return &ExtractedMeta{t: t, node: node}
}

// Add records a removed value.
func (m *ExtractedMeta) Add(ptr, blob string, n, tokens int) {
	if len(m.added) > 0 {
		m.added = append(m.added, ',')
	}
	m.added = AppendExtractedRecord(m.added, ptr, blob, n, tokens)
}

// AppendExtractedRecord appends one member of _extracted.
func AppendExtractedRecord(b []byte, ptr, blob string, n, tokens int) []byte {
	b = AppendQuote(b, ptr)
	b = append(b, `:{"blob":`...)
	b = AppendQuote(b, blob)
	b = append(b, `,"bytes":`...)
	b = appendInt(b, n)
	b = append(b, `,"tokens":`...)
	b = appendInt(b, tokens)
	return append(b, '}')
}

// Edit returns the edit that writes the metadata into the entry.
func (m *ExtractedMeta) Edit() Edit {
	if m.node < 0 || m.t.Nodes[m.node].Kind != '{' {
		v := append(append([]byte{'{'}, m.added...), '}')
		if m.node >= 0 {
			return m.t.ReplaceValue(m.node, v)
		}
		return m.t.InsertMember(0, "_extracted", v)
	}
	n := m.t.Nodes[m.node]
	if n.Last < 0 {
		return Edit{Start: n.Start + 1, End: n.Start + 1, Text: m.added}
	}
	at := m.t.Nodes[n.Last].End
	return Edit{Start: at, End: at, Text: append([]byte{','}, m.added...)}
}

func appendInt(b []byte, n int) []byte {
	return strconv.AppendInt(b, int64(n), 10)
}

// HoldsPlaceholder reports whether node n holds what bs left in place of a
// value: a string holding a placeholder, a text block holding one, or (trim
// of a result with several blocks) an array of exactly one such block.
func (t *Tree) HoldsPlaceholder(n int) bool {
	switch t.Nodes[n].Kind {
	case '"':
		return IsRawPlaceholder(t.Raw(n))
	case '{':
		text := t.Get(n, "text")
		return text >= 0 && t.Nodes[text].Kind == '"' && IsRawPlaceholder(t.Raw(text))
	case '[':
		first := t.Nodes[n].First
		return first >= 0 && t.Nodes[first].Next < 0 && t.Nodes[first].Kind == '{' && t.HoldsPlaceholder(first)
	}
	return false
}

// AdjustedField is the member a filter writes on a usage line (an
// assistant message carrying the provider's count, a Codex token_count)
// when it has since taken something out of the context that usage
// covered, or put something back: {"removed":R,"added":A,"scale":S,
// "estimator":E}. The gauge takes (R-A)*S off the usage (see package
// gauge).
const AdjustedField = "_adjusted"

// The member bs archive writes. ArchivedField marks the synthetic assistant
// entry that stands, after the untouched user prompt, where the rest of an
// archived turn was: {"id":…,"depth":D,"blobs":[…],"bytes":N,"from":P,
// "entries":E,"tokens":T,"tool_calls":C,"task":…,"at":…}. The blobs, in
// order, hold the holder transcript: the turn's original lines byte for
// byte, its user prompt included; the lines the entry replaced are the
// holder's bytes from offset P on.
const ArchivedField = "_archived"
