package gauge

import "github.com/bstools/bs/filters/internal/binrec"

// A Mark in binary, for a filter that keeps the first pass's marks in a
// temp file rather than in memory (bs trim, whose plan reads every line's
// mark again).

// AppendBinary appends m's binary form to b (encoding.BinaryAppender).
func (m Mark) AppendBinary(b []byte) ([]byte, error) {
	b = append(b, byte(m.kind), binrec.Flags(m.KeptFrom, m.adj != nil))
	b = binrec.AppendFloat(b, m.scale)
	b = binrec.AppendInt(b, m.measured)
	b = binrec.AppendInt(b, int(m.at))
	b = binrec.AppendInt(b, int(m.from))
	if a := m.adj; a != nil {
		b = binrec.AppendInt(b, a.Removed)
		b = binrec.AppendInt(b, a.Added)
		b = binrec.AppendFloat(b, a.Scale)
		b = binrec.AppendInt(b, a.Measured)
		b = binrec.AppendString(b, a.Estimator)
	}
	return b, nil
}

// UnmarshalBinary sets m from the whole of data, as AppendBinary wrote it
// (encoding.BinaryUnmarshaler).
func (m *Mark) UnmarshalBinary(data []byte) error {
	r := binrec.NewReader(data)
	kind, flags := r.Byte(), r.Byte()
	*m = Mark{kind: markKind(kind), KeptFrom: flags&1 != 0}
	m.scale = r.Float()
	m.measured = r.Int()
	m.at, m.from = int32(r.Int()), int32(r.Int())
	if flags&2 != 0 {
		m.adj = &Adjustment{Removed: r.Int(), Added: r.Int(), Scale: r.Float(), Measured: r.Int(), Estimator: r.Text()}
	}
	return r.Err()
}
