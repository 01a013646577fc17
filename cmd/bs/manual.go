package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/docs"
	"github.com/bstools/bs/internal/clidoc"
)

// What the man pages say besides the command definitions (see
// internal/clidoc, which makes them).

// manual is bs's man pages' own text, for the commands of app.
func manual(app *cli.App) *clidoc.Manual {
	m := &clidoc.Manual{
		Synopsis: ".B bs\n[\\fB\\-\\-config\\fR \\fIFILE\\fR] \\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGUMENTS\\fR...]\n.br\n.B bs \\-\\-version\n",
		Note:     "Options go before the file names: a flag after a file name is a usage error. A file whose name starts with a dash is ./\\-name; \\- is standard input.\n",
		GlobalFlags: append(append([]cli.Flag{}, app.Flags...),
			&cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version: the module version, or the commit it was built from"},
			&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}),
		Examples:    commandExamples,
		Docs:        commandDocs,
		DocFiles:    docs.Files,
		Environment: manEnvironment,
		Files:       manFiles,
	}
	for _, e := range exitStatus {
		m.ExitStatus = append(m.ExitStatus, clidoc.Exit{Code: e.code, Meaning: e.meaning})
	}
	return m
}

// manPages returns each page's file name and text: bs.1 and bs-CMD.1.
func manPages(app *cli.App) map[string]string { return manual(app).Pages(app) }

// exitStatus is every exit code, for --help and the man pages.
var exitStatus = []struct {
	code           int
	short, meaning string
}{
	{exitOK, "ok", "success"},
	{exitFailure, "failure", "failure: a file or blob that cannot be read, output that cannot be written, a file with no valid JSON line"},
	{exitUsage, "usage error", "usage error: an unknown flag, a bad value, a missing argument"},
	{exitBadRule, "bad jq rule", "a --rule that is not a valid jq expression"},
	{exitBadInput, "bad input under --strict", "a line that is not valid JSON, under --strict"},
	{exitAbove, "above bs gauge --fail-above", "bs gauge --fail-above: the context is above the ratio"},
	{exitInterrupted, "interrupted", "interrupted (SIGINT, SIGTERM); the output may be cut short"},
}

// exitStatusLine is exitStatus on one line, for the help of bs.
func exitStatusLine() string {
	var parts []string
	for _, e := range exitStatus {
		parts = append(parts, fmt.Sprintf("%d %s", e.code, e.short))
	}
	return "EXIT STATUS: " + strings.Join(parts, ", ") + "."
}

// manFiles are the places bs reads and writes, for FILES.
var manFiles = []clidoc.Item{
	{Name: "$XDG_DATA_HOME/bs (~/.local/share/bs)", What: "the blob store, unless --store or BS_STORE names another"},
	{Name: "$XDG_STATE_HOME/bs/index.db (~/.local/state/bs)", What: "the search index, and beside it the rows queued for it"},
	{Name: "$XDG_STATE_HOME/bs/checkpoints", What: "checkpoints, one directory per session key"},
	{Name: "$XDG_STATE_HOME/bs/locks", What: "the locks bs takes while it rewrites a file in place"},
	{Name: "$XDG_CONFIG_HOME/bs/config.yaml (~/.config/bs/config.yaml)", What: "the configuration file: flag values by command (see bs-config(1))"},
}

// manEnvironment is what every command reads from the environment, besides
// its flags' variables.
var manEnvironment = []clidoc.Item{
	{Name: "BS_CONFIG", What: "the configuration file, as --config"},
	{Name: "XDG_DATA_HOME, XDG_STATE_HOME, XDG_CONFIG_HOME", What: "where the store, the index, checkpoints, locks and the configuration file are (see FILES)"},
	{Name: "NO_COLOR, TERM", What: "no colour when NO_COLOR is set or TERM is dumb; progress is drawn only when standard error is a terminal"},
}

// commandDocs are the files of docs/ each command's page carries after
// its description: the depth the README leaves to them.
var commandDocs = map[string][]string{
	"extract":         {"commands/extract.md"},
	"restore":         {"commands/restore.md"},
	"gauge":           {"commands/gauge.md"},
	"stats":           {"commands/stats.md"},
	"roll":            {"commands/roll.md"},
	"trim":            {"commands/trim.md"},
	"archive":         {"commands/archive.md"},
	"checkpoint":      {"commands/checkpoint.md"},
	"search":          {"commands/search.md"},
	"index":           {"commands/search.md"},
	"store":           {"commands/store.md", "object-storage.md"},
	"prune-retention": {"commands/prune-retention.md"},
	"ui":              {"commands/ui.md"},
	"config":          {"commands/config.md"},
	"watch":           {"live-sessions.md"},
	"mcp":             {"agents.md"},
	"tool":            {"agents.md"},
	"skill":           {"agents.md"},
}
