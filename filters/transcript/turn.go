package transcript

import (
	"strings"
	"time"
)

// Turn is what one line is to a conversation's turns (Dialect.Turn): a
// turn runs from a user's prompt to the assistant's last reply before the
// next one, with the tool calls and results between.
type Turn struct {
	Prompt    bool // a user message that starts a turn
	Assistant bool // an assistant message: a candidate final reply
	// Echo is a prompt the runtime records beside its message item
	// (Codex's user_message event): it starts a turn unless it echoes
	// the item just before, or the item after echoes it.
	Echo      bool
	Result    bool // carries a tool result
	Failed    bool // a tool result that says its call failed
	Interrupt bool // the user stopped the turn: it ends there
	MaxTurns  bool // the runtime records a stop at its max-turns limit
	// Call is a tool call on a line of its own that carries no id, and
	// ByOrder a result that answers the call before it, for a runtime
	// that pairs them by order (BrainSurgeon's flat format).
	Call, ByOrder bool
	// Issued and Answered are the ids of the tool calls the line makes
	// and answers.
	Issued, Answered []string
}

// EntryText is the text of an entry's text values (not tool calls,
// results or thinking), decoded up to about limit bytes.
func EntryText(t *Tree, e *Entry, limit int) string {
	var b strings.Builder
	for _, v := range e.Values {
		if v.Kind != Text || v.Block != "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		b.WriteString(t.StrPrefix(v.Measure, limit-b.Len()))
		if b.Len() >= limit {
			break
		}
	}
	return b.String()
}

// maxTurnsStop reports whether line t records a stop at a max-turns
// limit in the members the runtimes use for a stop reason.
func maxTurnsStop(t *Tree) bool {
	stop := false
	for _, f := range []string{"stop_reason", "stopReason"} {
		for _, n := range []int{t.Get(0, f), t.Path(0, "message", f)} {
			if s := t.Str(n); s == "max_turns" || s == "error_max_turns" {
				stop = true
			}
		}
	}
	return stop
}

// ids appends to list the id, unless it is empty.
func ids(list []string, id string) []string {
	if id == "" {
		return list
	}
	return append(list, id)
}

// Member is one member of a JSON object, its value raw.
type Member struct {
	Name string
	Raw  []byte
}

// StandIn is what a filter knows of a turn when it writes the assistant
// entry that stands for it (archive's synthetic entry), kept up to date
// by Dialect.FollowTurn as the turn's lines go by.
type StandIn struct {
	ID     string // the id the entry takes: the turn's last entry's, "" if none
	Parent string // the prompt's id, which it hangs from
	// Time is the raw timestamp of the turn's last line, where the
	// runtime's stand-in carries one (nil: none).
	Time []byte
	// What the runtime records of the last answer and repeats on every
	// line, raw: pi's message timestamp, api, provider and model; the
	// envelope members of Claude Code's or BrainSurgeon's lines.
	MsgTime, API, Provider, Model []byte
	Envelope                      []Member
	// Key is the filter's id for the turn, for ids the entry makes.
	Key string
}

// rawOr is b, or fallback when b is empty.
func rawOr(b, fallback []byte) []byte {
	if len(b) > 0 {
		return b
	}
	return fallback
}

// StandInNote is the text the stand-in entry carries and the member that
// marks it as the filter's (Field, with its raw JSON value Meta).
type StandInNote struct {
	Text  string
	Field string
	Meta  []byte
	Now   time.Time
}

// object builds a JSON object member by member.
type object struct{ b []byte }

func (o *object) member(name string, raw []byte) {
	if len(o.b) == 0 {
		o.b = append(o.b, '{')
	} else {
		o.b = append(o.b, ',')
	}
	o.b = AppendQuote(o.b, name)
	o.b = append(o.b, ':')
	o.b = append(o.b, raw...)
}

// close ends the object with n's marking member and a line feed.
func (o *object) close(n StandInNote) []byte {
	o.member(n.Field, n.Meta)
	return append(o.b, "}\n"...)
}

// stamp is the stand-in's time: the turn's last line's, else now.
func (s *StandIn) stamp(now time.Time) []byte {
	return rawOr(s.Time, AppendQuote(nil, now.UTC().Format("2006-01-02T15:04:05.000Z")))
}

// rawCopy is a copy of node i's raw JSON, nil when there is none.
func rawCopy(t *Tree, i int) []byte {
	if i < 0 {
		return nil
	}
	return append([]byte(nil), t.Raw(i)...)
}
