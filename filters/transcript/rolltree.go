package transcript

// RollTree is how a runtime whose compaction keeps entries standing
// before it, and is appended last (Dialect.RollNote is nil: pi's), spells
// the lines of bs roll's note: a marker where the evicted range was, a
// compaction at the end, and about the kept copies a model change and
// bridges. bs roll decides which lines go where and what they name; the
// dialect writes and reads them in its runtime's shape. Each line it
// writes ends in a line feed. tag is the RolledField member (name and
// value) that marks a line as bs roll's.
type RollTree interface {
	// Marker is the line that stands where the evicted range was.
	Marker(m RollMarker) []byte
	// Compaction is a compaction entry keeping from an entry before it.
	Compaction(c RollCompaction) []byte
	// ModelChange names the provider and model the runtime resumes with.
	ModelChange(id, parent, now, provider, model, tag string) []byte
	// Bridge is an entry out of the context that takes an evicted
	// entry's id, so the entries that named it as parent still hang in
	// the tree.
	Bridge(id, parent, now, tag string) []byte
	// Reparent is body, object line t with its line feed, hung from
	// parent instead; false when the line names no parent.
	Reparent(t *Tree, body []byte, parent string) ([]byte, bool)
	// Provider is the provider object line t names with its model.
	Provider(t *Tree) string
	// Summary is the summary of compaction line t and the raw value of
	// the context size before it ("" when it states none).
	Summary(t *Tree) (summary, tokensBefore string)
	// ReadRolled reads back a line Marker or ModelChange wrote.
	ReadRolled(t *Tree) RolledLine
}

// RollMarker is what the marker of a roll carries.
type RollMarker struct {
	// Text is the note's text ("" under --no-note); Now the time of the
	// roll, RFC 3339.
	Text, Now string
	// Evicted is the raw value of EvictedField.
	Evicted string
	// ID and Parent link the marker into the tree; ID is "" in a file
	// whose entries have no ids (pi v1), where it links to nothing.
	ID, Parent string
	Tag        string
}

// RollCompaction is what a compaction bs roll writes in a tree carries.
type RollCompaction struct {
	// ID and Parent link it into the tree, and KeptID names the first
	// entry it keeps; without an ID (pi v1) KeptIndex numbers that entry.
	ID, Parent, KeptID string
	KeptIndex          int
	Now, Summary       string
	// TokensBefore is the raw value of the context size before it.
	TokensBefore string
	Tag          string
}

// RolledLine is what a line of a roll's note in a tree is to the gauge
// (RollTree.ReadRolled).
type RolledLine struct {
	// Marker: the line is a marker, with the id ID and its note's text
	// at node Content.
	Marker  bool
	ID      string
	Content int
	// Model is the model a model change names.
	Model string
}
