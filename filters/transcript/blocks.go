package transcript

import "slices"

// Blocks are the types a runtime gives the blocks of a message's content
// (Dialect.Blocks): those that hold a text, in their member text, and
// those that hold an image.
type Blocks struct {
	Text, Image []string
}

// BlockTypes tells the types of the registered dialects' blocks
// (RegisteredBlocks) apart. The types are few (three of text, two of
// image), and the gauge asks of every object it counts: a search of a
// short list costs less there than a map's hashing.
type BlockTypes struct{ text, image []string }

// Text reports whether typ is the type of a block that holds a text.
func (b *BlockTypes) Text(typ string) bool { return slices.Contains(b.text, typ) }

// Image reports whether typ is the type of a block that holds an image.
func (b *BlockTypes) Image(typ string) bool { return slices.Contains(b.image, typ) }

// blockTypesOf is the union of the Blocks of the dialects of list, each
// type once.
func blockTypesOf(list []Dialect) *BlockTypes {
	b := &BlockTypes{}
	for _, d := range list {
		bl := d.Blocks()
		for _, typ := range bl.Text {
			if !b.Text(typ) {
				b.text = append(b.text, typ)
			}
		}
		for _, typ := range bl.Image {
			if !b.Image(typ) {
				b.image = append(b.image, typ)
			}
		}
	}
	return b
}
