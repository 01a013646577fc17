package clidoc

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"
)

// WithDocs gives c, whose full path is path ("checkpoint render"), and its
// subcommands their descriptions, and ends each one's --help with its
// examples, as its man page does: both are keyed by path.
func WithDocs(c *cli.Command, path string, descriptions map[string]string, examples map[string][]string) {
	c.Description = descriptions[path]
	for _, sub := range c.Subcommands {
		WithDocs(sub, path+" "+sub.Name, descriptions, examples)
	}
	if ex := examples[path]; len(ex) > 0 {
		c.CustomHelpTemplate = cli.SubcommandHelpTemplate + "\nEXAMPLES:\n   " + strings.Join(ex, "\n   ") + "\n"
	}
}

// UnknownFlag reads urfave/cli's error for a flag it does not know: the
// flag's name, and the flag as line (the command line) wrote it: "-x" or
// "--name" (without a value given with =), or "--name" when line does
// not hold it. ok is false for any other error.
func UnknownFlag(err error, line []string) (name, typed string, ok bool) {
	name, ok = strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return "", "", false
	}
	typed = Dashed(name)
	for _, a := range line {
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && n == name {
			typed, _, _ = strings.Cut(a, "=")
			break
		}
	}
	return name, typed, true
}

// BadValue reads the error of the standard flag package, which urfave/cli
// parses with, for a flag given a value it cannot parse (value), or none
// (missing): the flag's name. ok is false for any other error.
func BadValue(err error) (name, value string, missing, ok bool) {
	msg := err.Error()
	if name, ok = strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return name, "", true, true
	}
	rest, ok := strings.CutPrefix(msg, "invalid value ")
	if !ok {
		rest, ok = strings.CutPrefix(msg, "invalid boolean value ")
	}
	if !ok {
		return "", "", false, false
	}
	// rest is "VALUE" for flag -NAME: why, or "VALUE" for -NAME: why, with
	// VALUE quoted by %q.
	for _, sep := range []string{" for flag -", " for -"} {
		i := strings.LastIndex(rest, sep)
		if i < 0 {
			continue
		}
		v, err := strconv.Unquote(rest[:i])
		n, _, cut := strings.Cut(rest[i+len(sep):], ":")
		if err == nil && cut {
			return n, v, false, true
		}
	}
	return "", "", false, false
}

// FlagKind names, for a message, what a flag's value must be: "integer",
// "number", "duration", "boolean" or "" (any text).
func FlagKind(flags []cli.Flag, name string) string {
	for _, f := range flags {
		if !slices.Contains(f.Names(), name) {
			continue
		}
		switch f.(type) {
		case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag, *cli.Uint64Flag:
			return "integer"
		case *cli.Float64Flag:
			return "number"
		case *cli.DurationFlag:
			return "duration"
		case *cli.BoolFlag:
			return "boolean"
		}
	}
	return ""
}

// NotFinite is the first float flag of c's command set to NaN or an
// infinity, which strconv takes for numbers; ok is false when there is
// none.
func NotFinite(c *cli.Context) (name string, v float64, ok bool) {
	for _, f := range c.Command.Flags {
		if f, isFloat := f.(*cli.Float64Flag); isFloat && c.IsSet(f.Name) {
			if v := c.Float64(f.Name); math.IsNaN(v) || math.IsInf(v, 0) {
				return f.Name, v, true
			}
		}
	}
	return "", 0, false
}

// CheckOnly makes every command of app (and subcommand) run its Before
// and then check instead of its action: the command line is parsed and
// checked, and none of the work is done.
func CheckOnly(app *cli.App, check func(*cli.Context) error) {
	var checking func([]*cli.Command)
	checking = func(cmds []*cli.Command) {
		for _, c := range cmds {
			before := c.Before
			c.Before = func(c *cli.Context) error {
				if before != nil {
					if err := before(c); err != nil {
						return err
					}
				}
				return check(c)
			}
			c.Action = func(*cli.Context) error { return nil }
			checking(c.Subcommands)
		}
	}
	checking(app.Commands)
}

// Dashed is a flag's name as the usage lines write it: -j, --jobs.
func Dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// SkipCommand, returned by Walk's fn, skips the command's subcommands.
var SkipCommand = errors.New("skip this command's subcommands")

// Walk calls fn with each command of commands and each of their
// subcommands, named by its path ("store verify"), parents first; it
// stops at fn's first error but SkipCommand. urfave/cli's help commands
// are left out.
func Walk(commands []*cli.Command, fn func(path string, c *cli.Command) error) error {
	var walk func(prefix string, cmds []*cli.Command) error
	walk = func(prefix string, cmds []*cli.Command) error {
		for _, c := range cmds {
			if c.Name == "help" {
				continue
			}
			path := prefix + c.Name
			err := fn(path, c)
			if err == SkipCommand {
				continue
			}
			if err != nil {
				return err
			}
			if err := walk(path+" ", c.Subcommands); err != nil {
				return err
			}
		}
		return nil
	}
	return walk("", commands)
}

// CommandPath names the command c runs by its path from the app's
// commands: "extract", "store verify".
func CommandPath(c *cli.Context) string {
	var names []string
	for _, l := range c.Lineage() {
		if l.Command != nil {
			names = append([]string{l.Command.Name}, names...)
		}
	}
	if len(names) > 0 {
		names = names[1:] // the app's own command, named as the app
	}
	return strings.Join(names, " ")
}
