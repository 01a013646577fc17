// Package index is the full-text search index over everything bs removed
// from a transcript: extracted values, evicted entries, archived turns.
//
// Filters that move a value into the blob store also call [Index.Add] with
// one [Row] per value, and `bs search` calls [Index.Search] to find it again
// and to tell the user how to restore it. The index is one SQLite file
// (modernc.org/sqlite, pure Go) with an FTS5 table ranked by BM25.
//
// The file is private (0600, in a 0700 directory): removed tool output holds
// whatever the agent saw, secrets included. Several bs processes may add
// rows at once: the file is in WAL mode, writers take the write lock up
// front (BEGIN IMMEDIATE) and wait for each other, for a bounded time.
//
// How bs search shows a hit, and the command that restores it, is in
// hits.go.
package index

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/xdg"
)

// Kinds are the kinds a row can have: those of the values extract and
// trim moved (transcript.KindNames), and "entry" for what roll evicted and
// archive holds.
func Kinds() []string { return append(transcript.KindNames(), "entry") }

// Row is one removed value.
type Row struct {
	Session string // session name, e.g. "agent/sessionid" or a file base name
	EntryID string // the transcript entry the value belongs to
	Pointer string // JSON Pointer of the value inside the entry, e.g. /message/content/0/text
	Blob    string // "sha256:<64 hex>"
	Kind    string // tool_call | tool_result | thinking | text | image | entry
	Tool    string // tool name, may be ""
	Time    string // entry timestamp as the transcript had it, may be ""
	// SessionID is what the session is, whatever file holds it
	// (transcript.IdentityOf): the header's id, Claude Code's
	// sessionId, Codex's session id; "" when the transcript states none,
	// and then only its path (Session) names it.
	SessionID string `json:",omitempty"`
	// The store the blob went to, when the filter was given one (a flag,
	// BS_STORE, the configuration file); "" for the default store.
	Store string `json:",omitempty"`
	Text  string // the removed text (decoded); "" for images; last, for the queue's writers
}

// Query is what [Index.Search] looks for. Text is plain user text, not FTS5
// syntax: any string is safe. Session, Kind and Tool, when not empty, keep
// only rows whose field equals them exactly.
//
// SessionID, when not empty, keeps the rows of the session it identifies
// instead, wherever they were recorded: those recorded with it
// (Row.SessionID), and, when Session is given too, those recorded under
// that path. A session follows its identity when a filter's output is
// moved over its input, or written through a pipe.
type Query struct {
	Text                string
	Session, Kind, Tool string // optional exact filters
	SessionID           string // optional: the session's rows, by identity (or under Session)
	Limit               int    // at most this many hits; 0 or less means DefaultLimit
}

// Hit is one search result.
type Hit struct {
	Row // Text is left empty: the value itself is in the blob store

	// Snippet is a short excerpt of the text around the match, each
	// matched term or phrase between "[" and "]", and "…" where the text
	// goes on. Brackets of the text itself are left as they are.
	Snippet string

	// Score is the BM25 score of the row for the query that found it, as
	// FTS5 reports it: lower (more negative) is better. Hits found by the
	// exact phrase come before those found by the separate words, each
	// group ordered by its own Score, so Score is not monotonic across the
	// two groups.
	Score float64

	// Packed says that the value's entry was later evicted by bs roll or
	// collapsed by bs archive whole (a row of kind entry added after the
	// value's): restore --all brings the entry back, with the value.
	Packed bool

	id, seq int64 // the row's
}

// DefaultLimit is the number of hits Search returns when Query.Limit is 0.
const DefaultLimit = 20

var (
	// errCorrupt is wrapped by the errors of Open, Add, Search and Count
	// when the index file is damaged or is not a bs search index. The
	// error's message names the file.
	errCorrupt = errors.New("damaged or not a bs search index")

	// errEmptyQuery is returned by Search for a query text that is empty
	// or only white space. Any other text is a valid query, if one that
	// may find nothing.
	errEmptyQuery = errors.New("empty search query")
)

// Schema.
//
// removed holds one row per removed value: its metadata, its text, and the
// uniqueness of (session, entry_id, pointer, blob) that makes Add
// idempotent (INSERT ... ON CONFLICT DO NOTHING). The short columns come
// before text so that reading them never walks a long text's overflow
// pages.
//
// removed_fts is an external-content FTS5 table over removed: it keeps only
// the inverted index, and reads the text back from removed (by rowid =
// removed.id) when snippet() needs it, so each text is stored once.
// Triggers keep the two in step, so every writer (today Add, later
// prune-retention deleting rows) maintains the index by writing removed
// alone; an ignored duplicate fires no trigger.
//
// Besides text, removed_fts indexes tags: one token per filter field (see
// filterTag), so that Search's session, kind and tool filters narrow the
// match inside FTS5 instead of looking up every matching row in removed.
// The rank is BM25 over text alone (tags weigh 0). User words carry no
// column filter (it makes FTS5 walk each row's positions more slowly, by
// about 15%): only someone typing a tag token itself could match column
// tags.
//
// application_id marks the file as a bs index, so that another SQLite file
// given by mistake is refused (errCorrupt) rather than written into;
// user_version is the schema version. Version 2 added removed.store and
// removed.seq; version 3 added removed.sid, the session's identity
// (Row.SessionID), with its tag. An older file is brought up to date when
// opened (migrations): its rows stay, and version 3 gives the rows of each
// session whose file is still where they name it that file's identity.
//
// seq orders the rows by when they were last added: a row added again
// (the same value extracted anew after a restore) moves to the end, which
// rowids cannot do. Hit.Packed compares it.
const (
	appID         = 0x62736978 // "bsix"
	schemaVersion = 3
)

// migrations[v] takes a file of schema version v to v+1.
var migrations = map[int][]string{
	1: {
		`ALTER TABLE removed ADD COLUMN store TEXT NOT NULL DEFAULT ''`,
		`ALTER TABLE removed ADD COLUMN seq INTEGER NOT NULL DEFAULT 0`,
		`UPDATE removed SET seq = id`,
		`CREATE INDEX removed_seq ON removed(seq)`,
		`PRAGMA user_version = 2`,
	},
	2: {
		`ALTER TABLE removed ADD COLUMN sid TEXT NOT NULL DEFAULT ''`,
		`CREATE INDEX removed_sid ON removed(sid, entry_id)`,
		`PRAGMA user_version = 3`,
	},
}

var schema = []string{
	`CREATE TABLE removed (
		id       INTEGER PRIMARY KEY,
		session  TEXT NOT NULL,
		entry_id TEXT NOT NULL,
		pointer  TEXT NOT NULL,
		blob     TEXT NOT NULL,
		kind     TEXT NOT NULL,
		tool     TEXT NOT NULL,
		time     TEXT NOT NULL,
		tags     TEXT NOT NULL,
		text     TEXT NOT NULL,
		store    TEXT NOT NULL DEFAULT '',
		seq      INTEGER NOT NULL DEFAULT 0,
		sid      TEXT NOT NULL DEFAULT '',
		UNIQUE (session, entry_id, pointer, blob)
	)`,
	`CREATE INDEX removed_seq ON removed(seq)`,
	`CREATE INDEX removed_sid ON removed(sid, entry_id)`,
	`CREATE VIRTUAL TABLE removed_fts USING fts5(
		text, tags,
		content='removed', content_rowid='id',
		tokenize='porter unicode61'
	)`,
	`INSERT INTO removed_fts(removed_fts, rank) VALUES ('rank', 'bm25(1.0, 0.0)')`,
	`CREATE TRIGGER removed_ai AFTER INSERT ON removed BEGIN
		INSERT INTO removed_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
	END`,
	`CREATE TRIGGER removed_ad AFTER DELETE ON removed BEGIN
		INSERT INTO removed_fts(removed_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
	END`,
	`CREATE TRIGGER removed_au AFTER UPDATE OF text, tags ON removed BEGIN
		INSERT INTO removed_fts(removed_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
		INSERT INTO removed_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags);
	END`,
	fmt.Sprintf(`PRAGMA application_id = %d`, appID),
	fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion),
}

// filterTag is the token that stands for field = value in column tags:
// "z", the field's letter, 16 hex digits of the SHA-256 of the value, and
// "0". The tokenizer keeps it whole (letters and digits only) and the
// porter stemmer leaves it alone (no English suffix ends in a digit). Two
// values sharing a tag would only cost a wasted candidate: Search still
// compares the fields themselves.
func filterTag(field byte, value string) string {
	h := sha256.Sum256([]byte(value))
	return "z" + string(field) + hex.EncodeToString(h[:8]) + "0"
}

func rowTags(r Row) string {
	tags := filterTag('s', r.Session) + " " + filterTag('k', r.Kind) + " " + filterTag('t', r.Tool)
	if r.SessionID != "" {
		tags += " " + filterTag('i', r.SessionID)
	}
	return tags
}

// Waiting for other writers. Each statement waits up to busyTimeout for a
// lock (SQLite's busy handler); a transaction that still fails with
// SQLITE_BUSY or SQLITE_LOCKED is retried with a growing, jittered pause
// until retryBudget has passed since the first attempt. Variables so that
// tests can shorten them.
var (
	busyTimeout = 5 * time.Second
	retryBudget = 30 * time.Second
)

const (
	snippetTokens = 16  // words in a snippet (FTS5 allows at most 64)
	maxTerms      = 64  // words of a query used for the all-words search
	maxPhrase     = 256 // words of a query used for the exact-phrase search
)

// scoreWindow bounds the work of one search: at most about this many
// candidate rows are ranked (see Search and floor). BM25 costs about 3 µs
// a matching row here (FTS5 looks up each row's length), so a word found
// in most of 100,000 rows would otherwise take 200-300 ms. A variable so
// that tests can shrink it.
var scoreWindow = 5_000

// Index is an open search index. Its methods may be called from several
// goroutines at once.
type Index struct {
	db   *sql.DB
	path string
}

// DefaultPath is $XDG_STATE_HOME/bs/index.db, else ~/.local/state/bs/index.db.
func DefaultPath() string { return filepath.Join(xdg.State(), "index.db") }

// Open opens the index at path, creating it when it does not exist: missing
// parent directories are created with mode 0700 and the file with mode
// 0600, whatever the umask (existing directories and files keep their
// modes). It sets up the schema of a new file and refuses, with an error
// wrapping errCorrupt, a file that is damaged or is not a bs index.
func Open(path string) (*Index, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	if err := mkdirPrivate(filepath.Dir(abs)); err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	if err := createPrivate(abs); err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}

	// A file: URI, so that any byte of the path ("?", "#", "%") is escaped
	// and reaches SQLite unchanged. _txlock makes every transaction BEGIN
	// IMMEDIATE: a writer takes the write lock before it reads, so it waits
	// in the busy handler instead of failing on a stale snapshot.
	// synchronous=NORMAL is safe against corruption in WAL mode; a power
	// loss may cost the last transactions, not the file.
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	dsn := (&url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: q.Encode()}).String()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open index %s: %w", path, err)
	}
	ix := &Index{db: db, path: path}
	if err := ix.retry(context.Background(), ix.setUp); err != nil {
		db.Close()
		return nil, ix.wrap("open", err)
	}
	return ix, nil
}

// mkdirPrivate creates dir and its missing parents with mode 0700. It
// leaves existing directories alone.
func mkdirPrivate(dir string) error {
	fi, err := os.Stat(dir)
	if err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirPrivate(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil // made by another process just now
		}
		return err
	}
	// The umask may have taken bits away from 0700; put them back.
	return os.Chmod(dir, 0o700)
}

// createPrivate creates an empty file at path with mode 0600 unless it
// exists. SQLite gives the -wal and -shm files it creates the mode of the
// database file.
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil
		}
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// setUp checks that the file is a bs index, or makes it one if it is
// empty, and brings an older one up to date.
func (ix *Index) setUp() error {
	ctx := context.Background()
	fresh, version, err := ix.checkSchema(ctx, ix.db)
	if err != nil {
		return err
	}
	// WAL is a property of the file: set once, it stays (and setting it
	// again is a no-op). It cannot change inside a transaction.
	var mode string
	if err := ix.db.QueryRowContext(ctx, `PRAGMA journal_mode = WAL`).Scan(&mode); err != nil {
		return err
	}
	if !fresh && version == schemaVersion {
		return nil
	}
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	// Another process may have set the file up, or migrated it, since the
	// check above.
	if fresh, version, err = ix.checkSchema(ctx, tx); err != nil {
		return err
	}
	stmts := schema
	if !fresh {
		stmts = nil
		for v := version; v < schemaVersion; v++ {
			stmts = append(stmts, migrations[v]...)
		}
	}
	for _, stmt := range stmts {
		if _, err := tx.ExecContext(ctx, stmt); err != nil {
			return err
		}
	}
	if !fresh && version < 3 {
		if err := identifySessions(ctx, tx); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// identifySessions gives the rows of an index from before rows carried
// their session's identity the identity of the file they name, where that
// file is still there: the rows keep their path, and now follow the
// session too. Their tags stay (adding one would have FTS5 index every
// text again): Search finds them by the paths recorded with an identity.
func identifySessions(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT session FROM removed WHERE sid = ''`)
	if err != nil {
		return err
	}
	var sessions []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return err
		}
		sessions = append(sessions, s)
	}
	if err := rows.Close(); err != nil {
		return err
	}
	for _, s := range sessions {
		if !filepath.IsAbs(s) {
			continue // "-", a pipe: no file says what it was
		}
		id := transcript.IdentityOfFile(s)
		if id == "" {
			continue
		}
		if _, err := tx.ExecContext(ctx, `UPDATE removed SET sid = ? WHERE session = ? AND sid = ''`, id, s); err != nil {
			return err
		}
	}
	return nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// checkSchema reports whether the file is empty (fresh), else its schema
// version, and fails when it is neither empty nor a bs index of a known
// version.
func (ix *Index) checkSchema(ctx context.Context, q querier) (fresh bool, version int, err error) {
	// One statement, so one snapshot: another process may be setting the
	// file up at this very moment.
	var id, objects, ours int
	if err := q.QueryRowContext(ctx, `SELECT
			(SELECT application_id FROM pragma_application_id),
			(SELECT user_version FROM pragma_user_version),
			count(*),
			count(CASE WHEN name IN ('removed', 'removed_fts') THEN 1 END)
		FROM sqlite_schema`,
	).Scan(&id, &version, &objects, &ours); err != nil {
		return false, 0, err
	}
	switch {
	case id == 0 && version == 0 && objects == 0:
		return true, 0, nil
	case id != appID:
		return false, 0, fmt.Errorf("%w: a SQLite file of another program", errCorrupt)
	case version > schemaVersion:
		return false, 0, fmt.Errorf("index schema version %d is newer than this bs knows (%d): upgrade bs", version, schemaVersion)
	case version < 1 || ours != 2:
		return false, 0, fmt.Errorf("%w: its tables are missing", errCorrupt)
	}
	return false, version, nil
}

// Close closes the index.
func (ix *Index) Close() error {
	return ix.db.Close()
}

// Add adds rows to the index in one transaction. A row whose (Session,
// EntryID, Pointer, Blob) is already in the index is skipped, so adding
// the same rows again changes nothing. Add waits for other writers, for a
// bounded time, rather than fail.
func (ix *Index) Add(ctx context.Context, rows []Row) error {
	if len(rows) == 0 {
		return nil
	}
	err := ix.retry(ctx, func() error {
		tx, err := ix.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see Open)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		var seq int64
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(max(seq), 0) FROM removed`).Scan(&seq); err != nil {
			return err
		}
		// A row already there keeps its text (no trigger fires) and moves
		// to the end of the order; if it did not know its session's
		// identity, it learns it (its tags stay: Search finds it by its
		// path).
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO removed
			(session, entry_id, pointer, blob, kind, tool, time, tags, text, store, seq, sid)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (session, entry_id, pointer, blob) DO UPDATE SET seq = excluded.seq,
				sid = CASE WHEN removed.sid = '' THEN excluded.sid ELSE removed.sid END`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, r := range rows {
			seq++
			if _, err := stmt.ExecContext(ctx, r.Session, r.EntryID, r.Pointer, r.Blob, r.Kind, r.Tool, r.Time, rowTags(r), plainText(r.Text), r.Store, seq, r.SessionID); err != nil {
				return err
			}
		}
		return tx.Commit()
	})
	if err != nil {
		return ix.wrap("add", err)
	}
	return nil
}

// plainText is text as it is indexed: the terminal control sequences of
// tool output (colours, cursor moves, window titles) are dropped, so that
// a word coloured red is found as itself, and a snippet prints nothing a
// terminal acts on; any other control character but tab and line feed
// becomes a space.
func plainText(s string) string {
	i := 0
	for i < len(s) && !isControl(s, i) {
		i++
	}
	if i == len(s) {
		return s // the common case: nothing to drop
	}
	b := []byte(s[:i])
	for i < len(s) {
		if !isControl(s, i) {
			b = append(b, s[i])
			i++
			continue
		}
		if s[i] != 0x1b {
			b = append(b, ' ')
			i += controlLen(s, i)
			continue
		}
		i = escapeEnd(s, i)
	}
	return string(b)
}

// isControl reports whether s[i] starts a control character other than
// tab and line feed: C0, DEL, or C1 (U+0080–U+009F, two bytes in UTF-8).
func isControl(s string, i int) bool {
	c := s[i]
	return c < 0x20 && c != '\t' && c != '\n' || c == 0x7f || c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f
}

func controlLen(s string, i int) int {
	if s[i] == 0xc2 {
		return 2
	}
	return 1
}

// escapeEnd returns where the escape sequence at s[i] ends: a CSI
// (ESC [ parameters final byte), an OSC or other string (ESC ] ... BEL or
// ESC \), or ESC and one character.
func escapeEnd(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[':
		for i++; i < len(s); i++ {
			switch c := s[i]; {
			case c >= 0x40 && c <= 0x7e:
				return i + 1
			case c < 0x20 || c > 0x7e:
				return i // not a CSI after all: keep what follows
			}
		}
		return i
	case ']', 'P', '_', '^', 'X':
		for i++; i < len(s); i++ {
			if s[i] == 0x07 {
				return i + 1
			}
			if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
		return i
	}
	if s[i] >= 0x80 {
		return i // never split a character
	}
	return i + 1
}

// Search finds the rows whose text matches q.Text, best first, at most
// q.Limit of them.
//
// The text is taken as plain words, never as FTS5 query syntax. Rows that
// hold the words as the exact phrase come first, then rows that hold all
// the words anywhere; each group is ordered by BM25. Words match by stem
// ("running" finds "runs"), case- and accent-insensitively. Punctuation
// splits words, and a word with punctuation inside ("os.ReadFile",
// "foo-bar") must appear as that sequence of words. A text with no letter
// or digit at all finds nothing. An empty text is errEmptyQuery.
//
// Search ranks at most 5,000 candidate rows, which keeps it fast on a
// large index: when every word of the query and every filter is found in
// more than 5,000 rows, only recent rows are candidates, those from the
// 5,000th-newest row holding one of the words (or filters) on. Older rows
// need a rarer word or a filter to be found.
func (ix *Index) Search(ctx context.Context, q Query) ([]Hit, error) {
	if strings.TrimSpace(q.Text) == "" {
		return nil, errEmptyQuery
	}
	var terms []string // the words that tokenize to something
	for _, w := range queryWords(q.Text) {
		if hasTokenChar(w) {
			terms = append(terms, w)
		}
	}
	if len(terms) == 0 {
		return nil, nil
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}

	if len(terms) > maxPhrase {
		terms = terms[:maxPhrase]
	}
	words := uniqueWords(terms)

	var hits []Hit
	err := ix.retry(ctx, func() error {
		hits = hits[:0]
		// The filters, as FTS5 expressions on column tags.
		filters, err := ix.filters(ctx, q)
		if err != nil {
			return err
		}
		var filter string
		for _, f := range filters {
			filter += " AND " + f
		}
		exact := ftsString(strings.Join(terms, " ")) + filter
		var all string // side by side, FTS5 strings are an implicit AND
		for _, w := range words {
			all += ftsString(w) + " "
		}
		all += filter
		floor, err := ix.floor(ctx, tokens(words), filters)
		if err != nil {
			return err
		}
		seen := map[int64]bool{}
		if err := ix.match(ctx, q, exact, floor, limit, &hits, seen); err != nil {
			return err
		}
		if len(terms) == 1 || len(hits) >= limit {
			return nil
		}
		// Every phrase hit also holds all the words, so limit more rows
		// than were found already are enough to fill the limit.
		return ix.match(ctx, q, all, floor, limit+len(hits), &hits, seen)
	})
	if err != nil {
		return nil, ix.wrap("search", err)
	}
	if len(hits) > limit {
		hits = hits[:limit]
	}
	for i := range hits {
		if hits[i].Kind == "entry" {
			continue
		}
		// The entry row may be under another path of the same session
		// (a roll whose output was moved over its input).
		err := ix.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM removed
			WHERE (session = ?1 OR ?2 != '' AND sid = ?2) AND entry_id = ?3 AND kind = 'entry' AND seq > ?4)`,
			hits[i].Session, hits[i].SessionID, hits[i].EntryID, hits[i].seq).Scan(&hits[i].Packed)
		if err != nil {
			return nil, ix.wrap("search", err)
		}
	}
	return hits, nil
}

// filters are the FTS5 expressions on column tags that every match of q
// holds, the session's first (usually the rarest). A session asked for by
// identity is its identity's tag, or its path's, or the tag of any path
// rows of an index from before identities were recorded under it
// (identifySessions): those rows carry only their path's tag.
func (ix *Index) filters(ctx context.Context, q Query) ([]string, error) {
	tag := func(field byte, value string) string { return `"` + filterTag(field, value) + `"` }
	var filters []string
	switch {
	case q.SessionID != "":
		alts := []string{tag('i', q.SessionID)}
		if q.Session != "" {
			alts = append(alts, tag('s', q.Session))
		}
		rows, err := ix.db.QueryContext(ctx, `SELECT DISTINCT session FROM removed WHERE sid = ? AND session != '-'`, q.SessionID)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				rows.Close()
				return nil, err
			}
			if t := tag('s', s); !slices.Contains(alts, t) {
				alts = append(alts, t)
			}
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
		filters = append(filters, `tags : (`+strings.Join(alts, " OR ")+`)`)
	case q.Session != "":
		filters = append(filters, `tags : `+tag('s', q.Session))
	}
	if q.Kind != "" {
		filters = append(filters, `tags : `+tag('k', q.Kind))
	}
	if q.Tool != "" {
		filters = append(filters, `tags : `+tag('t', q.Tool))
	}
	return filters, nil
}

// floor returns the smallest rowid worth ranking for a query whose every
// match holds each of toks and matches each of filters: 0 when one of them
// is in at most scoreWindow rows, else the lowest of their scoreWindow-th
// newest rows. Either way at most scoreWindow rows
// from floor on can match the query. FTS5 walks a token's rows newest
// first without scoring them, which is cheap, and stops at the first
// token found in few rows.
func (ix *Index) floor(ctx context.Context, toks, filters []string) (int64, error) {
	exprs := slices.Clone(filters)
	for _, t := range toks {
		exprs = append(exprs, ftsString(t))
	}
	floor := int64(-1)
	for _, e := range exprs {
		var r int64
		err := ix.db.QueryRowContext(ctx, `SELECT rowid FROM removed_fts WHERE removed_fts MATCH ?
			ORDER BY rowid DESC LIMIT 1 OFFSET ?`, e, scoreWindow-1).Scan(&r)
		if errors.Is(err, sql.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		if floor < 0 || r < floor {
			floor = r
		}
	}
	return max(floor, 0), nil
}

// match appends to hits the best rows from floor on for the FTS5
// expression expr that pass q's filters and are not in seen, reading at
// most n rows.
//
// The CROSS JOIN keeps removed_fts the outer loop, so FTS5 itself orders
// the matches by rank and snippet() runs only for the rows read, not for
// every match. The filters were applied in expr already; they are checked
// again on the fields themselves.
func (ix *Index) match(ctx context.Context, q Query, expr string, floor int64, n int, hits *[]Hit, seen map[int64]bool) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, `SELECT r.id, r.seq, r.session, r.entry_id, r.pointer, r.blob, r.kind, r.tool, r.time, r.store, r.sid,
			snippet(removed_fts, 0, '[', ']', '…', %d), removed_fts.rank
		FROM removed_fts CROSS JOIN removed AS r ON r.id = removed_fts.rowid
		WHERE removed_fts MATCH ? AND removed_fts.rowid >= ?`, snippetTokens)
	args := []any{expr, floor}
	session := q.Session
	if q.SessionID != "" {
		sb.WriteString(` AND (r.sid = ? OR r.session = ?)`)
		args = append(args, q.SessionID, q.Session)
		session = ""
	}
	for _, f := range []struct{ col, val string }{{"session", session}, {"kind", q.Kind}, {"tool", q.Tool}} {
		if f.val != "" {
			fmt.Fprintf(&sb, ` AND r.%s = ?`, f.col)
			args = append(args, f.val)
		}
	}
	sb.WriteString(` ORDER BY removed_fts.rank LIMIT ?`)
	args = append(args, n)

	rows, err := ix.db.QueryContext(ctx, sb.String(), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var h Hit
		if err := rows.Scan(&h.id, &h.seq, &h.Session, &h.EntryID, &h.Pointer, &h.Blob, &h.Kind, &h.Tool, &h.Time, &h.Store, &h.SessionID, &h.Snippet, &h.Score); err != nil {
			return err
		}
		if !seen[h.id] {
			seen[h.id] = true
			*hits = append(*hits, h)
		}
	}
	return rows.Err()
}

// queryWords splits the user's text into words at white space, after
// making it valid UTF-8 without control characters (FTS5 ends a string at
// a NUL).
func queryWords(text string) []string {
	text = strings.ToValidUTF8(text, " ")
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text)
	return strings.Fields(text)
}

// hasTokenChar reports whether the tokenizer finds at least one token in w:
// unicode61 keeps letters, digits and private-use characters and drops the
// rest. A word with none would be an empty FTS5 phrase, which matches no
// row on its own.
func hasTokenChar(w string) bool {
	return strings.ContainsFunc(w, isTokenChar)
}

func isTokenChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// tokens returns the pieces of words between characters that are
// separators for the tokenizer too, each once (ignoring case), longest
// first as the likeliest to be rare, at most maxTerms of them. It keeps
// marks inside pieces: should it keep a character the tokenizer splits
// at, a piece is a phrase of several tokens, still found in every row
// that holds the term.
func tokens(words []string) []string {
	var toks []string
	seen := map[string]bool{}
	for _, t := range words {
		for _, p := range strings.FieldsFunc(t, func(r rune) bool { return !isTokenChar(r) && !unicode.IsMark(r) }) {
			if k := strings.ToLower(p); !seen[k] && hasTokenChar(p) {
				seen[k] = true
				toks = append(toks, p)
			}
		}
	}
	slices.SortStableFunc(toks, func(a, b string) int { return utf8.RuneCountInString(b) - utf8.RuneCountInString(a) })
	if len(toks) > maxTerms {
		toks = toks[:maxTerms]
	}
	return toks
}

// ftsString quotes s as an FTS5 string: inside double quotes nothing is
// syntax (not *, ^, :, (, NEAR, AND, OR, NOT), and a double quote is
// written twice. FTS5 tokenizes the string, so several words make a phrase.
func ftsString(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// uniqueWords returns the terms each once (ignoring case), at most
// maxTerms of them.
func uniqueWords(terms []string) []string {
	var words []string
	seen := map[string]bool{}
	for _, t := range terms {
		k := strings.ToLower(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		words = append(words, t)
		if len(words) == maxTerms {
			break
		}
	}
	return words
}

// retry runs f until it succeeds, fails with an error other than
// SQLITE_BUSY or SQLITE_LOCKED, ctx is done, or retryBudget has passed.
func (ix *Index) retry(ctx context.Context, f func() error) error {
	deadline := time.Now().Add(retryBudget)
	pause := 5 * time.Millisecond
	for {
		err := f()
		if err == nil || !isBusy(err) {
			return err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("index still locked by another process after %v: %w", retryBudget, err)
		}
		d := min(pause/2+rand.N(pause), left)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// sqliteCode returns the primary SQLite result code of err, or 0.
func sqliteCode(err error) int {
	var e *sqlite.Error
	if errors.As(err, &e) {
		return e.Code() & 0xff
	}
	return 0
}

func isBusy(err error) bool {
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
}

func isCorrupt(err error) bool {
	if errors.Is(err, errCorrupt) {
		return true
	}
	c := sqliteCode(err)
	return c == sqlite3.SQLITE_CORRUPT || c == sqlite3.SQLITE_NOTADB
}

// wrap names the file in err, and makes a damaged file's error wrap
// errCorrupt.
func (ix *Index) wrap(op string, err error) error {
	if !errors.Is(err, errCorrupt) && isCorrupt(err) {
		return fmt.Errorf("%s index %s: %w: %w", op, ix.path, errCorrupt, err)
	}
	return fmt.Errorf("%s index %s: %w", op, ix.path, err)
}

// Forget deletes the rows of the blobs gone (names "sha256:<64 hex>") from
// the store, so that no hit names a blob that is gone, and returns how
// many it deleted. The rows are found in one pass over the table.
func (ix *Index) Forget(ctx context.Context, gone map[string]bool) (int, error) {
	if len(gone) == 0 {
		return 0, nil
	}
	n := 0
	err := ix.retry(ctx, func() error {
		n = 0
		tx, err := ix.db.BeginTx(ctx, nil) // BEGIN IMMEDIATE (see Open)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		rows, err := tx.QueryContext(ctx, `SELECT id, blob FROM removed`)
		if err != nil {
			return err
		}
		var ids []int64
		for rows.Next() {
			var id int64
			var blob string
			if err := rows.Scan(&id, &blob); err != nil {
				rows.Close()
				return err
			}
			if gone[blob] {
				ids = append(ids, id)
			}
		}
		if err := rows.Close(); err != nil {
			return err
		}
		if err := rows.Err(); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `DELETE FROM removed WHERE id = ?`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, id := range ids {
			if _, err := stmt.ExecContext(ctx, id); err != nil {
				return err
			}
		}
		n = len(ids)
		return tx.Commit()
	})
	if err != nil {
		return 0, ix.wrap("forget", err)
	}
	return n, nil
}
