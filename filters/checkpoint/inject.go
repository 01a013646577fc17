package checkpoint

import (
	"bufio"
	"fmt"
	"io"
	"time"

	"github.com/bstools/bs/filters/transcript"
)

// InjectedField marks the entry bs checkpoint inject appends:
// {"by":"bs checkpoint","checkpoint_id":…}.
const InjectedField = "_checkpoint"

// Inject passes the transcript r to w unchanged and appends one entry that
// carries text, in the shape the dialect uses for injected context:
// an OpenClaw/pi custom_message, a Claude Code meta user message, a Codex
// user message item, a BrainSurgeon system entry, or a generic system
// message. It links the entry to the last one where the dialect keeps a
// chain. textFor gives the text and the checkpoint's id once the session
// the transcript names is known (its id, "" if none); when it fails, the
// transcript has been passed through unchanged and its error is returned.
func Inject(name string, r io.Reader, w io.Writer, format transcript.Dialect, onBad func(*transcript.BadLineError) error,
	now time.Time, textFor func(sessionID string) (text, checkpointID string, err error)) error {
	src := transcript.NewSource(name, r, format, onBad)
	bw := bufio.NewWriterSize(w, 256<<10)
	var last transcript.Tail // what the appended entry links to
	endsLine := true
	for {
		line, t, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		bw.Write(line.Body)
		if line.Newline {
			bw.WriteByte('\n')
		}
		endsLine = line.Newline || len(line.Body) == 0
		if t != nil && len(t.Nodes) > 0 && t.Nodes[0].Kind == '{' {
			src.Dialect().Follow(t, &last)
		}
	}
	text, id, err := textFor(last.Session)
	if err != nil {
		if ferr := bw.Flush(); ferr != nil {
			return ferr
		}
		return err
	}
	if !endsLine {
		bw.WriteByte('\n') // the last line was unfinished: ours starts a new one
	}
	bw.Write(src.Dialect().ContextEntry(&last, transcript.ContextNote{Text: text, Kind: "bs:checkpoint", Field: InjectedField,
		Meta: fmt.Sprintf(`{"by":"bs checkpoint","checkpoint_id":%s}`, transcript.AppendQuote(nil, id)), Salt: id, Now: now}))
	return bw.Flush()
}
