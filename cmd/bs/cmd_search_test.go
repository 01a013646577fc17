package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bstools/bs/filters/index"
)

func TestDisplaySnippet(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 6400) // 100 KB, one word
	got := displaySnippet("…dump " + long + " [NEEDLEWORD]\tand\x1b[31m red\x1b[0m\nnext…")
	if utf8.RuneCountInString(got) > 120 {
		t.Errorf("snippet of %d characters: %.200q", utf8.RuneCountInString(got), got)
	}
	if !strings.Contains(got, "[NEEDLEWORD] and red next…") || !strings.Contains(got, "…dump 0123") {
		t.Errorf("snippet %q lost its words", got)
	}
	if strings.ContainsAny(got, "\x1b\t\n") {
		t.Errorf("snippet %q holds control characters", got)
	}
}

// TestRestoreCommandForCommaPointer: --keys splits on commas, so a value
// whose pointer holds one is brought back with its whole entry.
func TestRestoreCommandForCommaPointer(t *testing.T) {
	dir := t.TempDir()
	row := index.Row{Session: dir, EntryID: "e1", Pointer: "/message/content/0/arguments/a,b~1c", Kind: "tool_call"}
	if got, want := restoreCommandFor(index.Hit{Row: row}, ""), "bs restore --id e1 -i "+dir; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	row.Pointer = "/message/content/0/text"
	if got := restoreCommandFor(index.Hit{Row: row}, ""); !strings.Contains(got, " --keys /message/content/0/text ") {
		t.Errorf("got %q", got)
	}
}

// TestRestoreCommandForStore: the command names the row's store when bs
// restore would open another one here, the default store included.
func TestRestoreCommandForStore(t *testing.T) {
	row := index.Row{Session: "s", EntryID: "e1", Kind: "entry", Store: "/srv/bs store"}
	for _, c := range []struct{ row, here, want string }{
		{"/srv/bs store", "/srv/bs store", "bs restore --all -i TRANSCRIPT"},
		{"/srv/bs store", "", "bs restore --store '/srv/bs store' --all -i TRANSCRIPT"},
		{"", "/srv/other", "bs restore --store " + shellQuote(defaultStoreDir()) + " --all -i TRANSCRIPT"},
		{"", "", "bs restore --all -i TRANSCRIPT"},
	} {
		row.Store = c.row
		if got := restoreCommandFor(index.Hit{Row: row}, c.here); got != c.want {
			t.Errorf("store %q, here %q: %q, want %q", c.row, c.here, got, c.want)
		}
	}
}
