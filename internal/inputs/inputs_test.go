package inputs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/linecheck"
)

const entry = `{"role":"user","content":"hi"}` + "\n"

// upper is a filter: it writes its input in capitals.
func upper(_ context.Context, _ string, r io.Reader, w io.Writer) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, err = w.Write(bytes.ToUpper(b))
	return err
}

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEachStdin(t *testing.T) {
	var out bytes.Buffer
	in := &Inputs{Stdin: strings.NewReader(entry), Stdout: &out}
	if err := in.Each(context.Background(), upper); err != nil {
		t.Fatal(err)
	}
	if out.String() != strings.ToUpper(entry) {
		t.Errorf("got %q", out.String())
	}
}

// A file that cannot be read is an error of its own: the next is read.
func TestEachGoesOnPastAFailedFile(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.jsonl", entry)
	missing := filepath.Join(dir, "missing.jsonl")
	var out bytes.Buffer
	in := &Inputs{Files: []string{missing, a, dir}, Stdout: &out}
	err := in.Each(context.Background(), upper)
	var files FileErrors
	if !errors.As(err, &files) || len(files) != 2 {
		t.Fatalf("got %v, want the errors of two files", err)
	}
	if want := missing + ": no such file or directory"; files[0].Error() != want {
		t.Errorf("got %q, want %q", files[0], want)
	}
	if !errors.Is(files[1], syscall.EISDIR) || files[1].Error() != dir+": is a directory" {
		t.Errorf("got %q, want %s: is a directory", files[1], dir)
	}
	if out.String() != strings.ToUpper(entry) {
		t.Errorf("got %q", out.String())
	}
}

// A failure that stops the run stops it at that file.
func TestEachStopsRun(t *testing.T) {
	dir := t.TempDir()
	a, b := write(t, dir, "a.jsonl", entry), write(t, dir, "b.jsonl", entry)
	var seen []string
	in := &Inputs{Files: []string{a, b}, Stdout: io.Discard}
	err := in.Each(context.Background(), func(_ context.Context, name string, _ io.Reader, _ io.Writer) error {
		seen = append(seen, name)
		return &transcript.BadLineError{Name: name, Line: 1, Err: errors.New("bad")}
	})
	var bad *transcript.BadLineError
	if !errors.As(err, &bad) || len(seen) != 1 {
		t.Errorf("got %v after %v, want the first file's bad line alone", err, seen)
	}
}

// Checked is told what each input held, and its error is the input's.
func TestChecked(t *testing.T) {
	dir := t.TempDir()
	notJSON := write(t, dir, "a.jsonl", "not json\n")
	var got linecheck.Check
	in := &Inputs{Files: []string{notJSON}}
	in.Checked = func(name string, chk linecheck.Check) error {
		got = chk
		if chk.NoTranscript {
			return errors.New(name + ": no transcript")
		}
		return nil
	}
	err := in.Read(func(name string, r io.Reader) error {
		io.Copy(io.Discard, r)
		in.BadLines.Warn(&transcript.BadLineError{Name: name, Line: 1})
		return nil
	})
	if !got.NoTranscript || got.Lines != 1 {
		t.Errorf("got %+v, want no transcript of 1 line", got)
	}
	if err == nil || !strings.Contains(err.Error(), "no transcript") {
		t.Errorf("got %v, want Checked's error", err)
	}
}

// In place, each file is rewritten, and Refused words what the rewrite
// refused.
func TestEachInPlace(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.jsonl", entry)
	var out bytes.Buffer
	in := &Inputs{Files: []string{a}, Stdout: &out, InPlace: true,
		Rewrite: inplace.Options{Force: true, StateDir: t.TempDir()}}
	if err := in.Each(context.Background(), upper); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(a); string(b) != strings.ToUpper(entry) || out.Len() > 0 {
		t.Errorf("file %q, output %q: want the file rewritten", b, out.String())
	}

	in.Rewrite = inplace.Options{Quiet: 1 << 40, StateDir: t.TempDir()} // the file changed just now
	var refused string
	in.Refused = func(path string, err error) error {
		refused = path
		return nil
	}
	if err := in.Each(context.Background(), upper); err != nil || refused != a {
		t.Errorf("got %v, refused %q: want the refusal given to Refused", err, refused)
	}
}
