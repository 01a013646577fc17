package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bstools/bs/filters/transcript"
)

// TestMain doubles as the writer process of TestConcurrentProcesses: with
// helperEnv set, the test binary adds rows to an index and exits.
func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		if err := writerProcess(spec); err != nil {
			fmt.Fprintln(os.Stderr, "writer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func blob(s string) string {
	return fmt.Sprintf("sha256:%x", sha256.Sum256([]byte(s)))
}

func row(session, entry, kind, tool, text string) Row {
	return Row{
		Session: session, EntryID: entry, Pointer: "/message/content/0/text",
		Blob: blob(text), Kind: kind, Tool: tool, Time: "2026-11-22T10:00:00Z", Text: text,
	}
}

func openTemp(t testing.TB) (*Index, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state", "bs", "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix, path
}

func mustAdd(t testing.TB, ix *Index, rows ...Row) {
	t.Helper()
	if err := ix.Add(context.Background(), rows); err != nil {
		t.Fatal(err)
	}
}

func search(t testing.TB, ix *Index, q Query) []Hit {
	t.Helper()
	hits, err := ix.Search(context.Background(), q)
	if err != nil {
		t.Fatalf("Search(%+v): %v", q, err)
	}
	return hits
}

func entries(hits []Hit) []string {
	var ids []string
	for _, h := range hits {
		ids = append(ids, h.EntryID)
	}
	return ids
}

func count(t testing.TB, ix *Index) int {
	t.Helper()
	n, err := ix.count(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sample() []Row {
	return []Row{
		row("agent/s1", "e1", "tool_result", "Bash", "go test ./... FAIL github.com/x/y TestParse: unexpected EOF while reading config.yaml"),
		row("agent/s1", "e2", "tool_call", "Read", `{"file_path": "/home/u/project/config.yaml"}`),
		row("agent/s2", "e3", "thinking", "", "The parser fails because the config file is truncated; I should check the YAML loader."),
		row("agent/s2", "e4", "tool_result", "Bash", "ls -la\ntotal 12\ndrwxr-xr-x 2 u u 4096 config\n-rw-r--r-- 1 u u 220 Makefile"),
		row("other", "e5", "text", "", "Running the migrations now; the database schema is up to date."),
	}
}

func TestRoundTrip(t *testing.T) {
	ix, _ := openTemp(t)
	rows := sample()
	mustAdd(t, ix, rows...)

	hits := search(t, ix, Query{Text: "unexpected EOF"})
	if len(hits) != 1 {
		t.Fatalf("got %d hits, want 1: %+v", len(hits), hits)
	}
	h := hits[0]
	want := rows[0]
	want.Text = ""
	if h.Row != want {
		t.Errorf("hit row = %+v\nwant      %+v", h.Row, want)
	}
	if h.Score >= 0 {
		t.Errorf("score = %v, want negative (FTS5 bm25)", h.Score)
	}
	if !strings.Contains(h.Snippet, "[unexpected EOF]") {
		t.Errorf("snippet %q does not mark the phrase", h.Snippet)
	}

	// Stemming and case: "runs" finds "Running", "PARSER" finds "parser".
	if got := entries(search(t, ix, Query{Text: "runs"})); strings.Join(got, ",") != "e5" {
		t.Errorf("runs: got %v, want [e5]", got)
	}
	if got := entries(search(t, ix, Query{Text: "PARSER"})); strings.Join(got, ",") != "e3" {
		t.Errorf("PARSER: got %v, want [e3]", got)
	}
	// All words must appear.
	if got := search(t, ix, Query{Text: "config nonexistentword"}); len(got) != 0 {
		t.Errorf("AND: got %v, want none", entries(got))
	}
	if got := search(t, ix, Query{Text: "no such words anywhere"}); len(got) != 0 {
		t.Errorf("got %v, want none", entries(got))
	}
}

func TestSnippetMarksMatch(t *testing.T) {
	ix, _ := openTemp(t)
	long := strings.Repeat("filler words go here ", 40) + "the needle sits in the middle " + strings.Repeat("more filler text follows ", 40)
	mustAdd(t, ix, row("s", "e1", "tool_result", "Bash", long))
	hits := search(t, ix, Query{Text: "needle"})
	if len(hits) != 1 {
		t.Fatalf("got %d hits", len(hits))
	}
	s := hits[0].Snippet
	if !strings.Contains(s, "[needle]") {
		t.Errorf("snippet %q does not mark the match", s)
	}
	if len(s) > 200 || !strings.Contains(s, "…") {
		t.Errorf("snippet %q is not a short excerpt", s)
	}
	// Separate words are each marked.
	hits = search(t, ix, Query{Text: "middle needle"})
	if len(hits) != 1 || !strings.Contains(hits[0].Snippet, "[needle]") || !strings.Contains(hits[0].Snippet, "[middle]") {
		t.Errorf("got %+v, want both words marked", hits)
	}
}

func TestFilters(t *testing.T) {
	ix, _ := openTemp(t)
	mustAdd(t, ix, sample()...)
	for _, tc := range []struct {
		q    Query
		want string
	}{
		{Query{Text: "config"}, "e1,e2,e3,e4"},
		{Query{Text: "config", Session: "agent/s1"}, "e1,e2"},
		{Query{Text: "config", Session: "agent/s2"}, "e3,e4"},
		{Query{Text: "config", Kind: "tool_result"}, "e1,e4"},
		{Query{Text: "config", Tool: "Read"}, "e2"},
		{Query{Text: "config", Tool: "Bash", Session: "agent/s2"}, "e4"},
		{Query{Text: "config", Kind: "thinking", Tool: "Bash"}, ""},
		{Query{Text: "config", Session: "agent"}, ""}, // exact, not prefix
		{Query{Text: "config", Kind: "tool"}, ""},
	} {
		got := entries(search(t, ix, tc.q))
		// The order is by rank; compare as sets.
		gotSet := map[string]bool{}
		for _, e := range got {
			gotSet[e] = true
		}
		var want []string
		if tc.want != "" {
			want = strings.Split(tc.want, ",")
		}
		ok := len(got) == len(want)
		for _, e := range want {
			ok = ok && gotSet[e]
		}
		if !ok {
			t.Errorf("%+v: got %v, want %v", tc.q, got, want)
		}
	}
}

func TestLimit(t *testing.T) {
	ix, _ := openTemp(t)
	var rows []Row
	for i := range 30 {
		rows = append(rows, row("s", fmt.Sprintf("e%02d", i), "tool_result", "Bash", fmt.Sprintf("build log line %d: compiling package number %d", i, i)))
	}
	mustAdd(t, ix, rows...)
	if got := len(search(t, ix, Query{Text: "compiling"})); got != DefaultLimit {
		t.Errorf("default limit: got %d hits, want %d", got, DefaultLimit)
	}
	if got := len(search(t, ix, Query{Text: "compiling", Limit: 5})); got != 5 {
		t.Errorf("limit 5: got %d hits", got)
	}
	if got := len(search(t, ix, Query{Text: "compiling", Limit: 100})); got != 30 {
		t.Errorf("limit 100: got %d hits, want all 30", got)
	}
	// Two words: the phrase tier and the all-words tier together respect
	// the limit and never repeat a row.
	for _, limit := range []int{1, 7, 30, 100} {
		hits := search(t, ix, Query{Text: "package compiling", Limit: limit})
		if want := min(limit, 30); len(hits) != want {
			t.Errorf("two words, limit %d: got %d hits, want %d", limit, len(hits), want)
		}
		seen := map[string]bool{}
		for _, h := range hits {
			if seen[h.EntryID] {
				t.Errorf("limit %d: %s returned twice", limit, h.EntryID)
			}
			seen[h.EntryID] = true
		}
	}
}

func TestAddIdempotent(t *testing.T) {
	ix, _ := openTemp(t)
	if n := count(t, ix); n != 0 {
		t.Fatalf("new index counts %d", n)
	}
	rows := sample()
	mustAdd(t, ix, rows...)
	mustAdd(t, ix, rows...)
	mustAdd(t, ix, rows[1:3]...)
	if n := count(t, ix); n != len(rows) {
		t.Errorf("count after re-adding = %d, want %d", n, len(rows))
	}
	if got := search(t, ix, Query{Text: "unexpected EOF"}); len(got) != 1 {
		t.Errorf("re-added row found %d times", len(got))
	}
	// The same value under another key is another row; so is a duplicate
	// inside one batch only one row.
	r := rows[0]
	r.Pointer = "/message/content/1/text"
	mustAdd(t, ix, r, r)
	if n := count(t, ix); n != len(rows)+1 {
		t.Errorf("count = %d, want %d", n, len(rows)+1)
	}
	if err := ix.Add(context.Background(), nil); err != nil {
		t.Errorf("Add(nil) = %v", err)
	}
	// The rows survive reopening.
	ix.Close()
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, ix, sample()...)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n := count(t, ix); n != len(sample()) {
		t.Errorf("count after reopen = %d", n)
	}
	if got := entries(search(t, ix, Query{Text: "migrations"})); strings.Join(got, ",") != "e5" {
		t.Errorf("after reopen: got %v", got)
	}
}

// TestMigrateV1: an index written before rows recorded their store
// (schema version 1, no removed.store) is brought up to date when opened:
// its rows stay, with no store, and new rows keep theirs.
func TestMigrateV1(t *testing.T) {
	ix, path := openTemp(t)
	mustAdd(t, ix, sample()...)
	ix.Close()
	downgrade(t, path, `DROP INDEX removed_seq; DROP INDEX removed_sid; ALTER TABLE removed DROP COLUMN store; ALTER TABLE removed DROP COLUMN seq; ALTER TABLE removed DROP COLUMN sid; PRAGMA user_version = 1`)
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkVersion(t, ix)
	if got := search(t, ix, Query{Text: "migrations"}); len(got) != 1 || got[0].Store != "" {
		t.Errorf("the old row after migrating: %+v", got)
	}
	r := row("new", "e9", "text", "", "a value in a store of its own")
	r.Store = "s3://bucket/bs?region=eu-west-1"
	mustAdd(t, ix, r)
	if got := search(t, ix, Query{Text: "store of its own"}); len(got) != 1 || got[0].Store != r.Store {
		t.Errorf("a new row's store: %+v", got)
	}
	// The old rows keep their order, before the new one.
	old := sample()[0]
	packed := row(old.Session, old.EntryID, "entry", "", "the whole entry, later")
	packed.Pointer = ""
	mustAdd(t, ix, packed)
	if got := search(t, ix, Query{Text: old.Text}); len(got) == 0 || !got[0].Packed {
		t.Errorf("a migrated row before a newer entry row: %+v", got)
	}
}

// downgrade makes the index at path one of an older schema version by
// running stmts on it.
func downgrade(t *testing.T, path, stmts string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(stmts); err != nil {
		t.Fatal(err)
	}
}

// checkVersion fails unless ix is of the current schema version.
func checkVersion(t *testing.T, ix *Index) {
	t.Helper()
	var version int
	if err := ix.db.QueryRow(`PRAGMA user_version`).Scan(&version); err != nil || version != schemaVersion {
		t.Fatalf("schema version %d (%v) after opening, want %d", version, err, schemaVersion)
	}
}

// TestPacked: a value whose entry a later roll or archive took whole is
// marked Packed (restore --all brings it back); one extracted after that
// entry row, or from another entry, is not.
func TestPacked(t *testing.T) {
	ix, _ := openTemp(t)
	value := row("s", "e1", "tool_result", "bash", "the first moved value")
	value.Pointer = "/message/content/0/text"
	entry := row("s", "e1", "entry", "bash", "the whole entry")
	entry.Pointer = ""
	later := row("s", "e1", "thinking", "", "the second moved value")
	later.Pointer = "/message/content/1/thinking"
	other := row("s", "e2", "tool_result", "bash", "the third moved value")
	other.Pointer = "/message/content/0/text"
	mustAdd(t, ix, value, other)
	mustAdd(t, ix, entry)
	mustAdd(t, ix, later)
	packed := map[string]bool{}
	for _, h := range search(t, ix, Query{Text: "moved value"}) {
		packed[h.Pointer+" "+h.EntryID] = h.Packed
	}
	want := map[string]bool{value.Pointer + " e1": true, later.Pointer + " e1": false, other.Pointer + " e2": false}
	if fmt.Sprint(packed) != fmt.Sprint(want) {
		t.Errorf("packed %v, want %v", packed, want)
	}
	// The entry restored, the same value extracted again: its row is the
	// newest now, and not packed.
	mustAdd(t, ix, value)
	for _, h := range search(t, ix, Query{Text: "first moved value"}) {
		if h.Packed {
			t.Errorf("a value added again after the entry row is still packed: %+v", h)
		}
	}
}

func TestMissingFileSearch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	hits, err := ix.Search(context.Background(), Query{Text: "anything"})
	if err != nil || len(hits) != 0 {
		t.Errorf("Search on a new index = %v, %v; want no hits", hits, err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("Open did not create the file: %v", err)
	}
}

func TestPhraseRanksFirst(t *testing.T) {
	ix, _ := openTemp(t)
	var rows []Row
	// Many rows hold the words separately, several times each, which BM25
	// alone would favour; one short-to-medium row holds the exact phrase.
	for i := range 12 {
		rows = append(rows, row("s", fmt.Sprintf("sep%02d", i), "tool_result", "Bash",
			"connection refused by the server. The database was slow; connection retried, database locked, refused again: database connection"))
	}
	rows = append(rows, row("s", "phrase", "tool_result", "Bash",
		"After a long migration run with many unrelated log lines about disk usage and memory the final error was: database connection refused while reaching the replica at port 5432 in region west"))
	mustAdd(t, ix, rows...)

	hits := search(t, ix, Query{Text: "database connection refused"})
	if len(hits) != 13 {
		t.Fatalf("got %d hits, want 13", len(hits))
	}
	if hits[0].EntryID != "phrase" {
		t.Errorf("first hit = %s, want the exact phrase row; order %v", hits[0].EntryID, entries(hits))
	}
	if !strings.Contains(hits[0].Snippet, "[database connection refused]") {
		t.Errorf("phrase snippet = %q", hits[0].Snippet)
	}
	// The same words in another order are not the phrase: the phrase row
	// is no longer special.
	hits = search(t, ix, Query{Text: "refused connection database"})
	if len(hits) != 13 {
		t.Fatalf("reordered: got %d hits, want 13", len(hits))
	}
	// Limit 1 returns the phrase row alone.
	if hits := search(t, ix, Query{Text: "database connection refused", Limit: 1}); len(hits) != 1 || hits[0].EntryID != "phrase" {
		t.Errorf("limit 1: got %v", entries(hits))
	}
}

// TestScoreWindow shrinks the window of ranked rows to 10: a word found in
// more rows than that is ranked only among the recent ones, while a rarer
// word, or a filter held by few rows, still reaches old rows.
func TestScoreWindow(t *testing.T) {
	old := scoreWindow
	scoreWindow = 10
	defer func() { scoreWindow = old }()

	ix, _ := openTemp(t)
	// Old rows first: the best match for "common", and a small session.
	mustAdd(t, ix, row("old", "old-best", "text", "", "common common common common"))
	mustAdd(t, ix, row("old", "old-rare", "text", "", "common words and one zebra"))
	for i := range 40 {
		mustAdd(t, ix, row("new", fmt.Sprintf("new%02d", i), "tool_result", "Bash",
			fmt.Sprintf("a common line of output number %d with several more words to make it long", i)))
	}
	hits := search(t, ix, Query{Text: "common", Limit: 100})
	if n := len(hits); n < 1 || n > 10 {
		t.Errorf("common: %d hits, want 1 to 10 (the window)", n)
	}
	for _, h := range hits {
		if h.Session != "new" {
			t.Errorf("common: old row %s ranked although 40 newer rows match", h.EntryID)
		}
	}
	if got := entries(search(t, ix, Query{Text: "common zebra"})); strings.Join(got, ",") != "old-rare" {
		t.Errorf("common zebra: got %v, want [old-rare]", got)
	}
	if got := entries(search(t, ix, Query{Text: "common", Session: "old"})); len(got) != 2 || got[0] != "old-best" {
		t.Errorf("common in session old: got %v, want [old-best old-rare]", got)
	}
	if got := entries(search(t, ix, Query{Text: "common", Kind: "text"})); len(got) != 2 || got[0] != "old-best" {
		t.Errorf("common of kind text: got %v, want [old-best old-rare]", got)
	}
}

// TestFilterTagsStayHidden: the filter fields are indexed as hashed tags,
// never as words a query matches.
func TestFilterTagsStayHidden(t *testing.T) {
	ix, _ := openTemp(t)
	mustAdd(t, ix, row("agent/alpha", "e1", "thinking", "WebFetch", "nothing relevant in here"))
	for _, q := range []string{"agent", "alpha", "agent/alpha", "thinking", "WebFetch", "webfetch", "zs", "z"} {
		if got := search(t, ix, Query{Text: q}); len(got) != 0 {
			t.Errorf("%q matched the filter fields: %v", q, entries(got))
		}
	}
	if got := search(t, ix, Query{Text: "relevant", Session: "agent/alpha", Kind: "thinking", Tool: "WebFetch"}); len(got) != 1 {
		t.Errorf("all three filters: got %v", entries(got))
	}
	if tag := filterTag('s', "agent/alpha"); len(tokens([]string{tag})) != 1 {
		t.Errorf("tag %s is not one token", tag)
	}
}

func TestHostileQueries(t *testing.T) {
	ix, _ := openTemp(t)
	mustAdd(t, ix, sample()...)
	mustAdd(t, ix,
		row("s", "h1", "text", "", `He said "NEAR the end" AND (maybe) OR NOT: col:value ^start * "quoted" it's a-b_c`),
		row("s", "h2", "text", "", "naïve café — 日本語のテキスト Ünïcödé résumé 🚀 emoji"),
	)
	queries := []string{
		`"`, `""`, `"""`, `"unterminated`, `*`, `**`, `config*`, `*config`, `-config`, `config -yaml`,
		`NEAR`, `NEAR(config yaml)`, `NEAR(config yaml, 2)`, `config NEAR yaml`, `AND`, `OR`, `NOT`,
		`config AND yaml`, `config OR yaml`, `config NOT yaml`, `NOT config`, `AND OR NOT`,
		`(`, `)`, `(config`, `config)`, `((((`, `text:config`, `:`, `::`, `removed_fts:x`, `{text}: x`,
		`^config`, `+config`, `config + yaml`, `'`, `''`, `it's`, `\`, `\"`, `%`, `_`, `$1`, `?`, `;`,
		`-- DROP TABLE removed;`, `'); DROP TABLE removed; --`, `a-b_c`, `col:value`, `"NEAR the end"`,
		`naïve`, `CAFE`, `日本語`, `🚀`, `Ünïcödé`, "\x00", "a\x00b", "\xff\xfe", "config\xffyaml",
		"\u200b", "\ufeffconfig", "tab\tsep", "line\nbreak", strings.Repeat("x", 10000),
		strings.Repeat("config ", 3000), strings.Repeat(`"(*`, 500), strings.Repeat("NEAR(", 200),
		"rank", "bm25(removed_fts)", "ORDER BY", "LIMIT 1", "*:*", "-", "--", "!", "@", "#", "&&", "||",
	}
	for _, q := range queries {
		for _, filtered := range []bool{false, true} {
			qq := Query{Text: q}
			if filtered {
				qq.Session, qq.Kind = "s", "text"
			}
			if _, err := ix.Search(context.Background(), qq); err != nil {
				t.Errorf("Search(%q) = %v", q, err)
			}
		}
	}
	// Some of them still find what they say.
	for q, want := range map[string]string{
		`"NEAR the end"`: "h1", `col:value`: "h1", `a-b_c`: "h1", `(maybe)`: "h1",
		`naïve`: "h2", `CAFE`: "h2", `Ünïcödé`: "h2", `it's`: "h1", `NEAR`: "h1",
	} {
		if got := entries(search(t, ix, Query{Text: q})); len(got) == 0 || got[0] != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
	// The table is still there.
	if n := count(t, ix); n != 7 {
		t.Errorf("count = %d", n)
	}
	for _, q := range []string{"", " ", "\t\n ", "\u3000"} {
		if _, err := ix.Search(context.Background(), Query{Text: q}); !errors.Is(err, errEmptyQuery) {
			t.Errorf("Search(%q) = %v, want ErrEmptyQuery", q, err)
		}
	}
}

func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	check := func(t *testing.T, path string) {
		t.Helper()
		ix, err := Open(path)
		if err == nil {
			_, err = ix.Search(context.Background(), Query{Text: "config"})
			if err == nil {
				_, err = ix.count(context.Background())
			}
			ix.Close()
		}
		if err == nil {
			t.Fatal("no error")
		}
		if !errors.Is(err, errCorrupt) {
			t.Errorf("error %q does not wrap ErrCorrupt", err)
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
		t.Log(err)
	}

	t.Run("random bytes", func(t *testing.T) {
		path := filepath.Join(dir, "random.db")
		b := make([]byte, 64<<10)
		r := rand.New(rand.NewPCG(1, 2))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, path)
	})
	t.Run("text file", func(t *testing.T) {
		path := filepath.Join(dir, "transcript.jsonl")
		if err := os.WriteFile(path, []byte(`{"type":"user","message":{"content":"hi"}}`+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, path)
	})
	t.Run("truncated", func(t *testing.T) {
		path := filepath.Join(dir, "truncated.db")
		ix, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var rows []Row
		for i := range 400 {
			rows = append(rows, row("s", strconv.Itoa(i), "tool_result", "Bash", strings.Repeat(fmt.Sprintf("config line %d value %x ", i, i*7919), 30)))
		}
		mustAdd(t, ix, rows...)
		if err := ix.Close(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() < 64<<10 {
			t.Fatalf("index is only %d bytes", fi.Size())
		}
		if err := os.Truncate(path, fi.Size()/2); err != nil {
			t.Fatal(err)
		}
		check(t, path)
	})
	t.Run("damaged pages", func(t *testing.T) {
		path := filepath.Join(dir, "damaged.db")
		ix, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var rows []Row
		for i := range 400 {
			rows = append(rows, row("s", strconv.Itoa(i), "tool_result", "Bash", strings.Repeat(fmt.Sprintf("config line %d value %x ", i, i*7919), 30)))
		}
		mustAdd(t, ix, rows...)
		ix.Close()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Keep the header page, scribble over every page after it.
		r := rand.New(rand.NewPCG(3, 4))
		for i := 4096; i < len(b); i++ {
			b[i] = byte(r.Uint32())
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		check(t, path)
	})
	t.Run("other sqlite file", func(t *testing.T) {
		path := filepath.Join(dir, "other.db")
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Exec(`CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('config')`); err != nil {
			t.Fatal(err)
		}
		db.Close()
		check(t, path)
	})
}

func TestContextCanceled(t *testing.T) {
	ix, _ := openTemp(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := ix.Add(ctx, sample()); err == nil {
		t.Error("Add with a canceled context succeeded")
	}
	if n := count(t, ix); n != 0 {
		t.Errorf("canceled Add left %d rows", n)
	}
}

// TestLockedGivesUp holds the write lock from another connection: Add
// waits, then fails within the retry budget instead of hanging; once the
// lock is released, Add succeeds.
func TestLockedGivesUp(t *testing.T) {
	oldBusy, oldBudget := busyTimeout, retryBudget
	busyTimeout, retryBudget = 50*time.Millisecond, 300*time.Millisecond
	defer func() { busyTimeout, retryBudget = oldBusy, oldBudget }()

	ix, path := openTemp(t)
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(context.Background(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = ix.Add(context.Background(), sample())
	if err == nil {
		t.Fatal("Add succeeded while another connection held the write lock")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Add took %v to give up", d)
	}
	if !strings.Contains(err.Error(), path) {
		t.Errorf("error %q does not name the file", err)
	}
	// Readers are not blocked by the writer (WAL).
	if _, err := ix.Search(context.Background(), Query{Text: "config"}); err != nil {
		t.Errorf("Search while locked: %v", err)
	}

	// Released while Add waits: Add succeeds.
	busyTimeout, retryBudget = 50*time.Millisecond, 10*time.Second
	ix2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix2.Close()
	go func() {
		time.Sleep(300 * time.Millisecond)
		conn.ExecContext(context.Background(), `ROLLBACK`)
	}()
	if err := ix2.Add(context.Background(), sample()); err != nil {
		t.Errorf("Add after the lock was released: %v", err)
	}
	if n := count(t, ix2); n != len(sample()) {
		t.Errorf("count = %d", n)
	}
}

func TestDefaultPath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if got, want := DefaultPath(), filepath.Join("/x/state", "bs", "index.db"); got != want {
		t.Errorf("DefaultPath() = %q, want %q", got, want)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/someone")
	if got, want := DefaultPath(), filepath.Join("/home/someone", ".local", "state", "bs", "index.db"); got != want {
		t.Errorf("DefaultPath() = %q, want %q", got, want)
	}
}

func TestPathNeedsEscaping(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a dir?x=1#frag%20", "index.db")
	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, ix, sample()...)
	ix.Close()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("index not at %s: %v", path, err)
	}
}

// Concurrent writer processes.

const helperEnv = "BS_INDEX_TEST_WRITER"

const (
	writers       = 4
	rowsPerWriter = 500
	batchSize     = 50
)

// writerProcess runs in a child: spec is "path|dir|worker". It signals
// that it is ready, waits for the go file so that all writers start
// together, then adds its rows in batches.
func writerProcess(spec string) error {
	parts := strings.Split(spec, "|")
	if len(parts) != 3 {
		return fmt.Errorf("bad spec %q", spec)
	}
	path, dir, worker := parts[0], parts[1], parts[2]
	if err := os.WriteFile(filepath.Join(dir, "ready-"+worker), nil, 0o600); err != nil {
		return err
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return errors.New("no go signal")
		}
		time.Sleep(2 * time.Millisecond)
	}
	// Every writer also opens (and so may create) the index concurrently.
	ix, err := Open(path)
	if err != nil {
		return err
	}
	defer ix.Close()
	for b := 0; b < rowsPerWriter; b += batchSize {
		var rows []Row
		for i := b; i < b+batchSize; i++ {
			text := fmt.Sprintf("writer %s row %d: %s", worker, i, benchText(rand.New(rand.NewPCG(uint64(i), 7)), 12))
			r := row("w"+worker, fmt.Sprintf("w%s-e%d", worker, i), "tool_result", "Bash", text)
			rows = append(rows, r)
		}
		if err := ix.Add(context.Background(), rows); err != nil {
			return err
		}
		// Readers work alongside the writers.
		hits, err := ix.Search(context.Background(), Query{Text: fmt.Sprintf("writer %s row %d", worker, b), Session: "w" + worker, Limit: 1})
		if err != nil {
			return err
		}
		if len(hits) != 1 || hits[0].EntryID != rows[0].EntryID {
			return fmt.Errorf("search for %s: got %+v", rows[0].EntryID, hits)
		}
	}
	return nil
}

func TestConcurrentProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "index.db") // created by the writers
	type result struct {
		out []byte
		err error
	}
	results := make([]result, writers)
	var wg sync.WaitGroup
	for w := range writers {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s|%s|%d", helperEnv, path, dir, w))
		wg.Go(func() {
			out, err := cmd.CombinedOutput()
			results[w] = result{out, err}
		})
	}
	// Start them together once all are up.
	deadline := time.Now().Add(60 * time.Second)
	for w := 0; w < writers; {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("ready-%d", w))); err == nil {
			w++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatal("writers did not start")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for w, r := range results {
		if r.err != nil {
			t.Errorf("writer %d: %v\n%s", w, r.err, r.out)
		}
	}

	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if n, want := count(t, ix), writers*rowsPerWriter; n != want {
		t.Errorf("count = %d, want %d", n, want)
	}
	for w := range writers {
		hits := search(t, ix, Query{Text: fmt.Sprintf("writer %d row 499", w), Session: fmt.Sprintf("w%d", w)})
		if len(hits) == 0 || hits[0].EntryID != fmt.Sprintf("w%d-e499", w) {
			t.Errorf("writer %d's last row: got %v", w, entries(hits))
		}
	}
}

func TestPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\twith tab\nand line": "plain text\twith tab\nand line",
		"\x1b[31mSegfaultError\x1b[0m":   "SegfaultError",
		"\x1b[1;32mok\x1b[K done":        "ok done",
		"\x1b]0;title\x07after":          "after",
		"\x1b]8;;http://x\x1b\\link":     "link",
		"\x1b[2Jclear\x1bcreset":         "clearreset",
		"bell\x07 cr\r nul\x00 del\x7f":  "bell  cr  nul  del ",
		"c1\u0085next é\x1bé":            "c1 next éé",
		"\x1b[31é":                       "é",
		"trailing\x1b":                   "trailing",
		"trailing csi\x1b[12":            "trailing csi",
	} {
		got := plainText(in)
		if got != want {
			t.Errorf("PlainText(%q) = %q, want %q", in, got, want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("PlainText(%q) is not UTF-8", in)
		}
	}
}

// TestSearchFindsColouredWords: a word inside terminal colours is found,
// and its snippet holds no escape.
func TestSearchFindsColouredWords(t *testing.T) {
	ix, _ := openTemp(t)
	ctx := context.Background()
	if err := ix.Add(ctx, []Row{{Session: "s", EntryID: "e1", Pointer: "/x", Blob: "sha256:aa", Kind: "tool_result", Text: "make: \x1b[31mSegfaultError\x1b[0m in main"}}); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Search(ctx, Query{Text: "SegfaultError", Limit: 5})
	if err != nil || len(hits) != 1 {
		t.Fatalf("hits %v, err %v", hits, err)
	}
	if strings.ContainsRune(hits[0].Snippet, 0x1b) {
		t.Errorf("snippet %q holds an escape", hits[0].Snippet)
	}
}

// TestSessionIdentity: rows carry their session's identity, and a query
// by identity finds them wherever they were recorded (the path a filter's
// output went to and was then moved from, a pipe), with those recorded
// under the path asked for; a query by path alone stays exact.
func TestSessionIdentity(t *testing.T) {
	ix, _ := openTemp(t)
	moved := row("/w/f.tmp", "e1", "entry", "", "the evicted plugh entry, written to f.tmp and moved onto f")
	moved.Pointer, moved.SessionID = "", "S"
	piped := row("-", "e2", "tool_result", "bash", "plugh through a pipe")
	piped.SessionID = "S"
	here := row("/w/f", "e3", "tool_result", "bash", "plugh recorded under f itself, before identities")
	other := row("-", "e4", "tool_result", "bash", "plugh of another session, also through a pipe")
	other.SessionID = "T"
	mustAdd(t, ix, moved, piped, here, other)

	got := entries(search(t, ix, Query{Text: "plugh", SessionID: "S", Session: "/w/f"}))
	if strings.Join(sorted(got), ",") != "e1,e2,e3" {
		t.Errorf("by identity and path: %v, want e1, e2, e3", got)
	}
	if got := entries(search(t, ix, Query{Text: "plugh", SessionID: "T"})); strings.Join(got, ",") != "e4" {
		t.Errorf("by identity: %v, want e4", got)
	}
	if got := entries(search(t, ix, Query{Text: "plugh", Session: "/w/f"})); strings.Join(got, ",") != "e3" {
		t.Errorf("by path alone: %v, want e3", got)
	}
	// A value extracted under f, whose entry a later roll evicted into
	// f.tmp (then moved onto f), comes back with the entry.
	value := row("/w/f", "e1", "tool_result", "bash", "the plugh value extracted first")
	value.SessionID = "S"
	mustAdd(t, ix, value)
	mustAdd(t, ix, moved) // the roll, again, after it
	for _, h := range search(t, ix, Query{Text: "value extracted first", SessionID: "S", Session: "/w/f"}) {
		if h.EntryID == "e1" && (!h.Packed || h.SessionID != "S") {
			t.Errorf("the value whose entry was rolled elsewhere: %+v", h)
		}
	}
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

// TestMigrateV2: an index of schema version 2, as bs made it before rows
// carried their session's identity, is brought up to date when opened
// without losing a row: the rows of a session whose file is still where
// they name it take that file's identity, and a search by identity then
// finds them after the session moves; the rows of a file that is gone, or
// of a pipe, stay findable by their path.
func TestMigrateV2(t *testing.T) {
	dir := t.TempDir()
	live := filepath.Join(dir, "live.jsonl")
	if err := os.WriteFile(live, []byte(`{"type":"session","version":3,"id":"S-live","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/w"}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone.jsonl")
	old := []Row{
		row(live, "e1", "tool_result", "bash", "xyzzy in the live session"),
		row(live, "e2", "entry", "", "xyzzy evicted from the live session"),
		row(gone, "e3", "tool_result", "bash", "xyzzy in a file since removed"),
		row("-", "e4", "thinking", "", "xyzzy that went through a pipe"),
	}
	// A version 2 file: rows without an identity, their tags those of
	// their path, kind and tool, and no sid column.
	ix, path := openTemp(t)
	mustAdd(t, ix, old...)
	ix.Close()
	downgrade(t, path, `DROP INDEX removed_sid; ALTER TABLE removed DROP COLUMN sid; PRAGMA user_version = 2`)

	ix, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	checkVersion(t, ix)
	if n := count(t, ix); n != len(old) {
		t.Fatalf("%d rows after migrating, want %d", n, len(old))
	}
	if got := entries(search(t, ix, Query{Text: "xyzzy"})); len(got) != len(old) {
		t.Errorf("all rows: %v", got)
	}
	// The live session moved: its rows follow its identity.
	if got := sorted(entries(search(t, ix, Query{Text: "xyzzy", SessionID: "S-live", Session: filepath.Join(dir, "moved.jsonl")}))); strings.Join(got, ",") != "e1,e2" {
		t.Errorf("the live session's rows by identity: %v, want e1, e2", got)
	}
	for _, h := range search(t, ix, Query{Text: "xyzzy", SessionID: "S-live"}) {
		if h.SessionID != "S-live" || h.Session != live {
			t.Errorf("a migrated row: %+v", h)
		}
	}
	if got := entries(search(t, ix, Query{Text: "xyzzy", Session: gone})); strings.Join(got, ",") != "e3" {
		t.Errorf("the removed file's row by path: %v, want e3", got)
	}
	// New rows of the session carry its tag; the old ones are still found.
	r := row(filepath.Join(dir, "moved.jsonl"), "e5", "tool_result", "bash", "xyzzy after the move")
	r.SessionID = "S-live"
	mustAdd(t, ix, r)
	if got := sorted(entries(search(t, ix, Query{Text: "xyzzy", SessionID: "S-live"}))); strings.Join(got, ",") != "e1,e2,e5" {
		t.Errorf("by identity after a new row: %v, want e1, e2, e5", got)
	}
}

// count returns the number of rows in the index.
func (ix *Index) count(ctx context.Context) (int, error) {
	var n int
	err := ix.retry(ctx, func() error {
		return ix.db.QueryRowContext(ctx, `SELECT count(*) FROM removed`).Scan(&n)
	})
	if err != nil {
		return 0, ix.wrap("count", err)
	}
	return n, nil
}

// TestKinds: every kind a value extract can move has is a kind bs search
// takes, and so is "entry".
func TestKinds(t *testing.T) {
	kinds := Kinds()
	for _, k := range append(strings.Split(transcript.AllKinds.String(), ","), "entry") {
		if !slices.Contains(kinds, k) {
			t.Errorf("Kinds %v lacks %q", kinds, k)
		}
	}
}
