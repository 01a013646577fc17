package checkpoint

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFind: a checkpoint file, an ID of the key, the key's latest, the key
// of a transcript; what is not there is a *NotFoundError, and with no key
// nor transcript ErrNoKey.
func TestFind(t *testing.T) {
	root := t.TempDir()
	writeForced(t, root, 2)
	d := Dir{Root: root}
	first := filepath.Join(root, "s", "cp_001.yaml")
	latest := filepath.Join(root, "s", "cp_002.yaml")
	transcript := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(transcript, []byte(usageSession(5)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		key  string
		args []string
		path string
	}{
		{"", []string{first}, first},
		{"s", nil, latest},
		{"s", []string{"cp_001"}, first},
		{"", []string{transcript}, latest}, // its header names session s
		{"", []string{"cp_001", transcript}, first},
	} {
		cp, path, err := d.Find(tc.key, tc.args)
		if err != nil || path != tc.path || cp == nil || cp.Meta.CheckpointID != strings.TrimSuffix(filepath.Base(tc.path), ".yaml") {
			t.Errorf("Find(%q, %q) = %v, %q, %v; want %s", tc.key, tc.args, cp != nil, path, err, tc.path)
		}
	}
	var nf *NotFoundError
	if _, _, err := d.Find("s", []string{"cp_009"}); !errors.As(err, &nf) || nf.Key != "s" || nf.ID != "cp_009" {
		t.Errorf("a missing ID: %v", err)
	}
	if _, _, err := d.Find("other", nil); !errors.As(err, &nf) || nf.Key != "other" || nf.ID != "" {
		t.Errorf("a key with none: %v", err)
	}
	if _, _, err := d.Find("", nil); !errors.Is(err, ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
	if _, _, err := d.Find("", []string{filepath.Join(root, "missing.yaml")}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
	// The session is named once, and one checkpoint at most.
	for _, tc := range []struct {
		key  string
		args []string
		want error
	}{
		{"s", []string{transcript}, ErrKeyAndFile},
		{"s", []string{"cp_001", "notes"}, ErrKeyAndFile},
		{"s", []string{first}, ErrKeyAndFile},
		{"", []string{first, "cp_001"}, ErrArgs},
		{"s", []string{"cp_001", "cp_002"}, ErrArgs},
		{"", []string{transcript, transcript}, ErrArgs},
	} {
		if _, _, err := d.Find(tc.key, tc.args); !errors.Is(err, tc.want) {
			t.Errorf("Find(%q, %q) = %v; want %v", tc.key, tc.args, err, tc.want)
		}
	}
}

// TestLatestText: the newest checkpoint's text and id; none is ErrNone.
func TestLatestText(t *testing.T) {
	root := t.TempDir()
	writeForced(t, root, 2)
	d := Dir{Root: root}
	cp, err := readFile(filepath.Join(root, "s", "cp_002.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if text, id, err := d.LatestText("s"); err != nil || id != "cp_002" || text != Render(cp) {
		t.Errorf("LatestText = %q, %q, %v; want cp_002's", text, id, err)
	}
	if _, _, err := d.LatestText("other"); !errors.Is(err, ErrNone) {
		t.Errorf("a key with none: %v", err)
	}
}
