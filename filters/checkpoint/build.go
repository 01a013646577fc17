package checkpoint

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/bstools/bs/filters/gauge"
)

// Meta inputs that do not come from the transcript.
type input struct {
	ID          string // cp_NNN
	SessionKey  string
	SessionFile string
	CreatedAt   string
	Trigger     string
	Gauge       gauge.Result
	Learnings   []string // --learning
}

// buildCheckpoint makes the checkpoint of what o has seen, carrying forward from prev
// (nil for the first) what the transcript no longer shows: decisions, open
// items, learnings and resources, as after a compaction.
func buildCheckpoint(o *observer, prev *Checkpoint, in input) *Checkpoint {
	cp := &Checkpoint{Schema: schema, SchemaVersion: schemaVersion}
	channel, agent := fromSessionKey(in.SessionKey)
	if agent == "" {
		agent = o.AgentID
	}
	cp.Meta = Meta{
		CheckpointID: in.ID, SessionKey: in.SessionKey, SessionFile: in.SessionFile, CreatedAt: in.CreatedAt,
		Trigger: in.Trigger, CompactionCount: o.Compactions,
		TokenUsage: TokenUsage{InputTokens: in.Gauge.Tokens, ContextWindow: in.Gauge.Window, Utilization: round2(in.Gauge.Ratio)},
		Channel:    channel, AgentID: agent,
	}
	if prev != nil {
		cp.Meta.PreviousCheckpoint = prev.Meta.CheckpointID
	}
	cp.Working = o.working()
	cp.Thread = o.thread()
	if prev != nil && o.firstUser == nil {
		// Nothing of the conversation is left to see: keep what was known.
		cp.Working, cp.Thread = prev.Working, prev.Thread
	}

	var decisions []Decision
	if prev != nil {
		decisions = append(decisions, prev.Decisions...)
	}
	for _, d := range o.decisions {
		if !slices.ContainsFunc(decisions, func(p Decision) bool { return p.What == d.What && p.When == d.When }) {
			decisions = append(decisions, d)
		}
	}
	decisions = lastN(decisions, maxDecisions)
	for i := range decisions {
		decisions[i].ID = "d" + strconv.Itoa(i+1)
	}
	cp.Decisions = decisions

	var pr Resources
	if prev != nil {
		pr = prev.Resources
	}
	cp.Resources = Resources{
		FilesRead:     merge(pr.FilesRead, o.read.newest(maxFiles), maxFiles),
		FilesModified: merge(pr.FilesModified, o.modified.newest(maxFiles), maxFiles),
		ToolsUsed:     merge(pr.ToolsUsed, o.tools.newest(maxTools), maxTools),
		Failures:      lastN(append(slices.Clone(pr.Failures), newFailures(pr.Failures, o.failures)...), maxFailures),
	}

	switch {
	case o.hasTodo:
		cp.OpenItems = slices.Clone(o.todo)
	default:
		var items []string
		if prev != nil {
			items = prev.OpenItems
		}
		if q := o.unanswered(); q != "" {
			items = append(slices.Clone(items), "Unanswered: "+q)
		}
		cp.OpenItems = merge(nil, items, maxOpenItems)
	}

	var learnings []string
	if prev != nil {
		learnings = prev.Learnings
	}
	cp.Learnings = merge(learnings, in.Learnings, maxLearnings)
	normalize(cp)
	return cp
}

// normalize makes empty lists empty rather than nil, so every section is
// written.
func normalize(cp *Checkpoint) {
	for _, l := range []*[]string{&cp.Resources.FilesRead, &cp.Resources.FilesModified, &cp.Resources.ToolsUsed, &cp.OpenItems, &cp.Learnings} {
		if *l == nil {
			*l = []string{}
		}
	}
	if cp.Decisions == nil {
		cp.Decisions = []Decision{}
	}
	if cp.Resources.Failures == nil {
		cp.Resources.Failures = []Failure{}
	}
	if cp.Thread.KeyExchanges == nil {
		cp.Thread.KeyExchanges = []Exchange{}
	}
}

func (o *observer) working() Working {
	w := Working{Status: idle}
	if o.lastUser != nil {
		w.Topic = o.lastUser.topic
	}
	switch o.last {
	case toolCall:
		w.Status, w.Interrupted = inProgress, true
		call := o.lastCall
		w.LastToolCall = &call
		w.NextAction = fmt.Sprintf("Resume the interrupted tool call %s (%s) and continue the task.", call.Name, call.ParamsSummary)
	case toolResult:
		w.Status = inProgress
		w.NextAction = fmt.Sprintf("Continue the task after the result of %s.", o.lastCall.Name)
	case userText:
		w.Status = inProgress
		w.NextAction = "Answer the user's last message: " + o.lastUser.gist
	case agentText:
		if strings.HasSuffix(strings.TrimRight(o.lastAgent.gist, "…"), "?") {
			w.Status = waitingForUser
			w.NextAction = "Wait for the user's reply to: " + o.lastAgent.gist
		} else if o.lastUser != nil {
			w.NextAction = "The last request was answered; wait for the next one."
		}
	}
	return w
}

func (o *observer) thread() Thread {
	var th Thread
	if o.firstUser == nil {
		return th
	}
	th.Summary = o.firstUser.topic
	if o.lastUser != o.firstUser {
		th.Summary += " ... " + o.lastUser.topic
	}
	// The first user message, the pivots, the last two exchanges (a user
	// message and the agent's reply, if any yet): at most maxExchanges,
	// dropping the oldest pivots first.
	pairs := slices.Clone(o.pairs)
	if o.lastUser != o.firstUser || o.lastAgent != nil {
		pairs = append(pairs, [2]*message{o.lastUser, o.lastAgent})
	}
	var tail []Exchange
	for _, p := range lastN(pairs, 2) {
		tail = append(tail, Exchange{"user", p[0].gist})
		if p[1] != nil {
			tail = append(tail, Exchange{"agent", p[1].gist})
		}
	}
	head := []Exchange{{"user", o.firstUser.gist}}
	if len(pairs) <= 2 && len(pairs) > 0 && pairs[0][0] == o.firstUser {
		head = nil // the first exchange is one of the last two
	}
	var pivots []Exchange
	for _, p := range o.pivots {
		if p.Gist != o.firstUser.gist && !slices.Contains(tail, p) {
			pivots = append(pivots, p)
		}
	}
	pivots = lastN(pivots, maxExchanges-len(head)-len(tail))
	th.KeyExchanges = append(append(head, pivots...), tail...)
	return th
}

// unanswered is the last user message when no agent text followed it.
func (o *observer) unanswered() string {
	if o.lastUser == nil || o.lastAgent != nil {
		return ""
	}
	return o.lastUser.gist
}

// fromSessionKey reads the channel and agent id of an OpenClaw session key:
// agent:<agentId>:<channel>:… (agent:<id>:main is the main session, which
// names no channel).
func fromSessionKey(key string) (channel, agent string) {
	parts := strings.Split(key, ":")
	if len(parts) >= 3 && parts[0] == "agent" {
		agent = parts[1]
		if parts[2] != "main" {
			channel = parts[2]
		}
		return channel, agent
	}
	return channel, agent
}

func newFailures(prev, cur []Failure) []Failure {
	var out []Failure
	for _, f := range cur {
		if !slices.Contains(prev, f) {
			out = append(out, f)
		}
	}
	return out
}

// merge appends the items of cur not already in prev, and keeps the last n.
func merge(prev, cur []string, n int) []string {
	out := slices.Clone(prev)
	for _, s := range cur {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return lastN(out, n)
}

func lastN[T any](s []T, n int) []T {
	if n < 0 {
		n = 0
	}
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func round2(r float64) float64 { return math.Round(r*100) / 100 }

func formatRatio(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) }

func itoa(n int) string { return strconv.Itoa(n) }
