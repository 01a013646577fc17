package checkpoint

import (
	"io"
	"strings"
	"time"

	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// NoticeFrom is the utilization from which the agent is shown its context
// gauge (seed 003 §6.3: below 70% nothing is injected, to save tokens).
const NoticeFrom = 0.7

// advisory is the note that follows the gauge once the context reaches
// the checkpoint threshold and the checkpoint is on disk (seed 003 §6.3).
const advisory = "Your context is nearly full and your working state is checkpointed: finish the step you are on and keep tool output short.\n" +
	"If the context is compacted, the checkpoint is given back to you."

// notice is what the agent is told of its context (seed 003 §6.3 and
// §6.4), from the gauge g: nothing below from; from there the one-line
// gauge, [Context: 75% | 150k/200k tokens]; at or above threshold with a
// checkpoint of this context saved, [Context: 81% | 162k/200k tokens |
// Checkpoint saved] and the advisory note.
func notice(g gauge.Result, from, threshold float64, saved bool) string {
	switch {
	case g.Ratio < from:
		return ""
	case g.Ratio >= threshold && saved:
		return strings.TrimSuffix(g.String(), "]") + " | Checkpoint saved]\n" + advisory
	}
	return g.String()
}

// noticeMeta marks a notice bs checkpoint appended (InjectedField).
const noticeMeta = `{"by":"bs checkpoint","notice":"context"}`

// isNotice reports whether an injected entry's InjectedField member, at
// node m, marks a notice.
func isNotice(t *transcript.Tree, m int) bool { return t.Str(t.Get(m, "notice")) != "" }

// appendNotice writes to w the entry that puts text into the context
// after the transcript obs saw, in the shape the runtime
// takes injected context in (Dialect.ContextEntry), unless the last notice bs
// appended said the same. It reports whether it wrote one.
func appendNotice(w io.Writer, obs *observer, text string, now time.Time) (bool, error) {
	if text == "" || text == obs.lastNotice {
		return false, nil
	}
	var b []byte
	if !obs.endsLine {
		b = append(b, '\n') // the last line was unfinished: ours starts a new one
	}
	link := obs.link
	b = append(b, obs.dialect.ContextEntry(&link, transcript.ContextNote{Text: text, Kind: "bs:context", Field: InjectedField, Meta: noticeMeta, Salt: "notice", Now: now})...)
	_, err := w.Write(b)
	return err == nil, err
}
