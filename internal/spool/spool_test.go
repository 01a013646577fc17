package spool

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const input = "{\"a\":1}\n{\"b\":2}\n"

// inputFile is the input in a regular file, open for reading.
func inputFile(t *testing.T) *os.File {
	t.Helper()
	path := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(path, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestOpenRegularFileIsReadInPlace(t *testing.T) {
	f := inputFile(t)
	sp, err := Open(f, "bs-test-*")
	if err != nil {
		t.Fatal(err)
	}
	if sp.File() != f || sp.Size() != int64(len(input)) {
		t.Fatalf("a regular file read from its start is the spool itself: got %v, size %d", sp.File().Name(), sp.Size())
	}
	sp.Close()
	if _, err := f.Stat(); err != nil {
		t.Fatalf("Close closed the caller's file: %v", err)
	}
}

func TestOpenPartlyReadFileIsCopied(t *testing.T) {
	f := inputFile(t)
	if _, err := f.Seek(8, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	sp, err := Open(f, "bs-test-*")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if sp.File() == f {
		t.Fatal("a file read past its start was used in place: its start is not the input")
	}
	var out bytes.Buffer
	if err := sp.CopyTo(&out); err != nil || out.String() != input[8:] {
		t.Fatalf("CopyTo = %q, %v; want %q", out.String(), err, input[8:])
	}
}

func TestOpenPipeIsCopiedToAnUnlinkedTemp(t *testing.T) {
	sp, err := Open(strings.NewReader(input), "bs-test-*")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	if _, err := os.Stat(sp.File().Name()); !os.IsNotExist(err) {
		t.Fatalf("the temp file is still linked: %v", err)
	}
	b := make([]byte, 7)
	if _, err := sp.ReadAt(b, 8); err != nil || string(b) != `{"b":2}` {
		t.Fatalf("ReadAt = %q, %v", b, err)
	}
	s, _ := io.ReadAll(sp.Section(0, 7))
	if string(s) != `{"a":1}` {
		t.Fatalf("Section = %q", s)
	}
}

func TestTeeHoldsWhatWasRead(t *testing.T) {
	sp, r, err := Tee(strings.NewReader(input), "bs-test-*")
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	head := make([]byte, 8)
	if _, err := io.ReadFull(r, head); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 7)
	if _, err := sp.ReadAt(b, 0); err != nil || string(b) != `{"a":1}` {
		t.Fatalf("ReadAt of what was read = %q, %v", b, err)
	}
	if _, err := sp.ReadAt(b, 8); err == nil {
		t.Fatal("ReadAt past what was read succeeded")
	}
}
