package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/webui"
)

// uiEnv is a session file, a store and an index in a temporary
// directory, with every bs directory pointing there.
func uiEnv(t *testing.T) (session, store string, original []byte) {
	t.Helper()
	work := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("BS_INDEX", filepath.Join(work, "index.db"))
	t.Setenv("BS_NOW", "2026-03-08T13:00:00Z")
	original, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sample", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	session = filepath.Join(work, "s.jsonl")
	if err := os.WriteFile(session, original, 0o600); err != nil {
		t.Fatal(err)
	}
	return session, filepath.Join(work, "store"), original
}

// digits hides the durations a message names (how long ago a file
// changed), which differ from run to run.
var digits = regexp.MustCompile(`[0-9.]+(ms|µs|s)\b`)

// The app's actions are bs's own command lines: a live file is refused
// with the message 'bs extract -i' prints, and what they write is what
// the command line writes.
func TestUICommandsAreTheCLI(t *testing.T) {
	session, store, original := uiEnv(t)
	u := &uiCommands{bs: []string{"bs"}, flags: map[string][]string{"store": {"--store=" + store}}}
	cmds := webui.CommandLines{Run: u.run}
	ctx := context.Background()

	// A preview changes nothing: not the file, the store or the index.
	out := filepath.Join(t.TempDir(), "out.jsonl")
	if err := cmds.Preview(ctx, "extract", session, out); err != nil {
		t.Fatal(err)
	}
	preview, _ := os.ReadFile(out)
	if !bytes.Contains(preview, []byte("[[extracted-")) {
		t.Error("the preview moved nothing")
	}
	if b, _ := os.ReadFile(session); !bytes.Equal(b, original) {
		t.Error("a preview changed the file")
	}
	for _, p := range []string{store, os.Getenv("BS_INDEX"), os.Getenv("BS_INDEX") + ".pending"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("a preview made %s", p)
		}
	}

	// The file was just written: within the quiet period.
	err := cmds.Apply(ctx, "extract", session)
	var ce *webui.CommandError
	if !errors.As(err, &ce) || !ce.Busy {
		t.Fatalf("apply to a live file: %v, want a busy CommandError", err)
	}
	cli, code := bsRun(t, "extract", "--store", store, "-i", session)
	if code != exitFailure {
		t.Fatalf("bs extract -i of a live file: exit %d", code)
	}
	if got, want := digits.ReplaceAllString(ce.Message, "T"), digits.ReplaceAllString(strings.TrimSpace(cli), "T"); got != want {
		t.Errorf("the app's refusal\n%s\nis not the command line's\n%s", got, want)
	}
	if b, _ := os.ReadFile(session); !bytes.Equal(b, original) {
		t.Fatal("a refused apply changed the file")
	}

	u.flags["quiet-period"] = []string{"--quiet-period=0s"}

	// Applied, it writes what 'bs extract -i' writes, and round-trips.
	twin := filepath.Join(filepath.Dir(session), "twin.jsonl")
	os.WriteFile(twin, original, 0o600)
	if err := cmds.Apply(ctx, "extract", session); err != nil {
		t.Fatal(err)
	}
	if out, code := bsRun(t, "extract", "--store", store, "--quiet-period", "0s", "-i", twin); code != 0 {
		t.Fatal(out)
	}
	applied, _ := os.ReadFile(session)
	if want, _ := os.ReadFile(twin); !bytes.Equal(applied, want) {
		t.Error("the app's extract differs from the command line's")
	}
	if !bytes.Equal(applied, preview) {
		t.Error("the preview differs from what was applied")
	}
	if all, code := bsRunOut(t, "restore", "--all", "--store", store, session); code != 0 || !bytes.Equal(all, original) {
		t.Errorf("restore --all after the app's extract: exit %d, equal %v", code, bytes.Equal(all, original))
	}

	// Restore one entry and set _extractable, as the command line does.
	id := regexp.MustCompile(`\[\[extracted-([^\]]+)\]\]`).FindSubmatch(applied)[1]
	res, err := cmds.Restore(ctx, session, string(id))
	if err != nil || !bytes.Contains(res, []byte(`"restored":true`)) {
		t.Fatalf("restore: %s, %v", res, err)
	}
	if out, code := bsRun(t, "restore", "--store", store, "--quiet-period", "0s", "--id", string(id), "--result", filepath.Join(t.TempDir(), "r"), "-i", twin); code != 0 {
		t.Fatal(out)
	}
	if err := cmds.SetExtractable(ctx, session, string(id), "false"); err != nil {
		t.Fatal(err)
	}
	if out, code := bsRun(t, "restore", "--store", store, "--quiet-period", "0s", "--set-extractable", string(id)+"=false", "-i", twin); code != 0 {
		t.Fatal(out)
	}
	got, _ := os.ReadFile(session)
	want, _ := os.ReadFile(twin)
	if !bytes.Equal(got, want) || !bytes.Contains(got, []byte(`"_extractable":false`)) {
		t.Error("the app's restore and set-extractable differ from the command line's")
	}
	if _, err := cmds.Restore(ctx, session, "no-such-entry"); !errors.As(err, &ce) || ce.Busy || !strings.HasPrefix(ce.Message, "bs: restore: ") {
		t.Errorf("restore of an unknown entry: %v", err)
	}

	// Stats are bs stats --json.
	rep, err := cmds.Stats(ctx, session)
	if err != nil || !bytes.Contains(rep, []byte(`"file":"`+session)) {
		t.Errorf("stats: %.80s, %v", rep, err)
	}
}

func TestUIRefusals(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var stderr bytes.Buffer
	if code := run([]string{"bs", "ui"}, strings.NewReader(""), io.Discard, &stderr); code != exitUsage || !strings.Contains(stderr.String(), "no sessions to serve") ||
		!strings.Contains(stderr.String(), "(~/.openclaw/agents, ~/.pi/agent/sessions, ~/.claude/projects, ~/.codex/sessions)") {
		t.Errorf("bs ui without sessions: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"bs", "ui", "--addr", "256.0.0.1:1", t.TempDir()}, strings.NewReader(""), io.Discard, &stderr); code != exitFailure || !strings.Contains(stderr.String(), "cannot listen on 256.0.0.1:1") {
		t.Errorf("bs ui on a bad address: exit %d, %s", code, stderr.String())
	}
	stderr.Reset()
	if code := run([]string{"bs", "ui", "--context-window", "-1", t.TempDir()}, strings.NewReader(""), io.Discard, &stderr); code != exitUsage {
		t.Errorf("bs ui --context-window -1: exit %d, %s", code, stderr.String())
	}
}
