package transcript

// PruneKind is what a line is to a context pruner that counts characters
// the way OpenClaw's session pruning does (bs trim).
type PruneKind uint8

const (
	PruneNone      PruneKind = iota // not part of the context (headers, settings, progress)
	PruneUser                       // a user message: the first one ends the bootstrap guard
	PruneAssistant                  // an assistant message, or a later part of one
	PruneResults                    // a message carrying tool results
	PruneOther                      // any other message in context: a fixed share
)

// PruneView is what one line tells a context pruner (Dialect.Prune): what
// it is, which of its values count as the pruner counts characters, and
// the tool results it may prune. The dialect names the values; the pruner
// counts them.
type PruneView struct {
	Kind PruneKind
	ID   string // the entry's own id
	// Keepable says a compaction may name the entry's ID as the first it
	// keeps (pi): the pruner remembers it to find where the context
	// starts.
	Keepable bool
	// Texts are strings counted by their length; Contents are message
	// contents (a string, or text and image blocks) counted as the
	// pruner counts a user message; Raws are values counted by the length
	// of their JSON text; Images are images counted besides; EmptyArgs
	// are tool calls without arguments, counted as JSON.stringify({}).
	Texts, Contents, Raws []int
	Images, EmptyArgs     int
	// Results are the tool results, in order.
	Results []PruneResult
	Calls   []PruneCall // the tool calls the line makes

	Model  string
	Time   string // the line's timestamp
	TimeMs int64  // a unix-millisecond timestamp, when that is all there is
	// MsgID is the response an assistant line belongs to (Claude Code
	// splits one over lines); SideItem marks an assistant item that
	// continues the assistant side of the line before (Codex,
	// BrainSurgeon write one item per line).
	MsgID    string
	SideItem bool
	// Prompt is a user prompt the runtime records outside the messages
	// it sends (Codex's user_message event): it ends the bootstrap guard
	// as a user message does, and counts for nothing.
	Prompt bool
	// A compaction: the context starts after it, or at the entry it
	// keeps (by id, or by number; KeptIndex stays as it was given when
	// the line names none).
	Compaction bool
	KeptID     string
	KeptIndex  int
	// KeptByID: the compaction names its first kept entry by id (even
	// an empty one), so a number it also carries is not read.
	KeptByID bool
}

// PruneResult is one tool result: its content (node), the call it
// answers and the tool, where the line says them, and the type of the
// text block an array of blocks becomes when it is pruned.
type PruneResult struct {
	Node         int
	CallID, Tool string
	Block        string
}

// PruneCall is a tool call.
type PruneCall struct{ ID, Name string }

// firstID is the first of fields that holds a non-empty string id.
func firstID(t *Tree, fields ...string) string {
	for _, name := range fields {
		if n := t.Get(0, name); n >= 0 && t.Nodes[n].Kind == '"' {
			if id := t.Str(n); id != "" {
				return id
			}
		}
	}
	return ""
}
