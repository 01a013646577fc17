package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestManPage fails when man/bs.1 no longer matches the command
// definitions. Regenerate with scripts/genman (go test -run TestManPage -update).
func TestManPage(t *testing.T) {
	page, err := newApp(nil, nil, nil).ToManWithSection(1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "man", "bs.1")
	if *update {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run scripts/genman)", err)
	}
	if string(have) != page {
		t.Errorf("man/bs.1 is stale: run scripts/genman")
	}
}
