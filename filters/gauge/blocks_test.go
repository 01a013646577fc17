package gauge

import (
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// TestRegisteredBlocks: the blocks the gauge counts as images, and those
// whose text the filters read, are those the built-in dialects name,
// together, and no other: a dialect that drops an image's counts its data
// as text, in every runtime's lines.
func TestRegisteredBlocks(t *testing.T) {
	b := transcript.RegisteredBlocks()
	for _, c := range []struct {
		typ         string
		text, image bool
	}{
		{"text", true, false}, {"input_text", true, false}, {"output_text", true, false},
		{"image", false, true}, {"input_image", false, true},
		{"thinking", false, false}, {"summary_text", false, false}, {"tool_result", false, false}, {"image_url", false, false},
	} {
		if b.Text(c.typ) != c.text || b.Image(c.typ) != c.image {
			t.Errorf("block type %q: text %v, image %v; want %v, %v", c.typ, b.Text(c.typ), b.Image(c.typ), c.text, c.image)
		}
	}
}
