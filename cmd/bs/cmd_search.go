package main

import (
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/internal/searchqueue"
	"github.com/bstools/bs/internal/xdg"
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

func runSearch(c *cli.Context) error {
	if f := misplacedFlag(c, c.Args().Slice()); f != "" {
		return usagef(msgFlagAfterArgs, f)
	}
	query := strings.Join(c.Args().Slice(), " ")
	if strings.TrimSpace(query) == "" {
		return usagef(msgSearchArgs)
	}
	if k := c.String("kind"); k != "" && !slices.Contains(index.Kinds(), k) {
		return usagef(msgSearchKind, k, strings.Join(index.Kinds(), ", "))
	}
	if c.Int("limit") < 1 {
		return usagef(msgSearchLimit)
	}
	path := indexPath(c)
	if !searchqueue.Exists(path) {
		// Opening would create an empty index (and its directories) at a
		// mistyped path, and answer "no hits" as if it had looked.
		ui{c.App.ErrWriter}.errorf("search", msgNoIndex, path)
		ui{c.App.ErrWriter}.hintf(hintNoIndex)
		return &reported{code: exitFailure}
	}
	ix, err := openIndex(c.Context, path, ui{c.App.ErrWriter})
	if err != nil {
		if c.Context.Err() == nil { // not interrupted: the index is at fault
			return &hinted{err, hintIndex}
		}
		return err
	}
	defer ix.Close()
	session := c.String("session")
	if session != "" {
		session = searchqueue.SessionFor(session) // sessions are named by absolute path
	}
	hits, err := ix.SearchEntries(c.Context, index.Query{Text: query, Session: session, Kind: c.String("kind"), Tool: c.String("tool"), Limit: c.Int("limit")})
	if err != nil {
		return &hinted{err, hintIndex}
	}
	here := restoreStore(c)
	for _, h := range hits {
		h.Snippet = index.DisplaySnippet(h.Snippet)
		index.WriteHit(c.App.Writer, h, index.RestoreCommand(h, here, xdg.Data()), c.Bool("json"))
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
