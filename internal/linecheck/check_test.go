package linecheck

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// readAll is a filter that reads its input through, reporting every line
// that is not a JSON object as bad.
func readAll(b *BadLines, name string) func(io.Reader) error {
	return func(r io.Reader) error {
		data, err := io.ReadAll(r)
		for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			if !strings.HasPrefix(l, "{") {
				b.Warn(&transcript.BadLineError{Name: name, Line: i + 1, Err: errors.New("x")})
			}
		}
		return err
	}
}

// TestRun: from a stream and from a file alike, the bad lines past the
// warned ones are counted, an input of bad lines only is no transcript
// (when whole), and a forced format its lines do not read as is told.
func TestRun(t *testing.T) {
	codex := `{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}` + "\n"
	allBad := strings.Repeat("not json\n", maxWarnings+2)
	file := filepath.Join(t.TempDir(), "bad.jsonl")
	if err := os.WriteFile(file, []byte(allBad), 0o600); err != nil {
		t.Fatal(err)
	}
	open := func() io.Reader {
		f, err := os.Open(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	for name, r := range map[string]func() io.Reader{"stream": func() io.Reader { return strings.NewReader(allBad) }, "file": open} {
		var b BadLines
		chk, err := b.Run("in", r(), transcript.Unknown, true, readAll(&b, "in"))
		if err != nil || !chk.NoTranscript || chk.Lines != maxWarnings+2 || chk.Unwarned != 2 {
			t.Errorf("%s: %+v, %v", name, chk, err)
		}
		if chk, _ := b.Run("in", r(), transcript.Unknown, false, readAll(&b, "in")); chk.NoTranscript {
			t.Errorf("%s: part of an input said to be no transcript", name)
		}
	}
	var b BadLines
	var chk Check
	forced, err := transcript.ParseDialect("openclaw")
	if err != nil {
		t.Fatal(err)
	}
	chk, err = b.Run("c", strings.NewReader(codex), forced, true, readAll(&b, "c"))
	if err != nil || chk.Detected == transcript.Unknown || chk.Detected == forced || chk.NoTranscript {
		t.Errorf("a Codex rollout read as %v: %+v, %v", forced, chk, err)
	}
	stop := errors.New("stop")
	if _, err := b.Run("e", strings.NewReader(codex), forced, true, func(io.Reader) error { return stop }); err != stop {
		t.Errorf("f's error: %v", err)
	}
}
