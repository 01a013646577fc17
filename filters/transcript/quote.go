package transcript

import "github.com/go-json-experiment/json/jsontext"

// AppendQuote appends s as a JSON string. It escapes only what JSON
// requires, never <, > or &, so placeholders read the same as the runtime's
// own output.
func AppendQuote(dst []byte, s string) []byte {
	b, err := jsontext.AppendQuote(dst, s)
	if err != nil {
		// Only invalid UTF-8 fails; AppendQuote still wrote it with
		// replacement characters, which is the best a string can hold.
		return b
	}
	return b
}
