package clidoc

import (
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"
)

// MisplacedFlag returns the first of args (a command's last arguments)
// that names one of flags (-x, --x or --x=v), or "". urfave/cli reads
// flags only up to the first argument that is not one, so a flag written
// after a query or a name would otherwise be taken for a word of it. line
// is the whole command line, for FlagLike.
func MisplacedFlag(flags []cli.Flag, line, args []string) string {
	for _, a := range FlagLike(line, args) {
		name, ok := strings.CutPrefix(a, "-")
		if !ok {
			continue
		}
		name = strings.TrimPrefix(name, "-")
		name, _, _ = strings.Cut(name, "=")
		for _, f := range flags {
			if slices.Contains(f.Names(), name) {
				return a
			}
		}
	}
	return ""
}

// FlagLike returns the arguments that may be flags: those of args (the
// command's last arguments) that came before a "--" on the command line.
// After it, as for every getopt-style tool, "-x" is a name or a word.
func FlagLike(line, args []string) []string {
	if i := slices.Index(line, "--"); i >= 0 {
		after := len(line) - i - 1
		return args[:max(len(args)-after, 0)]
	}
	return args
}

// CommandOf names the command a command line runs, for messages: its
// first argument after the global flags (--config FILE, --config=FILE) if
// it is one of commands, with its subcommand if it names one ("store
// verify"); else "".
func CommandOf(args []string, commands []*cli.Command) string {
	if len(args) < 2 {
		return ""
	}
	i := 1
	for i < len(args) && strings.HasPrefix(args[i], "-") {
		if !strings.Contains(args[i], "=") {
			i++
		}
		i++
	}
	if i >= len(args) {
		return ""
	}
	for _, c := range commands {
		if c.Name != args[i] {
			continue
		}
		if i+1 < len(args) {
			for _, sub := range c.Subcommands {
				if sub.Name == args[i+1] {
					return c.Name + " " + sub.Name
				}
			}
		}
		return c.Name
	}
	return ""
}

// Version names the build for --version: the module's version when it
// was installed as one (go install ...@v1.2.3), else the commit it was
// built from, marked when the tree had changes, and the Go release.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
		var rev, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.modified":
				if s.Value == "true" {
					modified = "+modified"
				}
			}
		}
		if rev != "" {
			v += " " + rev + modified
		}
	}
	return v + " (" + info.GoVersion + ")"
}
