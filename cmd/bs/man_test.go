package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestManPage fails when the man pages in man/ no longer match the command
// definitions, or one is missing or left over. Regenerate them with
// scripts/genman (go test -run TestManPage -update).
func TestManPage(t *testing.T) {
	pages := manPages(newApp(nil, nil, nil))
	dir := filepath.Join("..", "..", "man")
	have, _ := filepath.Glob(filepath.Join(dir, "*.1"))
	if *update {
		for _, p := range have {
			os.Remove(p)
		}
		for name, text := range pages {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	var names []string
	for name := range pages {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("%v (run scripts/genman)", err)
		} else if string(b) != pages[name] {
			t.Errorf("man/%s is stale: run scripts/genman", name)
		}
	}
	for _, p := range have {
		if _, ok := pages[filepath.Base(p)]; !ok {
			t.Errorf("%s documents no command: run scripts/genman", p)
		}
	}
}

// TestManPageSections: every page has the sections people look for, and
// each command's page its examples.
func TestManPageSections(t *testing.T) {
	for name, text := range manPages(newApp(nil, nil, nil)) {
		for _, sec := range []string{".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH OPTIONS", ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS", ".SH SEE ALSO"} {
			if sec == ".SH OPTIONS" && (name == "bs-completion.1" || name == "bs-skill.1" || strings.Contains(text, "\n.SH COMMANDS\n")) {
				continue // no flags of its own
			}
			if !strings.Contains(text, "\n"+sec+"\n") {
				t.Errorf("%s has no %s", name, sec)
			}
		}
		if name != "bs.1" && !strings.Contains(text, "\n.SH EXAMPLES\n") {
			t.Errorf("%s has no EXAMPLES", name)
		}
	}
}

// TestNoJargon: help text and man pages say what bs does, not where the
// idea came from: no design-document sections, seed numbers or issues,
// which a user does not have.
func TestNoJargon(t *testing.T) {
	jargon := regexp.MustCompile(`(?i)\bseed [0-9]|§|DESIGN\.md|FORMATS\.md|\bissue #?[0-9]`)
	for name, text := range manPages(newApp(nil, nil, nil)) {
		for i, line := range strings.Split(text, "\n") {
			if jargon.MatchString(line) {
				t.Errorf("%s:%d: %s", name, i+1, line)
			}
		}
	}
}
