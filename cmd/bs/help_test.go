package main

import (
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/docs"
)

// TestHelpDefaults: every command's --help gives each flag one default at
// most, and a switch that is off by default says nothing of it.
func TestHelpDefaults(t *testing.T) {
	var lines []string
	var walk func(path []string, cmds []*cli.Command)
	walk = func(path []string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			args := append(append([]string{"bs"}, path...), c.Name, "--help")
			var out bytes.Buffer
			if code := run(args, strings.NewReader(""), &out, io.Discard); code != 0 {
				t.Fatalf("%s: exit %d", strings.Join(args, " "), code)
			}
			for _, l := range strings.Split(out.String(), "\n") {
				lines = append(lines, strings.Join(args[1:len(args)-1], " ")+": "+l)
			}
			walk(append(path, c.Name), c.Subcommands)
		}
	}
	walk(nil, newApp(nil, nil, nil).Commands)
	if len(lines) < 100 {
		t.Fatalf("only %d lines of help", len(lines))
	}
	for _, l := range lines {
		if strings.Contains(l, "(default: false)") || strings.Count(l, "(default") > 1 {
			t.Errorf("%s", l)
		}
	}
}

// TestStatsHasNoInPlace: stats only reads, so its help offers no -i and no
// flag of -i.
func TestStatsHasNoInPlace(t *testing.T) {
	var out bytes.Buffer
	run([]string{"bs", "stats", "--help"}, strings.NewReader(""), &out, io.Discard)
	for _, f := range []string{"--in-place", "--quiet-period", "--force", "--idle", "--lock-timeout", "--min-savings"} {
		if strings.Contains(out.String(), f) {
			t.Errorf("bs stats --help offers %s", f)
		}
	}
}

// TestDescriptions: every command has its description in
// docs.Descriptions but the subcommands whose usage line says it all, and
// every key of docs.Descriptions names a command.
func TestDescriptions(t *testing.T) {
	usageOnly := []string{"checkpoint list", "checkpoint show", "config show",
		"store stats", "store verify", "store list", "store cat", "store repack"}
	paths := map[string]bool{}
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			path := prefix + c.Name
			paths[path] = true
			if _, ok := docs.Descriptions[path]; !ok && !slices.Contains(usageOnly, path) {
				t.Errorf("bs %s has no description in docs.Descriptions", path)
			}
			walk(path+" ", c.Subcommands)
		}
	}
	walk("", newApp(nil, nil, nil).Commands)
	for path, d := range docs.Descriptions {
		if !paths[path] {
			t.Errorf("docs.Descriptions[%q] names no command", path)
		}
		if strings.TrimSpace(d) == "" {
			t.Errorf("docs.Descriptions[%q] is empty", path)
		}
	}
	for _, path := range usageOnly {
		if !paths[path] {
			t.Errorf("%q, said to have only its usage line, names no command", path)
		}
	}
}

// BenchmarkNewApp: what building the commands costs every run (and every
// pass of bs watch and action of bs ui, which build them again).
func BenchmarkNewApp(b *testing.B) {
	for b.Loop() {
		newApp(nil, nil, nil)
	}
}
