package transcript

// Blocks are the types a runtime gives the blocks of a message's content
// (Dialect.Blocks): those that hold a text, in their member text, and
// those that hold an image.
type Blocks struct {
	Text, Image []string
}

// BlockTypes tells the types of the registered dialects' blocks
// (RegisteredBlocks) apart.
type BlockTypes struct{ text, image map[string]bool }

// Text reports whether typ is the type of a block that holds a text.
func (b *BlockTypes) Text(typ string) bool { return b.text[typ] }

// Image reports whether typ is the type of a block that holds an image.
func (b *BlockTypes) Image(typ string) bool { return b.image[typ] }

// blockTypesOf is the union of the Blocks of the dialects of list.
func blockTypesOf(list []Dialect) *BlockTypes {
	b := &BlockTypes{text: map[string]bool{}, image: map[string]bool{}}
	for _, d := range list {
		bl := d.Blocks()
		for _, typ := range bl.Text {
			b.text[typ] = true
		}
		for _, typ := range bl.Image {
			b.image[typ] = true
		}
	}
	return b
}
