// Package checkpoint builds the structured checkpoints of seed 003 (the
// OpenClaw Context Manager): the working state of a session, taken from the
// transcript mechanically, with no model call, written to disk before a
// compaction can lose it and rendered back as a lean text for the context.
// It also answers Claude Code's hook events (Hook) and lists the
// checkpoints kept (Dir.WriteKeys, Dir.WriteList).
package checkpoint

import (
	"bytes"
	"io"
	"strings"

	"go.yaml.in/yaml/v3"
)

// schema and schemaVersion name the format (seed 003 §5.3).
const (
	schema        = "openclaw/checkpoint"
	schemaVersion = 1
)

// Caps from seed 003 §12, so a long session gives a checkpoint of bounded
// size.
const (
	maxDecisions = 50
	maxExchanges = 8
	maxTools     = 100
	maxFiles     = 100
	maxFailures  = 20
	maxOpenItems = 20
	maxLearnings = 50
)

// Checkpoint is one checkpoint file. The field order is the order of the
// schema; encode writes it so.
type Checkpoint struct {
	Schema        string     `yaml:"schema"`
	SchemaVersion int        `yaml:"schema_version"`
	Meta          Meta       `yaml:"meta"`
	Working       Working    `yaml:"working"`
	Decisions     []Decision `yaml:"decisions"`
	Resources     Resources  `yaml:"resources"`
	Thread        Thread     `yaml:"thread"`
	OpenItems     []string   `yaml:"open_items"`
	Learnings     []string   `yaml:"learnings"`
}

// Meta identifies the checkpoint and the session it was taken from.
type Meta struct {
	CheckpointID       string     `yaml:"checkpoint_id"`
	SessionKey         string     `yaml:"session_key"`
	SessionFile        string     `yaml:"session_file"`
	CreatedAt          string     `yaml:"created_at"`
	Trigger            string     `yaml:"trigger"`
	CompactionCount    int        `yaml:"compaction_count"`
	TokenUsage         TokenUsage `yaml:"token_usage"`
	PreviousCheckpoint string     `yaml:"previous_checkpoint"` // "" is written as null
	Channel            string     `yaml:"channel"`
	AgentID            string     `yaml:"agent_id"`
}

// TokenUsage is the gauge's reading when the checkpoint was taken.
type TokenUsage struct {
	InputTokens   int     `yaml:"input_tokens"`
	ContextWindow int     `yaml:"context_window"`
	Utilization   float64 `yaml:"utilization"`
}

// Working is what the agent was doing.
type Working struct {
	Topic        string    `yaml:"topic"`
	Status       string    `yaml:"status"` // in_progress, idle or waiting_for_user
	Interrupted  bool      `yaml:"interrupted"`
	LastToolCall *ToolCall `yaml:"last_tool_call"`
	NextAction   string    `yaml:"next_action"`
}

// The values of Working.Status.
const (
	inProgress     = "in_progress"
	idle           = "idle"
	waitingForUser = "waiting_for_user"
)

// ToolCall is the call a session stopped in.
type ToolCall struct {
	Name          string `yaml:"name"`
	ParamsSummary string `yaml:"params_summary"`
}

// Decision is a short user reply to a long agent response (§7.2 Layer B).
type Decision struct {
	ID   string `yaml:"id"`
	What string `yaml:"what"`
	When string `yaml:"when"`
}

// Resources are the files and tools the session used.
type Resources struct {
	FilesRead     []string  `yaml:"files_read"`
	FilesModified []string  `yaml:"files_modified"`
	ToolsUsed     []string  `yaml:"tools_used"`
	Failures      []Failure `yaml:"failures"`
}

// Failure is a tool result the runtime marked as an error.
type Failure struct {
	Tool string `yaml:"tool"`
	Gist string `yaml:"gist"`
	When string `yaml:"when"`
}

// Thread is the conversation in brief (§11.2).
type Thread struct {
	Summary      string     `yaml:"summary"`
	KeyExchanges []Exchange `yaml:"key_exchanges"`
}

// Exchange is one message of the thread, by "user" or "agent".
type Exchange struct {
	Role string `yaml:"role"`
	Gist string `yaml:"gist"`
}

// decode parses a checkpoint file.
func decode(data []byte) (*Checkpoint, error) {
	var cp Checkpoint
	if err := yaml.Unmarshal(data, &cp); err != nil {
		return nil, err
	}
	cp.trim()
	return &cp, nil
}

// trim drops the newline that block scalars add to free text.
func (cp *Checkpoint) trim() {
	t := func(s *string) { *s = strings.TrimRight(*s, "\n") }
	t(&cp.Working.Topic)
	t(&cp.Working.NextAction)
	t(&cp.Thread.Summary)
	for i := range cp.Decisions {
		t(&cp.Decisions[i].What)
	}
	for i := range cp.Thread.KeyExchanges {
		t(&cp.Thread.KeyExchanges[i].Gist)
	}
	if c := cp.Working.LastToolCall; c != nil {
		t(&c.ParamsSummary)
	}
	for i := range cp.Resources.Failures {
		t(&cp.Resources.Failures[i].Gist)
	}
}

// encode writes the checkpoint as YAML by the safety rules of §5.1: free
// text as block scalars, identifiers and tool names as quoted strings, and
// only fixed keys, so no user text can become a key or break the document.
func (cp *Checkpoint) encode(w io.Writer) error {
	var buf bytes.Buffer
	buf.WriteString("# OpenClaw Checkpoint Schema v1, written by bs checkpoint\n")
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(cp.node()); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func (cp *Checkpoint) node() *yaml.Node {
	m := cp.Meta
	meta := mapping(
		"checkpoint_id", quoted(m.CheckpointID),
		"session_key", quoted(m.SessionKey),
		"session_file", quoted(m.SessionFile),
		"created_at", quoted(m.CreatedAt),
		"trigger", quoted(m.Trigger),
		"compaction_count", integer(m.CompactionCount),
		"token_usage", mapping(
			"input_tokens", integer(m.TokenUsage.InputTokens),
			"context_window", integer(m.TokenUsage.ContextWindow),
			"utilization", plain(formatRatio(m.TokenUsage.Utilization), "!!float"),
		),
		"previous_checkpoint", quotedOrNull(m.PreviousCheckpoint),
		"channel", quotedOrNull(m.Channel),
		"agent_id", quotedOrNull(m.AgentID),
	)
	w := cp.Working
	last := null()
	if w.LastToolCall != nil {
		last = mapping("name", quoted(w.LastToolCall.Name), "params_summary", block(w.LastToolCall.ParamsSummary))
	}
	working := mapping(
		"topic", block(w.Topic),
		"status", quoted(w.Status),
		"interrupted", boolean(w.Interrupted),
		"last_tool_call", last,
		"next_action", block(w.NextAction),
	)
	decisions := sequence()
	for _, d := range cp.Decisions {
		decisions.Content = append(decisions.Content, mapping("id", quoted(d.ID), "what", block(d.What), "when", quoted(d.When)))
	}
	failures := sequence()
	for _, f := range cp.Resources.Failures {
		failures.Content = append(failures.Content, mapping("tool", quoted(f.Tool), "gist", block(f.Gist), "when", quoted(f.When)))
	}
	resources := mapping(
		"files_read", quotedList(cp.Resources.FilesRead),
		"files_modified", quotedList(cp.Resources.FilesModified),
		"tools_used", quotedList(cp.Resources.ToolsUsed),
		"failures", failures,
	)
	exchanges := sequence()
	for _, x := range cp.Thread.KeyExchanges {
		exchanges.Content = append(exchanges.Content, mapping("role", quoted(x.Role), "gist", block(x.Gist)))
	}
	thread := mapping("summary", block(cp.Thread.Summary), "key_exchanges", exchanges)
	return mapping(
		"schema", quoted(cp.Schema),
		"schema_version", integer(cp.SchemaVersion),
		"meta", meta,
		"working", working,
		"decisions", decisions,
		"resources", resources,
		"thread", thread,
		"open_items", quotedList(cp.OpenItems),
		"learnings", quotedList(cp.Learnings),
	)
}

// --- yaml.Node construction ----------------------------------------------

func mapping(kv ...any) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i < len(kv); i += 2 {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: kv[i].(string)}, kv[i+1].(*yaml.Node))
	}
	return n
}

func sequence() *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode} }

func quotedList(items []string) *yaml.Node {
	n := sequence()
	if len(items) == 0 {
		n.Style = yaml.FlowStyle // []
	}
	for _, s := range items {
		n.Content = append(n.Content, quoted(s))
	}
	return n
}

func plain(v, tag string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: v} }

func integer(n int) *yaml.Node { return plain(itoa(n), "!!int") }

func boolean(b bool) *yaml.Node {
	if b {
		return plain("true", "!!bool")
	}
	return plain("false", "!!bool")
}

func null() *yaml.Node { return plain("null", "!!null") }

func quoted(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func quotedOrNull(s string) *yaml.Node {
	if s == "" {
		return null()
	}
	return quoted(s)
}

// block is free text as a literal block scalar ("|"). Text the emitter
// cannot write as a block (control characters, say) it writes quoted
// instead, so the document always parses back to the same text.
func block(s string) *yaml.Node {
	if s == "" {
		return quoted("")
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s + "\n", Style: yaml.LiteralStyle}
}
