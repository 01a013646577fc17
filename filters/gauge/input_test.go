package gauge

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMeasureInput: a regular file, and standard input redirected from
// one, are read from their end and give MeasureFile's figure, standard
// input left at its end; a pipe, a file whose lines must all be read,
// and a file copied to a tee are streamed and give Measure's, the tee
// getting every byte.
func TestMeasureInput(t *testing.T) {
	in, _ := piSession(false, 40, 300, 10)
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(in), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() *os.File {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	want, err := Measure("s", strings.NewReader(in), nil, Options{})
	if err != nil || want.Tokens == 0 {
		t.Fatalf("Measure = %d tokens, %v", want.Tokens, err)
	}
	for _, c := range []struct {
		what      string
		name      string
		r         io.Reader
		tee       bool
		everyLine bool
		streamed  bool
	}{
		{"a file", path, open(), false, false, false},
		{"standard input from a file", "-", open(), false, false, false},
		{"a pipe", "-", strings.NewReader(in), false, false, true},
		{"every line checked", path, open(), false, true, true},
		{"a tee", path, open(), true, false, true},
	} {
		var tee bytes.Buffer
		var w io.Writer
		if c.tee {
			w = &tee
		}
		res, streamed, err := MeasureInput(c.name, c.r, w, c.everyLine, Options{})
		if err != nil || res.Tokens != want.Tokens || streamed != c.streamed {
			t.Errorf("%s: %d tokens, streamed %v (%v); want %d, %v", c.what, res.Tokens, streamed, err, want.Tokens, c.streamed)
		}
		if c.tee && tee.String() != in {
			t.Errorf("%s: the tee got %d bytes of %d", c.what, tee.Len(), len(in))
		}
		if f, ok := c.r.(*os.File); ok && c.name == "-" {
			if at, _ := f.Seek(0, io.SeekCurrent); at != int64(len(in)) {
				t.Errorf("%s: left at %d, not at its end %d", c.what, at, len(in))
			}
		}
	}
}
