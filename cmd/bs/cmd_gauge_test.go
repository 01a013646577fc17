package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestGaugeStdinFile: standard input redirected from a file is read from
// its end, as a file argument is, and left at its end, as a stream leaves
// it; a pipe of the same bytes gives the same figure. On a file whose last
// usage is its third line from the end, the reading from the end cannot
// see a bad line near the start, which the stream, parsing the lines that
// may carry usage, reports.
func TestGaugeStdinFile(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sample", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(src), "\n")
	// A bad line that names the usage key, second in the file.
	bad := `{"usage": oops}` + "\n"
	in := strings.Join(append(lines[:1:1], append([]string{bad}, lines[1:]...)...), "")
	path := filepath.Join(t.TempDir(), "s.jsonl")
	if err := os.WriteFile(path, []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	gauge := func(stdin io.Reader, args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"bs", "gauge", "--json"}, args...), stdin, &out, &errb); code != 0 {
			t.Fatalf("gauge %v: exit %d: %s", args, code, errb.String())
		}
		return strings.Replace(out.String(), `"file":"`+path+`"`, `"file":"-"`, 1), errb.String()
	}
	fromArg, _ := gauge(strings.NewReader(""), path)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fromStdin, stdinErr := gauge(f)
	fromPipe, pipeErr := gauge(strings.NewReader(in))
	if fromStdin != fromArg || fromPipe != fromArg {
		t.Errorf("gauge FILE: %s gauge < FILE: %s a pipe: %s", fromArg, fromStdin, fromPipe)
	}
	if off, _ := f.Seek(0, io.SeekCurrent); off != int64(len(in)) {
		t.Errorf("standard input left at %d, want its end, %d", off, len(in))
	}
	if stdinErr != "" || !strings.Contains(pipeErr, "-:2: not a valid JSON entry") {
		t.Errorf("warnings: from the end %q, want none; streamed %q, want line 2's", stdinErr, pipeErr)
	}
}
