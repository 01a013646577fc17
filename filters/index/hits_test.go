package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDisplaySnippet(t *testing.T) {
	long := strings.Repeat("0123456789abcdef", 6400) // 100 KB, one word
	got := DisplaySnippet("…dump " + long + " [NEEDLEWORD]\tand\x1b[31m red\x1b[0m\nnext…")
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

// TestRestoreCommandCommaPointer: --keys splits on commas, so a value
// whose pointer holds one is brought back with its whole entry.
func TestRestoreCommandCommaPointer(t *testing.T) {
	dir := t.TempDir()
	row := Row{Session: dir, EntryID: "e1", Pointer: "/message/content/0/arguments/a,b~1c", Kind: "tool_call"}
	if got, want := RestoreCommand(Hit{Row: row}, "", "/default"), "bs restore --id e1 -i "+dir; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	row.Pointer = "/message/content/0/text"
	if got := RestoreCommand(Hit{Row: row}, "", "/default"); !strings.Contains(got, " --keys /message/content/0/text ") {
		t.Errorf("got %q", got)
	}
}

// TestRestoreCommandStore: the command names the row's store when bs
// restore would open another one here, the default store included.
func TestRestoreCommandStore(t *testing.T) {
	row := Row{Session: "s", EntryID: "e1", Kind: "entry", Store: "/srv/bs store"}
	for _, c := range []struct{ row, here, want string }{
		{"/srv/bs store", "/srv/bs store", "bs restore --all -i TRANSCRIPT"},
		{"/srv/bs store", "", "bs restore --store '/srv/bs store' --all -i TRANSCRIPT"},
		{"", "/srv/other", "bs restore --store /home/u/.local/share/bs --all -i TRANSCRIPT"},
		{"", "", "bs restore --all -i TRANSCRIPT"},
	} {
		row.Store = c.row
		if got := RestoreCommand(Hit{Row: row}, c.here, "/home/u/.local/share/bs"); got != c.want {
			t.Errorf("store %q, here %q: %q, want %q", c.row, c.here, got, c.want)
		}
	}
}

// TestOnePerEntry: of the hits of one entry the first, best ranked, is
// kept, naming no pointer when several values matched; entries evicted
// whole are each kept.
func TestOnePerEntry(t *testing.T) {
	hit := func(session, entry, pointer, kind string) Hit {
		return Hit{Row: Row{Session: session, EntryID: entry, Pointer: pointer, Kind: kind}}
	}
	got := onePerEntry([]Hit{
		hit("s", "e1", "/a", "text"), hit("s", "e1", "/a", "text"), hit("s", "e2", "/a", "text"),
		hit("s", "e2", "/b", "text"), hit("t", "e1", "/a", "text"), hit("s", "e3", "", "entry"), hit("s", "e3", "", "entry"),
	})
	want := []Hit{hit("s", "e1", "/a", "text"), hit("s", "e2", "", "text"), hit("t", "e1", "/a", "text"), hit("s", "e3", "", "entry"), hit("s", "e3", "", "entry")}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// TestSearchEntries: an entry whose values match is one hit, and there
// are at most q.Limit hits of entries however many rows match.
func TestSearchEntries(t *testing.T) {
	ix, _ := openTemp(t)
	var rows []Row
	for e := range 5 {
		for _, p := range []string{"/message/content", "/toolUseResult"} { // each result twice
			rows = append(rows, Row{Session: "/s/a.jsonl", EntryID: fmt.Sprint("e", e), Pointer: p, Blob: fmt.Sprintf("sha256:%064d", e), Kind: "tool_result", Text: "needle"})
		}
	}
	mustAdd(t, ix, rows...)
	hits, err := ix.SearchEntries(context.Background(), Query{Text: "needle", Limit: 3})
	if err != nil || len(hits) != 3 {
		t.Fatalf("%d hits, %v; want 3", len(hits), err)
	}
	for _, h := range hits {
		if h.Pointer != "" {
			t.Errorf("%s: pointer %q, want the whole entry", h.EntryID, h.Pointer)
		}
	}
	if all, _ := ix.SearchEntries(context.Background(), Query{Text: "needle", Limit: 20}); len(all) != 5 {
		t.Errorf("%d hits of 5 entries", len(all))
	}
}
