package transcript

import (
	"fmt"
	"strings"
)

// SplitPointer splits an RFC 6901 JSON Pointer into its unescaped tokens.
func SplitPointer(ptr string) ([]string, error) {
	if ptr == "" {
		return nil, nil
	}
	if ptr[0] != '/' {
		return nil, fmt.Errorf("pointer %q does not start with /", ptr)
	}
	toks := strings.Split(ptr[1:], "/")
	for i, t := range toks {
		if strings.IndexByte(t, '~') >= 0 {
			t = strings.ReplaceAll(t, "~1", "/")
			t = strings.ReplaceAll(t, "~0", "~")
			toks[i] = t
		}
	}
	return toks, nil
}

func appendPointerToken(b []byte, t string) []byte {
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '~':
			b = append(b, '~', '0')
		case '/':
			b = append(b, '~', '1')
		default:
			b = append(b, t[i])
		}
	}
	return b
}

// LastToken returns the final unescaped token of a pointer ("" for the root).
func LastToken(ptr string) string {
	toks, err := SplitPointer(ptr)
	if err != nil || len(toks) == 0 {
		return ""
	}
	return toks[len(toks)-1]
}

// KeyName is the name seed 000 gives the key a value of a line of dialect
// d was extracted from (its restore result lists "keys_restored":
// ["content"]): the entry's member that holds the value, below the
// envelope the dialect wraps its message in (Dialect.Envelope), so
// content for pi's /message/content/0/text and
// /message/content/1/arguments/command, output for /output and Codex's
// /payload/output, toolUseResult for /toolUseResult/stdout. The pointer
// itself says which value of the key it was.
func KeyName(d Dialect, ptr string) string {
	toks, err := SplitPointer(ptr)
	if err != nil || len(toks) == 0 {
		return ""
	}
	return toks[min(d.Envelope(toks), len(toks)-1)]
}

// wrappedIn is Envelope for a runtime that wraps its message in member
// name: 1 for a value inside it, else 0.
func wrappedIn(name string, tokens []string) int {
	if len(tokens) > 1 && tokens[0] == name {
		return 1
	}
	return 0
}

func isIndex(tok string) bool {
	if tok == "" {
		return false
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return false
		}
	}
	return true
}
