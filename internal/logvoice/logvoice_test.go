package logvoice

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// TestVoice: a warning is one line with its attributes, quoted where they
// hold spaces and left out where empty; records below warn are slog's
// text, and below the level nothing.
func TestVoice(t *testing.T) {
	var text bytes.Buffer
	var warned []string
	log := slog.New(New(&text, slog.LevelInfo, func(line string) { warned = append(warned, line) })).With("file", "a b.jsonl")
	log.Warn("filter failed", "err", "boom", "empty", "")
	log.Info("pass", "bytes", 3)
	log.Debug("hidden")
	if len(warned) != 1 || warned[0] != `filter failed (file="a b.jsonl", err=boom)` {
		t.Errorf("warnings %q", warned)
	}
	if got := text.String(); !strings.Contains(got, `level=INFO msg=pass file="a b.jsonl" bytes=3`) || strings.Contains(got, "hidden") || strings.Contains(got, "failed") {
		t.Errorf("text %q", got)
	}
}
