package transcript

import (
	"slices"
	"testing"
)

// TestConverseLeavesOutInserted: what a runtime puts in a user message of
// its own accord (Claude Code's reminders, Codex's environment) is not
// told as the user's text; what the user wrote is, also when it begins
// as another runtime's insertions do.
func TestConverseLeavesOutInserted(t *testing.T) {
	cases := []struct {
		dialect string
		lines   []string
		want    []string
	}{
		{"claude-code", []string{
			`{"type":"user","uuid":"u1","sessionId":"s","timestamp":"2026-02-20T10:00:00.000Z","message":{"role":"user","content":"<system-reminder>be brief</system-reminder>"}}`,
			`{"type":"user","uuid":"u2","sessionId":"s","timestamp":"2026-02-20T10:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"  [Request interrupted by user]"}]}}`,
			`{"type":"user","uuid":"u3","sessionId":"s","timestamp":"2026-02-20T10:00:02.000Z","message":{"role":"user","content":"<environment_context> is a Codex tag"}}`,
		}, []string{"<environment_context> is a Codex tag"}},
		{"codex", []string{
			`{"timestamp":"2026-02-20T10:00:00.500Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>cwd</environment_context>"}]}}`,
			`{"timestamp":"2026-02-20T10:00:01.500Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<system-reminder> is Claude Code's"}]}}`,
		}, []string{"<system-reminder> is Claude Code's"}},
	}
	for _, c := range cases {
		d, err := ParseDialect(c.dialect)
		if err != nil {
			t.Fatal(err)
		}
		var texts []string
		var p Parser
		for _, line := range c.lines {
			tree, err := p.Parse([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, UserTexts(d, tree)...)
		}
		if !slices.Equal(texts, c.want) {
			t.Errorf("%s: user texts %q, want %q", c.dialect, texts, c.want)
		}
	}
}
