package checkpoint

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHook: each Claude Code event does what the hook protocol says of
// it, and what it gives Claude Code is hookSpecificOutput JSON.
func TestHook(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(transcript, []byte(usageSession(150000)), 0o600); err != nil { // 75%: below the threshold
		t.Fatal(err)
	}
	opt := Defaults()
	opt.Dir, opt.SessionKey, opt.Now, opt.Inject = Dir{Root: filepath.Join(dir, "cp")}, "k", now, false
	handle := func(event, path string) HookResult {
		t.Helper()
		res, err := Hook{HookEventName: event, TranscriptPath: path}.Handle(opt)
		if err != nil {
			t.Fatalf("%s: %v", event, err)
		}
		return res
	}
	if res := handle("Notification", transcript); res.Ran != nil || res.Context != "" {
		t.Errorf("an event checkpoints do not act on: %+v", res)
	}
	if res := handle("UserPromptSubmit", transcript); res.Ran == nil || res.Ran.Written != nil || !strings.Contains(res.Context, "75%") {
		t.Errorf("UserPromptSubmit below the threshold: %+v", res)
	}
	res := handle("PreCompact", transcript)
	if res.Ran == nil || res.Ran.Written == nil || res.Ran.Written.Meta.Trigger != TriggerCompaction || res.Context != "" {
		t.Fatalf("PreCompact: %+v", res)
	}
	res = handle("SessionStart", "")
	if !strings.Contains(res.Context, Render(latest(t, opt))) {
		t.Errorf("SessionStart after a compaction: %q", res.Context)
	}
	if _, err := (Hook{HookEventName: "SessionEnd"}).Handle(opt); !errors.Is(err, ErrHookNoTranscript) {
		t.Errorf("SessionEnd without a transcript: %v", err)
	}
	opt.SessionKey = ""
	if _, err := (Hook{HookEventName: "SessionStart"}).Handle(opt); !errors.Is(err, ErrHookNoSession) {
		t.Errorf("SessionStart without a key: %v", err)
	}
	var out bytes.Buffer
	if err := WriteHookContext(&out, "SessionStart", "a <b>"); err != nil || out.String() != `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"a <b>"}}`+"\n" {
		t.Errorf("WriteHookContext: %q, %v", out.String(), err)
	}
	out.Reset()
	if WriteHookContext(&out, "Stop", ""); out.Len() != 0 {
		t.Errorf("WriteHookContext of no text wrote %q", out.String())
	}
}

// latest is the latest checkpoint of opt's key.
func latest(t *testing.T, opt Options) *Checkpoint {
	t.Helper()
	cp, _, err := opt.Dir.Latest(opt.SessionKey)
	if err != nil {
		t.Fatal(err)
	}
	return cp
}
