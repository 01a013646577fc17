package checkpoint

import (
	"github.com/bstools/bs/filters/transcript"
)

// conversation takes what the dialect reads of each line
// (transcript.Dialect.Converse) into the observer's conversation events.
type conversation struct{ o *observer }

func (c conversation) Session(id string, replace bool) {
	if replace || c.o.SessionID == "" {
		c.o.SessionID = id
	}
}

func (c conversation) Agent(id string) { c.o.AgentID = id }

func (c conversation) User(text string, chars int, when string) { c.o.user(text, chars, when) }
func (c conversation) Said(text string, chars int)              { c.o.agent(text, chars) }
func (c conversation) Call(name, id string, t *transcript.Tree, args int) {
	c.o.call(name, id, t, args)
}
func (c conversation) CallJSON(name, id, args string) { c.o.callJSON(name, id, args) }
func (c conversation) CallRaw(name, id, input string) { c.o.callRaw(name, id, input) }
func (c conversation) ToolOf(id string) string        { return c.o.toolOf(id) }

func (c conversation) Result(tool string, failed bool, head, when string) {
	c.o.result(tool, failed, head, when)
}

// Ran counts a command the user ran as a use of its tool.
func (c conversation) Ran(tool string, failed bool, head, when string) {
	c.o.seq++
	c.o.tools.add(tool, c.o.seq)
	c.o.result(tool, failed, head, when)
}
