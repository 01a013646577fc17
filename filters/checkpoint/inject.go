package checkpoint

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
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
	var last inject
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
			last.see(t, src.Dialect())
		}
	}
	text, id, err := textFor(last.session)
	if err != nil {
		if ferr := bw.Flush(); ferr != nil {
			return ferr
		}
		return err
	}
	if !endsLine {
		bw.WriteByte('\n') // the last line was unfinished: ours starts a new one
	}
	last.d = src.Dialect()
	bw.Write(last.entry(text, "bs:checkpoint", fmt.Sprintf(`{"by":"bs checkpoint","checkpoint_id":%s}`, transcript.AppendQuote(nil, id)), id, now))
	return bw.Flush()
}

// inject remembers what the appended entry links to.
type inject struct {
	d       transcript.Dialect
	lastID  string // pi v2+ id, Claude Code uuid
	session string
	v3      bool // pi entries carry ids
	claude  struct{ cwd, version string }
}

func (in *inject) see(t *transcript.Tree, d transcript.Dialect) {
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	switch d {
	case transcript.OpenClaw:
		if str("type") == "session" {
			in.session = str("id")
		}
		if id := str("id"); id != "" && str("type") != "session" {
			in.lastID, in.v3 = id, true
		} else if str("type") == "session" && t.Get(0, "version") >= 0 && string(t.Raw(t.Get(0, "version"))) != "1" {
			in.v3 = true
		}
	case transcript.Codex:
		if str("type") == "session_meta" {
			in.session = str("payload", "id")
		}
	case transcript.BrainSurgeon:
		if s := str("sessionId"); s != "" {
			in.session = s
		}
	case transcript.ClaudeCode:
		if id := str("uuid"); id != "" {
			in.lastID = id
		}
		if s := str("sessionId"); s != "" {
			in.session = s
		}
		if s := str("cwd"); s != "" {
			in.claude.cwd = s
		}
		if s := str("version"); s != "" {
			in.claude.version = s
		}
	}
}

// entry is the line that injects text, in the dialect's shape for
// injected context; customType names it for pi, meta is the JSON object of
// its InjectedField, and salt tells its id from another's with the same
// text after the same entry.
func (in *inject) entry(text, customType, meta, salt string, now time.Time) []byte {
	q := func(s string) string { return string(transcript.AppendQuote(nil, s)) }
	ts := q(now.UTC().Format("2006-01-02T15:04:05.000Z"))
	tag := fmt.Sprintf(`%q:%s`, InjectedField, meta)
	sum := sha256.Sum256([]byte(in.lastID + "\x00" + salt + "\x00" + text))
	h := hex.EncodeToString(sum[:])
	nullOr := func(s string) string {
		if s == "" {
			return "null"
		}
		return q(s)
	}
	var s string
	switch in.d {
	case transcript.OpenClaw:
		ids := ""
		if in.v3 {
			ids = fmt.Sprintf(`,"id":%s,"parentId":%s`, q(h[:8]), nullOr(in.lastID))
		}
		s = fmt.Sprintf(`{"type":"custom_message","customType":%s,"content":%s,"display":false%s,"timestamp":%s,%s}`, q(customType), q(text), ids, ts, tag)
	case transcript.ClaudeCode:
		uuid := h[0:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
		extra := ""
		if in.session != "" {
			extra += `,"sessionId":` + q(in.session)
		}
		if in.claude.cwd != "" {
			extra += `,"cwd":` + q(in.claude.cwd)
		}
		if in.claude.version != "" {
			extra += `,"version":` + q(in.claude.version)
		}
		s = fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"userType":"external","type":"user","message":{"role":"user","content":%s},"isMeta":true,"uuid":%s,"timestamp":%s%s,%s}`,
			nullOr(in.lastID), q(text), q(uuid), ts, extra, tag)
	case transcript.Codex:
		s = fmt.Sprintf(`{"timestamp":%s,"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":%s}]},%s}`, ts, q(text), tag)
	case transcript.BrainSurgeon:
		s = fmt.Sprintf(`{"__id":%s,"type":"system","timestamp":%s,"text":%s,%s}`, q(transcript.GeneratedIDPrefix+h[:16]), ts, q(text), tag)
	default:
		s = fmt.Sprintf(`{"role":"system","content":%s,%s}`, q(text), tag)
	}
	return []byte(s + "\n")
}
