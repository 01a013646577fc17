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
