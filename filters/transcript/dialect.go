package transcript

import (
	"bytes"
	"fmt"
	"strings"
)

// Dialect is a transcript format as a runtime writes it.
type Dialect int

const (
	Unknown      Dialect = iota
	OpenClaw             // OpenClaw and pi sessions, v1 (legacy) and v2–v3
	ClaudeCode           // Claude Code project transcripts
	Codex                // Codex CLI rollouts
	BrainSurgeon         // the flat format of the BrainSurgeon spec and its fixtures
	Generic              // {"role","content"} chat lines
)

var dialectNames = map[Dialect]string{
	OpenClaw:     "openclaw",
	ClaudeCode:   "claude-code",
	Codex:        "codex",
	BrainSurgeon: "brainsurgeon",
	Generic:      "generic",
}

func (d Dialect) String() string {
	if s, ok := dialectNames[d]; ok {
		return s
	}
	return "unknown"
}

// DialectNames lists the names ParseDialect accepts, for help text.
const DialectNames = "auto, openclaw (pi), claude-code (claude), codex, brainsurgeon, generic"

// DialectList lists the names of the dialects ParseDialect accepts, with
// auto first, as they are written (without the aliases).
func DialectList() []string {
	return []string{"auto", "openclaw", "claude-code", "codex", "brainsurgeon", "generic"}
}

// ParseDialect parses a --format value; "" and "auto" mean detect.
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return Unknown, nil
	case "openclaw", "pi":
		return OpenClaw, nil
	case "claude-code", "claude", "claudecode":
		return ClaudeCode, nil
	case "codex":
		return Codex, nil
	case "brainsurgeon":
		return BrainSurgeon, nil
	case "generic", "chat":
		return Generic, nil
	}
	return Unknown, fmt.Errorf("unknown format %q (want %s)", s, DialectNames)
}

// Classify guesses the dialect of one parsed line, or Unknown when the line
// does not say (a blank line, a snapshot that several dialects could write).
func Classify(t *Tree) Dialect {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return Unknown
	}
	typ := t.Str(t.Get(0, "type"))
	switch {
	case t.Get(0, "payload") >= 0 && typ != "":
		return Codex
	case t.Get(0, "uuid") >= 0 || t.Get(0, "parentUuid") >= 0 || t.Get(0, "leafUuid") >= 0:
		return ClaudeCode
	case t.Get(0, "sessionId") >= 0 && (t.Get(0, "message") >= 0 || t.Get(0, "requestId") >= 0):
		return ClaudeCode
	case typ == "file-history-snapshot" || typ == "queue-operation" || typ == "summary":
		return ClaudeCode
	case typ == "session" || (typ == "message" && t.Get(t.Get(0, "message"), "role") >= 0):
		return OpenClaw
	case typ == "model_change" || typ == "thinking_level_change" || typ == "compaction" || typ == "custom_message" || typ == "branch_summary":
		return OpenClaw
	case t.Get(0, "__id") >= 0 && brainSurgeonTypes[typ]:
		return BrainSurgeon
	case brainSurgeonTypes[typ]:
		return BrainSurgeon
	case t.Get(0, "role") >= 0 || t.Get(0, "messages") >= 0:
		return Generic
	}
	return Unknown
}

var brainSurgeonTypes = map[string]bool{
	"user_message": true, "assistant_message": true, "tool_call": true, "tool_result": true, "thinking": true,
}

// DetectLines is how many leading lines detection looks at before it
// settles for Generic.
const DetectLines = 64

// DetectIn is the dialect the first lines of head say (Classify, over at
// most DetectLines of its lines), or Unknown when none says. head may end
// in the middle of a line: that piece is not read.
func DetectIn(head []byte) Dialect {
	var p Parser
	for n := 0; n < DetectLines && len(head) > 0; n++ {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			break
		}
		line := head[:i]
		head = head[i+1:]
		if t, err := p.Parse(line); err == nil {
			if d := Classify(t); d != Unknown {
				return d
			}
		}
	}
	return Unknown
}
