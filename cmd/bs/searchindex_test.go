package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRowStore: a row names a directory store by its absolute path, and a
// URL as given; a directory whose name holds "://" is a directory, as the
// store opener reads it.
func TestRowStore(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ spec, want string }{
		{"s3://bucket/bs?region=x", "s3://bucket/bs?region=x"},
		{"store", filepath.Join(wd, "store")},
		{"a b://c", filepath.Join(wd, "a b:", "c")},
		{defaultStoreDir(), ""},
	} {
		if got := rowStore(c.spec); got != c.want {
			t.Errorf("rowStore(%q) = %q, want %q", c.spec, got, c.want)
		}
	}
}
