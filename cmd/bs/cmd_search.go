package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/internal/searchqueue"
)

// indexFlags select the search index.
func indexFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "index", Usage: "the search index `FILE` (default $XDG_STATE_HOME/bs/index.db)", EnvVars: []string{"BS_INDEX"}},
	}
}

func indexPath(c *cli.Context) string {
	if p := c.String("index"); p != "" {
		return p
	}
	return index.DefaultPath()
}

func searchCommand() *cli.Command {
	return &cli.Command{
		Name:      "search",
		Usage:     "full-text search (BM25) over everything bs removed",
		ArgsUsage: "QUERY",
		Description: "Searches the values extract moved and the entries roll evicted. Each hit shows the entry id, " +
			"the session, a snippet with the match in [brackets], and the bs restore command that brings it back. " +
			"An exact phrase ranks first.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "session", Usage: "only hits from this session"},
			&cli.StringFlag{Name: "kind", Usage: "only this kind: tool_call, tool_result, thinking, text, image, bookkeeping or entry"},
			&cli.StringFlag{Name: "tool", Usage: "only values of this tool"},
			&cli.IntFlag{Name: "limit", Value: index.DefaultLimit, Usage: "at most `N` hits"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object per hit"},
		}, indexFlags()...),
		Action: runSearch,
	}
}

// searchKinds are the kinds a row can have: what extract and trim moved,
// and "entry" for what roll evicted and archive holds.
var searchKinds = []string{"tool_call", "tool_result", "thinking", "text", "image", "bookkeeping", "entry"}

func runSearch(c *cli.Context) error {
	if f := misplacedFlag(c, c.Args().Slice()); f != "" {
		return usagef(msgFlagAfterArgs, f)
	}
	query := strings.Join(c.Args().Slice(), " ")
	if strings.TrimSpace(query) == "" {
		return usagef(msgSearchArgs)
	}
	if k := c.String("kind"); k != "" && !slices.Contains(searchKinds, k) {
		return usagef(msgSearchKind, k, strings.Join(searchKinds, ", "))
	}
	if c.Int("limit") < 1 {
		return usagef(msgSearchLimit)
	}
	path := indexPath(c)
	if !indexExists(path) {
		// Opening would create an empty index (and its directories) at a
		// mistyped path, and answer "no hits" as if it had looked.
		ui{c.App.ErrWriter}.errorf("search", msgNoIndex, path)
		ui{c.App.ErrWriter}.hintf(hintNoIndex)
		return &reported{code: exitFailure}
	}
	ix, err := openIndex(c.Context, path, ui{c.App.ErrWriter}, nil)
	if err != nil {
		if c.Context.Err() == nil { // not interrupted: the index is at fault
			ui{c.App.ErrWriter}.hintf(hintIndex)
		}
		return err
	}
	defer ix.Close()
	session := c.String("session")
	if session != "" {
		session = searchqueue.SessionFor(session) // sessions are named by absolute path
	}
	// Hits are entries: ask for more rows than --limit, for the values of
	// one entry that match together (a Claude Code result is kept twice).
	limit := c.Int("limit")
	hits, err := ix.Search(c.Context, index.Query{Text: query, Session: session, Kind: c.String("kind"), Tool: c.String("tool"), Limit: min(limit*4, limit+1000)})
	if err != nil {
		ui{c.App.ErrWriter}.hintf(hintIndex)
		return err
	}
	hits = onePerEntry(hits)
	hits = hits[:min(len(hits), limit)]
	out := c.App.Writer
	here := restoreStore(c)
	for _, h := range hits {
		cmd := restoreCommandFor(h, here)
		h.Snippet = displaySnippet(h.Snippet)
		if c.Bool("json") {
			b, _ := json.Marshal(searchHit{h.EntryID, h.Session, h.Pointer, h.Blob, h.Kind, h.Tool, h.Time, h.Store, h.Snippet, h.Score, cmd})
			fmt.Fprintf(out, "%s\n", b)
			continue
		}
		fmt.Fprintf(out, "%s  %s  %s", h.EntryID, h.Session, h.Kind)
		if h.Tool != "" {
			fmt.Fprintf(out, " (%s)", h.Tool)
		}
		if h.Time != "" {
			fmt.Fprintf(out, "  %s", h.Time)
		}
		fmt.Fprintf(out, "\n    %s\n    %s\n", h.Snippet, cmd)
	}
	if len(hits) == 0 {
		// As grep and rg: no hits is exit 1, with --json too (whose
		// output stays empty: nothing but hits goes there).
		if !c.Bool("json") {
			ui{c.App.ErrWriter}.errorf("search", msgNoHits, query)
		}
		return &reported{code: exitFailure}
	}
	return nil
}

// onePerEntry keeps the first, best ranked, hit of each entry of a
// session. An entry several of whose values matched comes back whole: its
// hit names no pointer. (Claude Code keeps each tool result twice, in the
// message and as toolUseResult, so both match.)
func onePerEntry(hits []index.Hit) []index.Hit {
	type key struct{ session, entry string }
	first := map[key]int{}
	var out []index.Hit
	for _, h := range hits {
		if h.Kind == "entry" || h.EntryID == "" {
			out = append(out, h)
			continue
		}
		k := key{h.Session, h.EntryID}
		if i, ok := first[k]; ok {
			if out[i].Pointer != h.Pointer {
				out[i].Pointer = ""
			}
			continue
		}
		first[k] = len(out)
		out = append(out, h)
	}
	return out
}

// displaySnippet is a snippet made fit for a line of a terminal: on one
// line, without control characters (rows indexed before PlainText may hold
// them), and with any word longer than maxSnippetWord shortened to its
// ends (FTS5 bounds a snippet in words, and one word of a hex dump or a
// minified file can be a hundred kilobytes).
func displaySnippet(s string) string {
	s = index.PlainText(s)
	words := strings.FieldsFunc(s, unicode.IsSpace)
	for i, w := range words {
		if r := []rune(w); len(r) > maxSnippetWord {
			words[i] = string(r[:maxSnippetWord*2/3]) + "…" + string(r[len(r)-maxSnippetWord/3:])
		}
	}
	return strings.Join(words, " ")
}

const maxSnippetWord = 60

// indexExists reports whether there is an index at path, or rows queued
// for one (a filter queues rows; the first search creates the index).
func indexExists(path string) bool {
	if _, err := os.Stat(path); err == nil {
		return true
	}
	return len(searchqueue.PendingFiles(path)) > 0
}

// restoreStore is the store bs restore opens here without --store
// (BS_STORE, else the configuration file's, else the default), as rowStore
// names it.
func restoreStore(c *cli.Context) string {
	dir := os.Getenv("BS_STORE")
	if dir == "" {
		if cfg, err := loadConfig(c); err == nil {
			if s := cfg.Settings["restore"]["store"]; len(s.Values) > 0 {
				dir = s.Values[0]
			}
		}
	}
	if dir == "" {
		return ""
	}
	return rowStore(dir)
}

// searchHit is a hit as --json prints it.
type searchHit struct {
	EntryID string  `json:"entry_id"`
	Session string  `json:"session"`
	Pointer string  `json:"pointer,omitempty"`
	Blob    string  `json:"blob"`
	Kind    string  `json:"kind"`
	Tool    string  `json:"tool,omitempty"`
	Time    string  `json:"time,omitempty"`
	Store   string  `json:"store,omitempty"` // the store the blob is in, if not the default
	Snippet string  `json:"snippet"`
	Score   float64 `json:"score"`
	Restore string  `json:"restore"`
}

// restoreCommandFor is the command that brings a hit back. The session is
// the transcript's path when bs knew it; the store is named when it is not
// the one bs restore would open here without --store (here, as rowStore
// names it). An entry evicted or archived whole, or holding a value
// extracted before that, comes back with restore --all.
func restoreCommandFor(h index.Hit, here string) string {
	r := h.Row
	bs := "bs restore"
	if r.Store != here {
		store := r.Store
		if store == "" {
			store = defaultStoreDir()
		}
		bs += " --store " + shellQuote(store)
	}
	file := r.Session
	if !filepath.IsAbs(file) {
		file = "TRANSCRIPT"
	} else if _, err := os.Stat(file); err != nil {
		// Gone, or renamed (bs extract s > s.tmp && mv s.tmp s): a path
		// that names nothing would only mislead.
		file = "TRANSCRIPT"
	}
	if r.Kind == "entry" || h.Packed {
		return fmt.Sprintf("%s --all -i %s", bs, shellQuote(file))
	}
	if strings.Contains(r.Pointer, ",") || r.Pointer == "" {
		// --keys takes a comma-separated list: a pointer with a comma
		// cannot be named there, so the entry comes back whole, as one
		// several of whose values matched (onePerEntry).
		return fmt.Sprintf("%s --id %s -i %s", bs, shellQuote(r.EntryID), shellQuote(file))
	}
	return fmt.Sprintf("%s --id %s --keys %s -i %s", bs, shellQuote(r.EntryID), shellQuote(r.Pointer), shellQuote(file))
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
