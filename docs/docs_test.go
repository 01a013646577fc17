package docs

import (
	"io/fs"
	"strings"
	"testing"
)

// TestPagesExist: every file a man page carries is one of this folder's.
func TestPagesExist(t *testing.T) {
	for cmd, files := range Pages {
		for _, f := range files {
			if _, err := fs.Stat(Files, f); err != nil {
				t.Errorf("%s: %v", cmd, err)
			}
		}
	}
}

// TestExamplesRunBs: each example is a comment or a command line that
// runs bs, and no command's list ends on a comment.
func TestExamplesRunBs(t *testing.T) {
	for cmd, lines := range Examples {
		for i, l := range lines {
			comment := strings.HasPrefix(l, "# ")
			if !comment && !strings.HasPrefix(l, "bs "+cmd) && !strings.Contains(l, "| bs "+cmd) {
				t.Errorf("%s: %q runs no bs %s", cmd, l, cmd)
			}
			if comment && i == len(lines)-1 {
				t.Errorf("%s: ends on the comment %q", cmd, l)
			}
		}
	}
}
