package index

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode"
)

// How bs search shows its hits.

// SearchEntries is Search for bs search, whose hits are entries: it asks
// for more rows than q.Limit (at least 1), for the values of one entry
// that match together (a Claude Code result is kept twice), and keeps one
// hit per entry (onePerEntry), at most q.Limit of them.
func (ix *Index) SearchEntries(ctx context.Context, q Query) ([]Hit, error) {
	limit := q.Limit
	q.Limit = min(limit*4, limit+1000)
	hits, err := ix.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	hits = onePerEntry(hits)
	return hits[:min(len(hits), limit)], nil
}

// onePerEntry keeps the first, best ranked, hit of each entry of a
// session. An entry several of whose values matched comes back whole: its
// hit names no pointer. (Claude Code keeps each tool result twice, in the
// message and as toolUseResult, so both match.)
func onePerEntry(hits []Hit) []Hit {
	type key struct{ session, entry string }
	first := map[key]int{}
	var out []Hit
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

// DisplaySnippet is a snippet made fit for a line of a terminal: on one
// line, without control characters (rows indexed before plainText may hold
// them), and with any word longer than maxSnippetWord shortened to its
// ends (FTS5 bounds a snippet in words, and one word of a hex dump or a
// minified file can be a hundred kilobytes).
func DisplaySnippet(s string) string {
	s = plainText(s)
	words := strings.FieldsFunc(s, unicode.IsSpace)
	for i, w := range words {
		if r := []rune(w); len(r) > maxSnippetWord {
			words[i] = string(r[:maxSnippetWord*2/3]) + "…" + string(r[len(r)-maxSnippetWord/3:])
		}
	}
	return strings.Join(words, " ")
}

const maxSnippetWord = 60

// RestoreCommand is the command that brings a hit back. The session is
// the transcript's path when bs knew it; the store is named when it is not
// here, the one bs restore would open without --store (as the rows name
// stores: "" for defaultStore, the default). An entry evicted or archived
// whole, or holding a value extracted before that, comes back with
// restore --all.
func RestoreCommand(h Hit, here, defaultStore string) string {
	r := h.Row
	bs := "bs restore"
	if r.Store != here {
		store := r.Store
		if store == "" {
			store = defaultStore
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

// hitJSON is a hit as bs search --json prints it.
type hitJSON struct {
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

// WriteHit prints a hit and the command that restores it as bs search
// does: three lines (what and where, the snippet, the command), or with
// asJSON one JSON object.
func WriteHit(w io.Writer, h Hit, restore string, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(hitJSON{h.EntryID, h.Session, h.Pointer, h.Blob, h.Kind, h.Tool, h.Time, h.Store, h.Snippet, h.Score, restore})
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "%s  %s  %s", h.EntryID, h.Session, h.Kind)
	if h.Tool != "" {
		fmt.Fprintf(w, " (%s)", h.Tool)
	}
	if h.Time != "" {
		fmt.Fprintf(w, "  %s", h.Time)
	}
	fmt.Fprintf(w, "\n    %s\n    %s\n", h.Snippet, restore)
}
