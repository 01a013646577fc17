package webui

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

// TestCorpusDialectAnswers pins what the web UI takes from each runtime's
// dialect on real transcripts: a session's title and project (its
// summary), and of one entry its type, the calls it makes and the call it
// answers.
func TestCorpusDialectAnswers(t *testing.T) {
	corpustest.Files(t, "*/*.jsonl") // skips when the corpus is not there
	const codexRollout = "codex/codemie__rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
	for _, c := range []struct {
		file           string
		title, workDir string
		line           int
		typ, answers   string
		calls          []string
	}{
		{"openclaw/pi-mono__session.jsonl", `do you know how to create a custom tool? Yes! Custom tools (also called "skills") in pi a…`, "/Users/badlogic/workspaces/pi-mono",
			4, "message", "toolu_01Eiija7gxqTyYUmbwqxVfUJ", nil},
		{"openclaw/pi-mono__session.jsonl", `do you know how to create a custom tool? Yes! Custom tools (also called "skills") in pi a…`, "/Users/badlogic/workspaces/pi-mono",
			3, "message", "", []string{"toolu_01Eiija7gxqTyYUmbwqxVfUJ"}},
		{"claude-code/spotter__short.jsonl", "mix phx.server doesnt seem to start", "/home/marco/projects/spotter",
			11, "user", "toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", nil},
		// Claude Code's caveat before a user's local commands is no title.
		{"claude-code/codemie__session-624a4a58.jsonl", "@src/providers/plugins/sso/ARCHITECTURE-REFACTORING.md review old and current implementat…", "/Users/user/repo",
			2, "user", "", nil},
		// The title passes over the AGENTS.md instructions Codex sends as
		// the user's first message; a call answers no call, its result
		// and the event that ends the command do.
		{codexRollout, "show tools", "/Users/Sample_User/repos/codemie-ai/codemie-code",
			9, "response_item:function_call", "", []string{"call_Y2p6KmqwoTtpi6atpDPuxC5M"}},
		{codexRollout, "show tools", "/Users/Sample_User/repos/codemie-ai/codemie-code",
			11, "response_item:function_call_output", "call_Y2p6KmqwoTtpi6atpDPuxC5M", nil},
		{codexRollout, "show tools", "/Users/Sample_User/repos/codemie-ai/codemie-code",
			12, "event_msg:exec_command_end", "call_Y2p6KmqwoTtpi6atpDPuxC5M", nil},
		{"codex/codemie__turn-1.jsonl", "Hello, Codex! Please explain what you do.", "/home/user/project",
			1, "session_meta", "", nil},
		{"brainsurgeon/test-agent-1__session-1771692606-157d9b2e.jsonl", "This is test message 4 from test agent 1 session 2", "",
			2, "tool_call", "", []string{""}},
	} {
		fc := newFileCache()
		fi, f, err := fc.get(filepath.Join(corpustest.Dir(), c.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := fi.summary(f)
		if err != nil {
			t.Fatal(err)
		}
		if sum.title != c.title || sum.workDir != c.workDir {
			t.Errorf("%s: title %q, project %q; want %q, %q", c.file, sum.title, sum.workDir, c.title, c.workDir)
		}
		body, err := fi.line(f, c.line-1)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		var p transcript.Parser
		ev := view(&p, body, c.line, fi.dialect)
		if ev.Type != c.typ || ev.Answers != c.answers || !slices.Equal(ev.CallIDs, c.calls) {
			t.Errorf("%s line %d: type %q, answers %q, calls %q; want %q, %q, %q", c.file, c.line, ev.Type, ev.Answers, ev.CallIDs, c.typ, c.answers, c.calls)
		}
	}
}
