package clidoc

import (
	"runtime"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestMisplacedFlag: a flag of the command among its last arguments is
// found, in any spelling, unless it comes after "--".
func TestMisplacedFlag(t *testing.T) {
	flags := []cli.Flag{&cli.IntFlag{Name: "limit", Aliases: []string{"n"}}}
	for _, c := range []struct {
		line []string
		want string
	}{
		{[]string{"bs", "search", "go", "test", "--limit=3"}, "--limit=3"},
		{[]string{"bs", "search", "go", "-n", "3"}, "-n"},
		{[]string{"bs", "search", "go", "--other"}, ""},
		{[]string{"bs", "search", "--", "go", "--limit"}, ""},
	} {
		args := c.line[2:]
		if args[0] == "--" {
			args = args[1:]
		}
		if got := MisplacedFlag(flags, c.line, args); got != c.want {
			t.Errorf("%q: %q, want %q", c.line, got, c.want)
		}
	}
}

func TestCommandOf(t *testing.T) {
	cmds := []*cli.Command{{Name: "extract"}, {Name: "store", Subcommands: []*cli.Command{{Name: "verify"}}}}
	for line, want := range map[string]string{
		"bs extract f":                    "extract",
		"bs --config c.yaml store verify": "store verify",
		"bs --config=c.yaml store":        "store",
		"bs nope":                         "",
		"bs":                              "",
		"bs --config":                     "",
	} {
		if got := CommandOf(strings.Fields(line), cmds); got != want {
			t.Errorf("%q: %q, want %q", line, got, want)
		}
	}
}

func TestVersion(t *testing.T) {
	if v := Version(); !strings.HasSuffix(v, "("+runtime.Version()+")") {
		t.Errorf("version %q does not name the Go release %s", v, runtime.Version())
	}
}
