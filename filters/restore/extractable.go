package restore

import (
	"strconv"
	"strings"
)

// ExtractableJSON is the JSON written to an entry's _extractable for the
// value v: true, false, or a count of messages written the way JSON spells
// it (so "+5" and "007" become 5 and 7); ok is false for anything else.
func ExtractableJSON(v string) (raw []byte, ok bool) {
	if v == "true" || v == "false" {
		return []byte(v), true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return nil, false
	}
	return strconv.AppendInt(nil, int64(n), 10), true
}

// ParseSetExtractable reads ID=VALUE, what bs restore --set-extractable
// takes, into the entry id and the JSON of its value (ExtractableJSON).
func ParseSetExtractable(s string) (id string, raw []byte, ok bool) {
	id, v, found := strings.Cut(s, "=")
	raw, valid := ExtractableJSON(v)
	if !found || id == "" || !valid {
		return "", nil, false
	}
	return id, raw, true
}
