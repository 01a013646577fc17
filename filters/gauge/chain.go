package gauge

import (
	"bytes"
	"io"
	"os"

	"github.com/bstools/bs/filters/transcript"
)

// chainPath is the set of ids in the context of a file whose dialect
// threads by ParentChains (transcript.ChainContext), read from the whole
// file, or nil when every line counts.
func chainPath(f *os.File, size int64, d transcript.Dialect) map[string]bool {
	var nodes []transcript.ChainNode
	var p transcript.Parser
	r := transcript.NewReader(io.NewSectionReader(f, 0, size))
	for {
		line, err := r.NextView()
		if err != nil {
			break
		}
		var n transcript.ChainNode
		if len(bytes.TrimSpace(line.Body)) > 0 {
			if t, err := p.Parse(line.Body); err == nil {
				n = transcript.ChainNodeOf(t, d)
			}
		}
		nodes = append(nodes, n)
	}
	on := transcript.ChainContext(nodes)
	if on == nil {
		return nil
	}
	set := map[string]bool{}
	for i, n := range nodes {
		if on[i] && n.ID != "" {
			set[n.ID] = true
		}
	}
	return set
}

// chainWalk keeps the ids and parents of the lines MeasureFile walks back
// over in a file whose dialect threads by ParentChains, and the first it meets that may start
// the chain (the last of the thread's lines that bs roll did not write).
type chainWalk struct {
	parents map[string]string
	leaf    string
}

func (w *chainWalk) add(n transcript.ChainNode) {
	if !transcript.GivenID(n.ID) {
		return
	}
	if w.parents == nil {
		w.parents = map[string]string{}
	}
	w.parents[n.ID] = n.Parent
	if w.leaf == "" && !n.Ours {
		w.leaf = n.ID
	}
}

// reaches reports whether the chain from the last line runs, through the
// lines walked, back to the line the walk stopped at or to another line
// of its response (group: their uuids).
func (w *chainWalk) reaches(stop transcript.ChainNode, group map[string]bool) bool {
	x := w.leaf
	if x == "" {
		return true // nothing after it to leave it
	}
	for steps := 0; steps <= len(w.parents); steps++ {
		if x == stop.ID || group[x] {
			return true
		}
		p, ok := w.parents[x]
		if !ok || p == "" {
			return false
		}
		x = p
	}
	return false
}

// responseBefore is the set of uuids of the lines just before end that
// belong to the API response msgID: Claude Code writes one response over
// several lines, and the chain may pass through any of them.
func responseBefore(f *os.File, end int64, msgID string, d transcript.Dialect) map[string]bool {
	group := map[string]bool{}
	if msgID == "" {
		return group
	}
	var p transcript.Parser
	backwardLines(f, end, func(line []byte) bool {
		if len(bytes.TrimSpace(line)) == 0 {
			return true
		}
		t, err := p.Parse(line)
		if err != nil {
			return false
		}
		n := transcript.ChainNodeOf(t, d)
		if n.MsgID != msgID {
			// The runtime's bookkeeping (its progress lines) falls
			// between them.
			return n.MsgID == "" && d.Unit(t, "").Noise
		}
		group[n.ID] = true
		return true
	})
	return group
}
