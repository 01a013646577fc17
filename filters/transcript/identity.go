package transcript

import (
	"bytes"
	"io"
	"os"
	"sync"
)

// Stated is how a line states its session's identity (Dialect.Identity).
type Stated uint8

const (
	NotStated Stated = iota
	Stamped          // on a line of the session (Claude Code's sessionId)
	Header           // by the line that opens the session (pi's header)
)

// sessionIdentity is what a parsed line says its session is, by the
// line's own shape, or "" when it says nothing. A session keeps its
// identity wherever its file goes (a filter's output moved over its input,
// a pipe). The registered dialects are asked in the order detection asks
// them (Dialect.Identity): a header's statement is the answer, whatever a
// member stamped on the line says; else the first stamp.
func sessionIdentity(t *Tree) string {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return ""
	}
	stamp, stamped := "", false
	for _, d := range detectOrder() {
		switch id, how := d.Identity(t); how {
		case Header:
			return id
		case Stamped:
			if !stamped {
				stamp, stamped = id, true
			}
		}
	}
	return stamp
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
				if id := sessionIdentity(t); id != "" {
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
			t.id = sessionIdentity(tr)
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
