package transcript

// Cost reports (ccusage and its kind) total the usage recorded on every
// line of a transcript, whether or not it is still in context. A filter
// that takes lines out of the file (roll evicts them, archive collapses a
// turn) would take their spend out of those totals; the runtimes' own
// compactions never do. So for each such line that carries what the
// reports read, the filter leaves a spend record in the file: what the
// reports count, in a shape the runtime keeps out of the context, marked
// with SpentField ({"by":"bs roll"}), which the gauge reads as nothing and
// restore --all takes away (the line itself comes back from the store).
// What the reports read and the shape of a record are the dialect's
// (Dialect.Spends, Dialect.SpendRecord, in each dialect_*.go).
const SpentField = "_spent"

// Spends reports whether line t of dialect d carries what cost reports
// read: a spend record must stand for it when it leaves the file.
func Spends(t *Tree, d Dialect) bool {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return false
	}
	if t.Get(0, SpentField) >= 0 {
		return true // a record already: it stays one
	}
	if d == nil {
		return false
	}
	return d.Spends(t)
}

// SpendRecord is the spend record that stands for line t of dialect d
// (Spends), written by by. In a pi tree, id and parent are the record's
// own id and the entry it hangs from ("" for v1 files, which have none).
// A line that is a record already is its own.
func SpendRecord(t *Tree, d Dialect, by, id, parent string) []byte {
	if t.Get(0, SpentField) >= 0 {
		return append([]byte(nil), t.Src...)
	}
	if d == nil {
		return nil
	}
	return d.SpendRecord(t, by, id, parent)
}

// SpentTag is the value of SpentField on a record written by by.
func SpentTag(by string) []byte {
	return append(append([]byte(`{"by":`), AppendQuote(nil, by)...), '}')
}

// record builds a spend record object member by member.
type record struct {
	t *Tree
	b []byte
}

// member appends name: raw.
func (r *record) member(name string, raw []byte) {
	if len(r.b) > 1 {
		r.b = append(r.b, ',')
	}
	r.b = AppendQuote(r.b, name)
	r.b = append(r.b, ':')
	r.b = append(r.b, raw...)
}

// copyMembers appends the members of object obj not named in skip.
func (r *record) copyMembers(obj int, skip map[string]bool) {
	r.t.Children(obj, func(c, _ int) {
		if k := r.t.Key(c); !skip[k] {
			r.member(k, r.t.Raw(c))
		}
	})
}

// close ends the record with its SpentField, written by by.
func (r *record) close(by string) []byte {
	r.member(SpentField, SpentTag(by))
	return append(r.b, '}')
}
