package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteList: the keys with their counts and latest id, then a key's
// checkpoints one a line; an unreadable one is reported and skipped.
func TestWriteList(t *testing.T) {
	dir := t.TempDir()
	writeForced(t, dir, 3)
	d := Dir{Root: dir}
	var b bytes.Buffer
	if err := d.WriteKeys(&b, false); err != nil || b.String() != "s\t3\tcp_003\n" {
		t.Errorf("keys %q, %v", b.String(), err)
	}
	b.Reset()
	d.WriteKeys(&b, true)
	if b.String() != `{"checkpoints":3,"key_dir":"s","latest":"cp_003"}`+"\n" {
		t.Errorf("keys JSON %s", b.String())
	}
	if err := os.WriteFile(filepath.Join(dir, "s", "cp_002.yaml"), []byte("{{"), 0o600); err != nil {
		t.Fatal(err)
	}
	b.Reset()
	var bad []error
	if err := d.WriteList(&b, "s", false, func(err error) { bad = append(bad, err) }); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "cp_001\t") || !strings.HasSuffix(lines[1], filepath.Join(dir, "s", "cp_003.yaml")) || len(bad) != 1 {
		t.Errorf("list %q, unreadable %v", lines, bad)
	}
	b.Reset()
	d.WriteList(&b, "s", true, func(error) {})
	if !strings.Contains(b.String(), `"checkpoint_id":"cp_003"`) || strings.Count(b.String(), "\n") != 2 {
		t.Errorf("list JSON %s", b.String())
	}
}

// writeForced writes n forced checkpoints of session s to dir, cp_001 to
// cp_00n.
func writeForced(t *testing.T, dir string, n int) {
	t.Helper()
	opt := forced(dir)
	for i := 1; i <= n; i++ {
		if _, err := Run("-", strings.NewReader(usageSession(1000*i)), nil, opt); err != nil {
			t.Fatal(err)
		}
	}
}
