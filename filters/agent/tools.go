package agent

// Tool names and purge_control's actions.
const (
	toolPurgeControl = "purge_control"
	toolRestore      = "restore"
	toolSearch       = "search"
	toolCheckpoint   = "checkpoint"

	actionGetContext     = "get_context"
	actionRestore        = "restore"
	actionSetExtractable = "set_extractable"
)

// toolNames lists the tools, in the order they are offered.
var toolNames = []string{toolPurgeControl, toolRestore, toolSearch, toolCheckpoint}

// actions lists purge_control's actions.
var actions = []string{actionGetContext, actionRestore, actionSetExtractable}

// The descriptions are the agent's instructions (seed 000, "Agent
// Instructions"): what is extracted, when to restore, re-extraction, and
// _extractable: false.
const (
	extractionNote = "Old, large values of this session (tool results, tool-call arguments, thinking blocks, " +
		"older than the most recent messages) are moved out of the context to a store and replaced by a " +
		"placeholder [[extracted-<entry_id>]], where <entry_id> is the id of the entry they came from. Nothing " +
		"is lost: each can be put back."

	// instructions is what an MCP server tells the client about its tools.
	instructions = extractionNote + " Use restore (or purge_control) to get a value back by the entry id in " +
		"its placeholder, search to find which entry holds something, purge_control get_context to see what " +
		"was extracted, and set_extractable false to keep an entry in context for good."

	descPurgeControl = extractionNote + " Actions: " +
		"get_context lists the session, its context gauge and every entry with extracted values (id, keys, " +
		"sizes, kind, tool name, and _restored when it was restored before); " +
		"restore puts an entry's extracted values back (entry_id, and optionally keys to restore only those); " +
		"set_extractable sets _extractable on an entry (value true: always extract, false: never extract, " +
		"keep it in context for good, N: keep it for N messages). " +
		"Restored values stay for a protection window (10 minutes by default) and are extracted again after it " +
		"once they are old; if you restore the same entry again and need it long-term, set _extractable false " +
		"on it (do that for skill files and instructions you rely on)."

	descRestore = extractionNote + " Call restore with the entry_id from a placeholder when you need the " +
		"content back; give keys (as listed by purge_control get_context, or any name in them such as " +
		"\"content\" or \"text\") to restore only those. The result says which keys came back and holds their " +
		"values. Restored values are protected for a while (10 minutes by default), then extracted again; a " +
		"second restore of the same entry suggests setting _extractable false with purge_control " +
		"set_extractable, which keeps the entry in context for good."

	descSearch = "Full-text search (BM25) over everything bs removed from sessions: extracted values and " +
		"evicted entries. Use it to find which [[extracted-<entry_id>]] holds what you are looking for, then " +
		"restore it. Each hit gives the entry id, the key, a snippet with the match in [brackets] and the " +
		"restore call that brings it back."

	descCheckpoint = "The latest structured checkpoint of this session (task, decisions, files, failures, " +
		"open threads), rendered as text. Read it after a compaction to pick up where the session was."
)

// PurgeControlArgs are purge_control's arguments.
type PurgeControlArgs struct {
	Action  string   `json:"action" jsonschema:"get_context, restore or set_extractable"`
	Session string   `json:"session,omitempty" jsonschema:"the session: an OpenClaw session key, a session id, or a path inside the served sessions directory (needed for get_context and set_extractable; a restore finds the session holding the entry's placeholder)"`
	EntryID string   `json:"entry_id,omitempty" jsonschema:"the id in the placeholder [[extracted-<entry_id>]]"`
	Entry   string   `json:"entry,omitempty" jsonschema:"the same as entry_id (the shape of seed 000's redacted call)"`
	Keys    []string `json:"keys,omitempty" jsonschema:"restore only these keys (JSON Pointers as get_context lists them, or any name in them such as content or text); all when absent"`
	Value   any      `json:"value,omitempty" jsonschema:"for set_extractable: true (always extract), false (never: keep in context), or an integer N (keep for N messages)"`
}

// RestoreArgs are restore's arguments (seed 000's shape).
type RestoreArgs struct {
	Session string   `json:"session,omitempty" jsonschema:"the session: an OpenClaw session key, a session id, or a path inside the served sessions directory; when absent, the session holding the entry's placeholder"`
	EntryID string   `json:"entry_id" jsonschema:"the id in the placeholder [[extracted-<entry_id>]]"`
	Keys    []string `json:"keys,omitempty" jsonschema:"restore only these keys (JSON Pointers as get_context lists them, or any name in them such as content or text); all when absent"`
}

// SearchArgs are search's arguments.
type SearchArgs struct {
	Query   string `json:"query" jsonschema:"words or a phrase to look for"`
	Limit   int    `json:"limit,omitempty" jsonschema:"at most this many hits (default 10)"`
	Session string `json:"session,omitempty" jsonschema:"only hits from this session: an OpenClaw session key, a session id, or a path inside the served sessions directory"`
}

// CheckpointArgs are checkpoint's arguments.
type CheckpointArgs struct {
	Session string `json:"session,omitempty" jsonschema:"the session: an OpenClaw session key, a session id, or a path inside the served sessions directory"`
}
