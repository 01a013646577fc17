package checkpoint

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/bstools/bs/filters/gauge"
)

// renderBudget is the most tokens the injection text takes (seed 003
// §5.4: ~600–700 tokens), as the render's tokenizer counts them.
const renderBudget = 700

// spiralCompactions is the compaction count above which the render warns of
// the compaction death spiral (seed 003 §5.5).
const spiralCompactions = 3

// RenderTokenizer names the tokenizer Render counts with: real tokens, not
// characters/4, which undercounts paths, ids and code.
const RenderTokenizer = "o200k"

// Render returns the text injected into the context after a compaction
// (seed 003 §8.2), fitted to renderBudget tokens of RenderTokenizer.
func Render(cp *Checkpoint) string {
	est, err := renderTokenizer()
	if err != nil {
		return RenderWith(cp, gauge.CharsPer4{}) // the vocabulary is compiled in: not reached
	}
	return RenderWith(cp, est)
}

var renderTokenizer = sync.OnceValues(func() (*gauge.Tokenizer, error) { return gauge.NewTokenizer(RenderTokenizer) })

// RenderWith is Render counting tokens with est. The lowest-value sections
// lose their items first, the oldest of each first (lowValueFirst), until
// the text fits renderBudget; a text still over it loses whole lines from
// its end.
func RenderWith(cp *Checkpoint, est gauge.Estimator) string {
	lim := limits{decisions: 10, exchanges: maxExchanges, open: 10, files: 8, read: 8, tools: 15, failures: 5, learnings: 10}
	for {
		s := render(cp, lim)
		if gauge.TextTokens(est, s) <= renderBudget {
			return s
		}
		if !lim.shrink() {
			return cutTokens(s, est, renderBudget)
		}
	}
}

// limits are how many items of each list the text shows.
type limits struct{ decisions, exchanges, open, files, read, tools, failures, learnings int }

// lowValueFirst is the order in which sections give up their items: what
// the agent can find again, or needs least to resume (the tools it used,
// the files it read, the exchanges the thread summary sums up), before
// what only the checkpoint holds (its decisions and open items).
func (l *limits) lowValueFirst() []*int {
	return []*int{&l.tools, &l.read, &l.exchanges, &l.failures, &l.files, &l.learnings, &l.decisions, &l.open}
}

// shrink takes one item off the lowest-value section that still shows
// any; false when nothing is left to take.
func (l *limits) shrink() bool {
	for _, p := range l.lowValueFirst() {
		if *p > 0 {
			*p--
			return true
		}
	}
	return false
}

func render(cp *Checkpoint, lim limits) string {
	var b strings.Builder
	m := cp.Meta
	b.WriteString("[Post-compaction checkpoint restore]\n")
	fmt.Fprintf(&b, "Checkpoint %s of session %s, %s (trigger: %s). ", m.CheckpointID, m.SessionKey, m.CreatedAt, m.Trigger)
	if u := m.TokenUsage; u.ContextWindow > 0 {
		fmt.Fprintf(&b, "[Context: %.0f%% | %dk/%dk tokens]", u.Utilization*100, (u.InputTokens+500)/1000, (u.ContextWindow+500)/1000)
	}
	b.WriteString("\n")
	if m.CompactionCount > spiralCompactions {
		fmt.Fprintf(&b, "\nWARNING: this session has been compacted %d times. Each compaction loses detail and the next one comes sooner (compaction death spiral): finish the current step and start a fresh session from this checkpoint.\n", m.CompactionCount)
	}

	w := cp.Working
	b.WriteString("\n")
	if w.Topic != "" {
		fmt.Fprintf(&b, "Working on: %s\n", w.Topic)
	}
	fmt.Fprintf(&b, "Status: %s\n", w.Status)
	if w.Interrupted && w.LastToolCall != nil {
		fmt.Fprintf(&b, "Interrupted in tool call: %s (%s)\n", w.LastToolCall.Name, w.LastToolCall.ParamsSummary)
	}
	if w.NextAction != "" {
		fmt.Fprintf(&b, "Next action: %s\n", w.NextAction)
	}

	if d := lastN(cp.Decisions, lim.decisions); len(d) > 0 {
		b.WriteString("\nDecisions made:\n")
		for _, x := range d {
			fmt.Fprintf(&b, "- %s%s\n", oneLine(x.What), clock(x.When))
		}
	}
	if cp.Thread.Summary != "" {
		fmt.Fprintf(&b, "\nThread: %s\n", cp.Thread.Summary)
	}
	if x := lastN(cp.Thread.KeyExchanges, lim.exchanges); len(x) > 0 {
		b.WriteString("Key exchanges:\n")
		for _, e := range x {
			fmt.Fprintf(&b, "- %s: %s\n", e.Role, e.Gist)
		}
	}
	if o := lastN(cp.OpenItems, lim.open); len(o) > 0 {
		b.WriteString("\nOpen items:\n")
		for _, s := range o {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	r := cp.Resources
	if len(r.FilesModified)+len(r.FilesRead)+len(r.ToolsUsed)+len(r.Failures) > 0 {
		b.WriteString("\n")
	}
	if f := lastN(r.FilesModified, lim.files); len(f) > 0 {
		fmt.Fprintf(&b, "Files modified: %s\n", strings.Join(f, ", "))
	}
	if f := lastN(r.FilesRead, lim.read); len(f) > 0 {
		fmt.Fprintf(&b, "Files read: %s\n", strings.Join(f, ", "))
	}
	if t := lastN(r.ToolsUsed, lim.tools); len(t) > 0 {
		fmt.Fprintf(&b, "Tools used: %s\n", strings.Join(t, ", "))
	}
	if f := lastN(r.Failures, lim.failures); len(f) > 0 {
		b.WriteString("Failed tool calls:\n")
		for _, x := range f {
			fmt.Fprintf(&b, "- %s: %s\n", x.Tool, x.Gist)
		}
	}
	if l := lastN(cp.Learnings, lim.learnings); len(l) > 0 {
		b.WriteString("\nLearnings (consider storing to long-term memory):\n")
		for _, s := range l {
			fmt.Fprintf(&b, "- %s\n", s)
		}
	}
	return b.String()
}

// clock is " (15:04)" for an RFC 3339 time, else "".
func clock(when string) string {
	t, err := time.Parse(time.RFC3339, when)
	if err != nil {
		return ""
	}
	return t.UTC().Format(" (15:04)")
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// cutTokens shortens s at a line boundary until est counts at most n
// tokens in it.
func cutTokens(s string, est gauge.Estimator, n int) string {
	for gauge.TextTokens(est, s) > n {
		i := strings.LastIndexByte(strings.TrimSuffix(s, "\n"), '\n')
		if i < 0 {
			return ""
		}
		s = s[:i+1]
	}
	return s
}
