package transcript

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// The registry of dialects (the way restic lists its backends): the one
// place that lists the runtimes bs reads.
var registry struct {
	mu       sync.Mutex
	list     []Dialect // as help lists them; the fallback is last
	detect   []Dialect // the order detection asks them in; the fallback is last
	fallback Dialect
	marks    Marks // the union of the registered dialects' (RegisteredMarks)
	// notText is the union of the registered dialects' NotText, read
	// without the lock: the gauge asks for it on every line, from
	// several workers.
	notText atomic.Pointer[map[string]bool]
	// blocks is the union of the registered dialects' Blocks, read
	// without the lock for the same reason.
	blocks atomic.Pointer[BlockTypes]
}

func init() {
	for _, d := range []Dialect{OpenClaw, ClaudeCode, Codex, BrainSurgeon} {
		Register(d)
	}
	registerFallback(Generic)
	// Detection asks Codex first, as its {timestamp,type,payload}
	// envelope may hold anything, then Claude Code, whose envelope
	// members (uuid, sessionId) say more than a type pi also writes.
	registry.detect = []Dialect{Codex, ClaudeCode, OpenClaw, BrainSurgeon, Generic}
}

// Register adds d to the dialects ParseDialect knows and detection asks,
// before the fallback (generic chat claims any line with a role). It is
// for init functions and tests; it panics on a name already taken, as
// two dialects answering to one --format would be a bug.
func Register(d Dialect) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	for _, name := range append([]string{d.String()}, d.Aliases()...) {
		if lookup(name) != nil {
			panic(fmt.Sprintf("transcript: dialect name %q registered twice", name))
		}
	}
	checkMarks(d)
	checkBlocks(d, registry.list)
	registry.list = insert(registry.list, d)
	registry.detect = insert(registry.detect, d)
	registry.marks = union(registry.list)
	registry.notText.Store(notTextOf(registry.list))
	registry.blocks.Store(blockTypesOf(registry.list))
}

// insert is list with d added before the fallback, in a new slice:
// Classify may be reading the old one.
func insert(list []Dialect, d Dialect) []Dialect {
	list = append([]Dialect(nil), list...)
	if registry.fallback != nil {
		return append(list[:len(list)-1], d, registry.fallback)
	}
	return append(list, d)
}

// registerFallback makes d the dialect asked last and used when no line
// tells.
func registerFallback(d Dialect) {
	Register(d)
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.fallback = d
}

// Unregister removes d from the registry, for a test that registered a
// dialect of its own.
func Unregister(d Dialect) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	registry.list = without(registry.list, d)
	registry.detect = without(registry.detect, d)
	registry.marks = union(registry.list)
	registry.notText.Store(notTextOf(registry.list))
	registry.blocks.Store(blockTypesOf(registry.list))
}

func without(list []Dialect, d Dialect) []Dialect {
	var out []Dialect
	for _, x := range list {
		if x != d {
			out = append(out, x)
		}
	}
	return out
}

// checkMarks panics on a mark of d the filters cannot look for: an empty
// one, or a spend mark that is not a whole string (a name or value and
// its closing quote), as archive looks for the end of a string.
func checkMarks(d Dialect) {
	m := d.Marks()
	for _, mk := range slices.Concat(m.Spend, m.Usage, m.Reset, m.Model, m.WorkDir) {
		if mk.Text == "" || mk.Text == `"` {
			panic(fmt.Sprintf("transcript: dialect %v declares an empty mark", d))
		}
	}
	for _, mk := range m.Spend {
		if !strings.HasSuffix(mk.Text, `"`) {
			panic(fmt.Sprintf("transcript: dialect %v: spend mark %q is not a whole string (a closing quote)", d, mk.Text))
		}
	}
}

// checkBlocks panics on a block type d gives both to a text and to an
// image, its own or with a dialect of list: a filter could not tell what
// a block of it holds.
func checkBlocks(d Dialect, list []Dialect) {
	all := blockTypesOf(append([]Dialect{d}, list...))
	for _, typ := range all.text {
		if all.Image(typ) {
			panic(fmt.Sprintf("transcript: dialect %v: block type %q holds both a text and an image", d, typ))
		}
	}
}

// union is the marks of the dialects of list, each once, in the order
// list gives them.
func union(list []Dialect) Marks {
	var u Marks
	add := func(to []Mark, ms []Mark) []Mark {
		for _, m := range ms {
			if !slices.Contains(to, m) {
				to = append(to, m)
			}
		}
		return to
	}
	for _, d := range list {
		m := d.Marks()
		u.Spend, u.Usage = add(u.Spend, m.Spend), add(u.Usage, m.Usage)
		u.Reset, u.Model = add(u.Reset, m.Reset), add(u.Model, m.Model)
		u.WorkDir = add(u.WorkDir, m.WorkDir)
	}
	return u
}

// RegisteredMarks are the marks of every registered dialect: what a
// filter's pre-filter looks for, whatever the transcript's dialect (it
// runs before detection, and on lines of several runtimes). Its slices
// are shared: not to be changed.
func RegisteredMarks() Marks {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.marks
}

// notTextOf is the set of the members the dialects of list name in
// NotText.
func notTextOf(list []Dialect) *map[string]bool {
	set := map[string]bool{}
	for _, d := range list {
		for _, name := range d.NotText() {
			set[name] = true
		}
	}
	return &set
}

// RegisteredNotText are the members every registered dialect names in
// NotText: the gauge reads them on every line, as a runtime's lines may
// hold another's content (a subagent's, a copied message). The map is
// shared: not to be changed.
func RegisteredNotText() map[string]bool { return *registry.notText.Load() }

// RegisteredBlocks are the types of the content blocks of every
// registered dialect: the filters that read a message's content take any
// of them, as a runtime's lines may hold another's content (a subagent's,
// a copied message). It is shared: not to be changed.
func RegisteredBlocks() *BlockTypes { return registry.blocks.Load() }

// Dialects lists the registered dialects as help lists them.
func Dialects() []Dialect {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return append([]Dialect(nil), registry.list...)
}

// detectOrder is the registered dialects in the order detection asks them.
func detectOrder() []Dialect {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	return registry.detect
}

// lookup finds a dialect by name or alias; the caller holds the lock.
func lookup(name string) Dialect {
	name = strings.ToLower(name)
	for _, d := range registry.list {
		if d.String() == name {
			return d
		}
		for _, a := range d.Aliases() {
			if a == name {
				return d
			}
		}
	}
	return nil
}

// DialectNames lists the names ParseDialect accepts, for help text: each
// dialect's name with its aliases in parentheses.
func DialectNames() string {
	names := []string{"auto"}
	for _, d := range Dialects() {
		names = append(names, d.HelpName())
	}
	return strings.Join(names, ", ")
}

// DialectList lists the names of the dialects ParseDialect accepts, with
// auto first, as they are written (without the aliases).
func DialectList() []string {
	names := []string{"auto"}
	for _, d := range Dialects() {
		names = append(names, d.String())
	}
	return names
}

// ParseDialect parses a --format value; "" and "auto" mean detect (nil).
func ParseDialect(s string) (Dialect, error) {
	switch strings.ToLower(s) {
	case "", "auto":
		return nil, nil
	}
	registry.mu.Lock()
	d := lookup(s)
	registry.mu.Unlock()
	if d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", s, DialectNames())
}
