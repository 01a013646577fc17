package clidoc

import (
	"errors"
	"io"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestUnknownFlag(t *testing.T) {
	for _, tc := range []struct {
		err         string
		line        []string
		name, typed string
	}{
		{"flag provided but not defined: -formt", []string{"bs", "gauge", "--formt=x", "f"}, "formt", "--formt"},
		{"flag provided but not defined: -formt", []string{"bs", "gauge", "-formt", "f"}, "formt", "-formt"},
		{"flag provided but not defined: -formt", nil, "formt", "--formt"},
		{"flag provided but not defined: -x", nil, "x", "-x"},
	} {
		name, typed, ok := UnknownFlag(errors.New(tc.err), tc.line)
		if !ok || name != tc.name || typed != tc.typed {
			t.Errorf("UnknownFlag(%q, %q) = %q, %q, %v; want %q, %q", tc.err, tc.line, name, typed, ok, tc.name, tc.typed)
		}
	}
	if _, _, ok := UnknownFlag(errors.New("invalid value"), nil); ok {
		t.Error("another error read as an unknown flag")
	}
}

// app is a command "run" with a ratio flag, whose action records that it
// ran.
func app(ran *bool) *cli.App {
	return &cli.App{Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
		Name:        "run",
		Flags:       []cli.Flag{&cli.Float64Flag{Name: "ratio"}},
		Subcommands: []*cli.Command{{Name: "sub", Action: func(*cli.Context) error { *ran = true; return nil }}},
		Action: func(*cli.Context) error {
			*ran = true
			return nil
		},
	}}}
}

func TestNotFinite(t *testing.T) {
	for _, v := range []string{"NaN", "Inf", "-inf", "0.5"} {
		var got float64
		var bad bool
		a := app(new(bool))
		a.Commands[0].Before = func(c *cli.Context) error {
			_, got, bad = NotFinite(c)
			return nil
		}
		if err := a.Run([]string{"bs", "run", "--ratio", v}); err != nil {
			t.Fatal(err)
		}
		if want := v != "0.5"; bad != want || bad && !math.IsNaN(got) && !math.IsInf(got, 0) {
			t.Errorf("--ratio %s: NotFinite gave %v, %v", v, got, bad)
		}
	}
}

func TestCheckOnly(t *testing.T) {
	for _, line := range [][]string{{"bs", "run"}, {"bs", "run", "sub"}} {
		ran, checked := false, false
		a := app(&ran)
		CheckOnly(a, func(*cli.Context) error {
			checked = true
			return nil
		})
		if err := a.Run(line); err != nil || ran || !checked {
			t.Errorf("%v: err %v, ran %v, checked %v: want checked and not run", line, err, ran, checked)
		}
	}
	a := app(new(bool))
	CheckOnly(a, func(*cli.Context) error { return errors.New("refused") })
	if err := a.Run([]string{"bs", "run"}); err == nil || err.Error() != "refused" {
		t.Errorf("got %v, want the check's error", err)
	}
}

func TestWithDocs(t *testing.T) {
	c := &cli.Command{Name: "a", Subcommands: []*cli.Command{{Name: "b"}}}
	WithDocs(c, "a", map[string]string{"a": "about a", "a b": "about b"}, map[string][]string{"a b": {"bs a b x"}})
	if c.Description != "about a" || c.Subcommands[0].Description != "about b" {
		t.Errorf("descriptions %q, %q", c.Description, c.Subcommands[0].Description)
	}
	if c.CustomHelpTemplate != "" || !strings.HasSuffix(c.Subcommands[0].CustomHelpTemplate, "EXAMPLES:\n   bs a b x\n") {
		t.Errorf("templates %q, %q", c.CustomHelpTemplate, c.Subcommands[0].CustomHelpTemplate)
	}
}

func TestCommandPath(t *testing.T) {
	var got []string
	record := func(c *cli.Context) error { got = append(got, CommandPath(c)); return nil }
	a := &cli.App{Name: "bs", Commands: []*cli.Command{
		{Name: "extract", Action: record},
		{Name: "store", Subcommands: []*cli.Command{{Name: "verify", Action: record}}},
	}}
	for _, line := range [][]string{{"bs", "extract"}, {"bs", "store", "verify"}} {
		if err := a.Run(line); err != nil {
			t.Fatal(err)
		}
	}
	if want := []string{"extract", "store verify"}; !slices.Equal(got, want) {
		t.Errorf("CommandPath = %q, want %q", got, want)
	}
}

// TestBadValue reads the flag package's errors as urfave/cli passes them
// on, whatever the value holds.
func TestBadValue(t *testing.T) {
	a := &cli.App{Name: "bs", Writer: io.Discard, ErrWriter: io.Discard,
		Flags:        []cli.Flag{&cli.IntFlag{Name: "n"}, &cli.BoolFlag{Name: "b"}, &cli.DurationFlag{Name: "d"}, &cli.Float64Flag{Name: "f"}},
		OnUsageError: func(_ *cli.Context, err error, _ bool) error { return err },
		Action:       func(*cli.Context) error { return nil }}
	for _, tc := range []struct {
		args          []string
		name, value   string
		missing, kind string
	}{
		{[]string{"--n", "x"}, "n", "x", "", "integer"},
		{[]string{"--n="}, "n", "", "", "integer"},
		{[]string{"--n", `a" for flag -z: b`}, "n", `a" for flag -z: b`, "", "integer"},
		{[]string{"--b=maybe"}, "b", "maybe", "", "boolean"},
		{[]string{"--d", "soon"}, "d", "soon", "", "duration"},
		{[]string{"--f", "1,5"}, "f", "1,5", "", "number"},
		{[]string{"--n"}, "n", "", "missing", "integer"},
	} {
		err := a.Run(append([]string{"bs"}, tc.args...))
		if err == nil {
			t.Fatalf("%q: no error", tc.args)
		}
		name, value, missing, ok := BadValue(err)
		if !ok || name != tc.name || value != tc.value || missing != (tc.missing != "") {
			t.Errorf("%q: BadValue(%q) = %q, %q, %v, %v", tc.args, err, name, value, missing, ok)
		}
		if k := FlagKind(a.Flags, name); k != tc.kind {
			t.Errorf("%q: FlagKind = %q, want %q", tc.args, k, tc.kind)
		}
	}
	if _, _, _, ok := BadValue(errors.New("flag provided but not defined: -x")); ok {
		t.Error("an unknown flag read as a bad value")
	}
}

// TestWalk: every command and subcommand by its path, parents first,
// without help commands; SkipCommand skips a command's subcommands.
func TestWalk(t *testing.T) {
	cmds := []*cli.Command{
		{Name: "store", Subcommands: []*cli.Command{{Name: "verify"}, {Name: "help"}}},
		{Name: "config", Subcommands: []*cli.Command{{Name: "show"}}},
		{Name: "help"},
	}
	var got []string
	err := Walk(cmds, func(path string, c *cli.Command) error {
		got = append(got, path)
		if c.Name == "config" {
			return SkipCommand
		}
		return nil
	})
	if want := []string{"store", "store verify", "config"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Walk = %q, %v; want %q", got, err, want)
	}
	stop := errors.New("stop")
	if err := Walk(cmds, func(string, *cli.Command) error { return stop }); err != stop {
		t.Errorf("Walk's error = %v, want fn's", err)
	}
}
