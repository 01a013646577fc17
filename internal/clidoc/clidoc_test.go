package clidoc

import (
	"bytes"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{
		Name:        "bs",
		Usage:       "keep transcripts lean",
		Description: "What bs does.\n\nEXIT STATUS: 0 ok.",
		Commands: []*cli.Command{
			{
				Name: "extract", Usage: "move values out", ArgsUsage: "[FILE...]", Description: "Moves values.",
				Flags: []cli.Flag{
					&cli.IntFlag{Name: "keep-recent", Value: 3, Usage: "leave the last `N` messages"},
					&cli.StringFlag{Name: "format", Usage: "the dialect", EnvVars: []string{"BS_FORMAT"}},
					&cli.BoolFlag{Name: "in-place", Aliases: []string{"i"}, Usage: "rewrite the files"},
				},
			},
			{Name: "store", Usage: "the store", Subcommands: []*cli.Command{{Name: "verify", Usage: "check every blob"}}},
			{Name: "hidden", Hidden: true},
		},
	}
}

// TestPages: a page per command that is not hidden and one for bs, with
// the flags' placeholders, defaults and variables, the examples, the
// documents named, subcommands, and roff escapes.
func TestPages(t *testing.T) {
	m := &Manual{
		Synopsis:    ".B bs\n",
		Note:        "Flags first.\n",
		Examples:    map[string][]string{"extract": {"bs extract s.jsonl"}},
		Docs:        map[string][]string{"extract": {"extract.md"}},
		DocFiles:    fstest.MapFS{"extract.md": {Data: []byte("# Extract\n\n## How\n\nIt **moves** [values](x.md).\n\n    bs extract\n")}},
		Environment: []Item{{Name: "BS_CONFIG", What: "the configuration file"}},
		Files:       []Item{{Name: "$XDG_DATA_HOME/bs", What: "the store"}},
		ExitStatus:  []Exit{{Code: 0, Meaning: "success"}, {Code: 2, Meaning: "usage error"}},
	}
	pages := m.Pages(testApp())
	if len(pages) != 3 || pages["bs-hidden.1"] != "" {
		t.Fatalf("pages %v", keys(pages))
	}
	ex := pages["bs-extract.1"]
	for _, want := range []string{
		".TH BS-EXTRACT 1",
		"bs-extract \\- move values out",
		".TP\n\\fB\\-\\-keep\\-recent\\fR \\fIN\\fR\nleave the last N messages (default: 3)\n",
		"[BS_FORMAT]",
		"\\fB\\-\\-in\\-place\\fR, \\fB\\-i\\fR\nrewrite the files (default: false)\n",
		".SS How\n.PP\nIt moves values.\n.PP\n.nf\n.RS 4\nbs extract\n.RE\n.fi\n",
		".SH EXAMPLES\n.nf\n.RS 4\nbs extract s.jsonl\n",
		".TP\n.B BS_FORMAT\nas \\-\\-format\n.TP\n.B BS_CONFIG\nthe configuration file\n",
		".SH EXIT STATUS\n.TP\n.B 0\nsuccess\n.TP\n.B 2\nusage error\n",
	} {
		if !strings.Contains(ex, want) {
			t.Errorf("bs-extract.1 lacks %q:\n%s", want, ex)
		}
	}
	st := pages["bs-store.1"]
	if !strings.Contains(st, ".br\n.B bs store verify\n") || !strings.Contains(st, ".SS bs store verify\ncheck every blob\n") {
		t.Errorf("bs-store.1 lacks its subcommand:\n%s", st)
	}
	main := pages["bs.1"]
	if !strings.Contains(main, ".SH SYNOPSIS\n.B bs\n.SH DESCRIPTION\nWhat bs does.\n.PP\nFlags first.\n") || strings.Contains(main, "EXIT STATUS: 0 ok") {
		t.Errorf("bs.1:\n%s", main)
	}
	if !strings.Contains(main, ".BR bs\\-extract (1)") || strings.Contains(main, "hidden") {
		t.Errorf("bs.1 does not list the commands as it should:\n%s", main)
	}
}

func TestRoff(t *testing.T) {
	if got := roff(".start\n'quote\na \\ b `x`"); got != "\\&.start\n\\&'quote\na \\e b x" {
		t.Errorf("roff: %q", got)
	}
}

// TestCompletion: every command, subcommand and flag is offered, and the
// values of --format and --types.
func TestCompletion(t *testing.T) {
	c := Completion{Commands: testApp().Commands, Formats: []string{"auto", "codex"}, Kinds: []string{"text", "image"}}
	var bash, zsh, fish bytes.Buffer
	if err := c.Bash(&bash); err != nil {
		t.Fatal(err)
	}
	c.Zsh(&zsh)
	c.Fish(&fish)
	for _, want := range []string{`"extract")`, `--keep-recent --format --in-place -i --help -h`, `"store") case " verify "`, `--format) COMPREPLY=($(compgen -W "auto codex"`, `-W "text image"`, "complete -o filenames -o bashdefault -F _bs bs\n"} {
		if !strings.Contains(bash.String(), want) {
			t.Errorf("bash lacks %q", want)
		}
	}
	if strings.Contains(bash.String(), "hidden") {
		t.Error("bash completes a hidden command")
	}
	if !strings.HasPrefix(zsh.String(), "#compdef bs\n") || !strings.HasSuffix(zsh.String(), bash.String()) {
		t.Error("zsh is not bash under bashcompinit")
	}
	for _, want := range []string{"complete -c bs -f -n '__bs_at' -a extract -d 'move values out'", "complete -c bs -f -n '__bs_at store' -a verify -d 'check every blob'", "-l format -x -a 'auto codex'", "-l keep-recent -r -d 'leave the last N messages'", "-l in-place -s i -d 'rewrite the files'"} {
		if !strings.Contains(fish.String(), want) {
			t.Errorf("fish lacks %q:\n%s", want, fish.String())
		}
	}
}

func keys(m map[string]string) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}
