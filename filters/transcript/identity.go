package transcript

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// SessionIdentity is what a parsed line says its session is, by the
// line's own shape, or "" when it says nothing. A session keeps its
// identity wherever its file goes (a filter's output moved over its input,
// a pipe): the id of a pi/OpenClaw header ({"type":"session","id":…}), the
// id of Codex's session_meta, and the sessionId of Claude Code (and of a
// BrainSurgeon entry). A Claude Code subagent's own file carries its
// parent's sessionId on every line, and its agentId: it is the
// sessionId, "/agent-" and the agentId.
func SessionIdentity(t *Tree) string {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return ""
	}
	str := func(i int, names ...string) string { return t.Str(t.Path(i, names...)) }
	switch str(0, "type") {
	case "session":
		return str(0, "id")
	case "session_meta":
		return str(0, "payload", "id")
	}
	id := str(0, "sessionId")
	if id == "" {
		return ""
	}
	if agent := str(0, "agentId"); agent != "" {
		return id + "/agent-" + agent
	}
	return id
}

// IdentityOf is the session identity the first lines of r state (at most
// DetectLines of them), or "" when none does.
func IdentityOf(r io.Reader) string {
	lr := NewReader(r)
	var p Parser
	for i := 0; i < DetectLines; i++ {
		l, err := lr.NextView()
		if len(l.Body) > 0 {
			if t, perr := p.Parse(l.Body); perr == nil {
				if id := SessionIdentity(t); id != "" {
					return id
				}
			}
		}
		if err != nil {
			return ""
		}
	}
	return ""
}

// IdentityOfFile is IdentityOf the file at path; "" when it cannot be read.
func IdentityOfFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	return IdentityOf(f)
}

// IdentityTap passes a stream through and learns the session identity
// its first lines state, for a reader that cannot go back to them (a
// pipe). Whoever consumes the stream has read a line only once the tap
// has seen it, so by the time a filter acts on a line, ID knows what the
// lines up to it said.
type IdentityTap struct {
	r     io.Reader
	mu    sync.Mutex
	id    string
	done  bool
	lines int
	buf   []byte // the line being read
	p     Parser
}

// NewIdentityTap returns a tap over r.
func NewIdentityTap(r io.Reader) *IdentityTap { return &IdentityTap{r: r} }

// maxTapLine bounds the bytes the tap holds of one line: a first line this
// long states no identity worth waiting for.
const maxTapLine = 4 << 20

func (t *IdentityTap) Read(b []byte) (int, error) {
	n, err := t.r.Read(b)
	if n > 0 {
		t.see(b[:n])
	}
	return n, err
}

func (t *IdentityTap) see(b []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for !t.done && len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			if len(t.buf)+len(b) > maxTapLine {
				t.done = true
			}
			t.buf = append(t.buf, b...)
			return
		}
		t.buf = append(t.buf, b[:i]...)
		b = b[i+1:]
		if tr, err := t.p.Parse(t.buf); err == nil {
			t.id = SessionIdentity(tr)
		}
		t.buf = t.buf[:0]
		t.lines++
		t.done = t.id != "" || t.lines >= DetectLines
	}
	if t.done {
		t.buf = nil
	}
}

// ID is the identity the lines read so far state, "" if none (yet).
func (t *IdentityTap) ID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.id
}
