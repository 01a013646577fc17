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
		Synopsis: docs.Synopsis,
		Note:     docs.Note,
		GlobalFlags: append(append([]cli.Flag{}, app.Flags...),
			&cli.BoolFlag{Name: "version", Aliases: []string{"v"}, Usage: "print the version: the module version, or the commit it was built from"},
			&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "show help"}),
		Examples:    docs.Examples,
		Docs:        docs.Pages,
		DocFiles:    docs.Files,
		Environment: docs.Environment,
		Files:       docs.Places,
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
