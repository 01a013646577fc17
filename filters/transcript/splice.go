package transcript

import (
	"fmt"
	"slices"
	"sort"
)

// Edit replaces src[Start:End] with Text. Start == End inserts.
type Edit struct {
	Start, End int
	Text       []byte
}

// Splice appends to dst the bytes of src with edits applied. Every byte of
// src outside the edited spans is copied unchanged. Edits may come in any
// order but must not overlap (two inserts at one offset keep their order).
func Splice(dst, src []byte, edits []Edit) ([]byte, error) {
	return splice(dst, src, edits, 0)
}

// SpliceLine returns line with edits applied to its Body, as [Line.Bytes]
// would give it: its line feed, if it had one, included, in a single
// allocation of exactly the right size.
func SpliceLine(line Line, edits []Edit) ([]byte, error) {
	extra := 0
	if line.Newline {
		extra = 1
	}
	out, err := splice(nil, line.Body, edits, extra)
	if err != nil || !line.Newline {
		return out, err
	}
	return append(out, '\n'), nil
}

// SplicePieces is SpliceLine without the copy: the pieces that, written
// one after the other, are the line SpliceLine would return (the last one
// the line feed alone, when the line has one). They share
// memory with line and the edits' texts: a line that gets a 100 MiB value
// back is written out without a second copy of it.
func SplicePieces(line Line, edits []Edit) ([][]byte, error) {
	src := line.Body
	if _, err := sortEdits(src, edits); err != nil {
		return nil, err
	}
	pieces := make([][]byte, 0, 2*len(edits)+2)
	pos := 0
	for _, e := range edits {
		pieces = append(pieces, src[pos:e.Start], e.Text)
		pos = e.End
	}
	pieces = append(pieces, src[pos:])
	if line.Newline {
		pieces = append(pieces, newline)
	}
	return pieces, nil
}

var newline = []byte{'\n'}

// sortEdits sorts edits by where they start and checks that they lie
// within src without overlapping; it returns the size of src spliced.
func sortEdits(src []byte, edits []Edit) (int, error) {
	sort.SliceStable(edits, func(i, j int) bool { return edits[i].Start < edits[j].Start })
	pos, size := 0, len(src)
	for _, e := range edits {
		if e.Start < pos || e.End < e.Start || e.End > len(src) {
			return 0, fmt.Errorf("splice: edit [%d,%d) overlaps or lies outside [%d,%d)", e.Start, e.End, pos, len(src))
		}
		pos = e.End
		size += len(e.Text) - (e.End - e.Start)
	}
	return size, nil
}

// splice is Splice, leaving room for extra more bytes after the result.
func splice(dst, src []byte, edits []Edit, extra int) ([]byte, error) {
	size, err := sortEdits(src, edits)
	if err != nil {
		return nil, err
	}
	// One allocation for the result: growing it edit by edit would copy
	// and clear a line-sized buffer several times.
	dst = slices.Grow(dst, size+extra)
	pos := 0
	for _, e := range edits {
		dst = append(dst, src[pos:e.Start]...)
		dst = append(dst, e.Text...)
		pos = e.End
	}
	return append(dst, src[pos:]...), nil
}

// InsertMember returns the edit that adds the member "name":value at the
// end of object obj. It is the exact inverse of RemoveMember on the member
// it creates, which is what lets restore give back the original bytes.
func (t *Tree) InsertMember(obj int, name string, value []byte) Edit {
	n := &t.Nodes[obj]
	var text []byte
	at := n.Start + 1
	if n.Last >= 0 {
		at = t.Nodes[n.Last].End
		text = append(text, ',')
	}
	text = AppendQuote(text, name)
	text = append(text, ':')
	text = append(text, value...)
	return Edit{Start: at, End: at, Text: text}
}

// RemoveMember returns the edit that deletes member m from its object along
// with the comma that separates it from its neighbour.
func (t *Tree) RemoveMember(m int) Edit {
	n := &t.Nodes[m]
	obj := &t.Nodes[n.Parent]
	if obj.First != m {
		prev := obj.First
		for t.Nodes[prev].Next != m {
			prev = t.Nodes[prev].Next
		}
		return Edit{Start: t.Nodes[prev].End, End: n.End}
	}
	if n.Next >= 0 {
		return Edit{Start: n.KeyStart, End: t.Nodes[n.Next].KeyStart}
	}
	return Edit{Start: n.KeyStart, End: n.End}
}

// ReplaceValue returns the edit that replaces the value of node i.
func (t *Tree) ReplaceValue(i int, value []byte) Edit {
	return Edit{Start: t.Nodes[i].Start, End: t.Nodes[i].End, Text: value}
}
