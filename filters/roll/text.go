package roll

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/bstools/bs/filters/transcript"
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
			if !transcript.IsSpace(c) {
				name = nil // a value other than a string, or a separator
			}
			i++
			continue
		}
		end, err := transcript.StringEnd(body, i)
		if err != nil {
			return []byte(`""`) // not JSON: nothing here can be vouched for
		}
		raw := body[i:end]
		i = end
		for i < len(body) && transcript.IsSpace(body[i]) {
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
