package clidoc

import (
	"regexp"
	"testing"

	"github.com/urfave/cli/v2"
)

func TestNearestFlag(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "format"},
		&cli.IntFlag{Name: "keep-recent"},
		&cli.BoolFlag{Name: "in-place", Aliases: []string{"i"}},
		&cli.BoolFlag{Name: "help", Aliases: []string{"h"}},
	}
	for name, want := range map[string]string{
		"formt":       "--format",
		"fromat":      "--format", // a swap is one edit
		"keep":        "--keep-recent",
		"keep-recnet": "--keep-recent",
		"in-plac":     "--in-place",
		"hel":         "", // help is never suggested
		"x":           "", // one letter is near everything
		"storage":     "",
	} {
		if got := NearestFlag(name, flags); got != want {
			t.Errorf("NearestFlag(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestTidy: a default stated in a flag's usage becomes its default text,
// and a switch that is off says nothing of its default; subcommands too.
func TestTidy(t *testing.T) {
	window := &cli.IntFlag{Name: "context-window", Usage: "the window (default: from the model (or 200000))"}
	given := &cli.StringFlag{Name: "store", Usage: "the store (default: here)", DefaultText: "$XDG_DATA_HOME/bs"}
	off := &cli.BoolFlag{Name: "json"}
	on := &cli.BoolFlag{Name: "color", Value: true}
	Tidy(&cli.Command{Flags: []cli.Flag{window, given}, Subcommands: []*cli.Command{{Flags: []cli.Flag{off, on}}}})
	if window.Usage != "the window" || window.DefaultText != "from the model (or 200000)" {
		t.Errorf("window: %q, default %q", window.Usage, window.DefaultText)
	}
	if given.Usage != "the store" || given.DefaultText != "$XDG_DATA_HOME/bs" {
		t.Errorf("store: %q, default %q", given.Usage, given.DefaultText)
	}
	if !off.DisableDefaultText || on.DisableDefaultText {
		t.Errorf("switches: off %v, on %v", off.DisableDefaultText, on.DisableDefaultText)
	}
}

// TestMoveDefaultAsTheExpression: moveDefault reads what the expression
// it replaced matched, on the usages bs has and on odd ones.
func TestMoveDefaultAsTheExpression(t *testing.T) {
	re := regexp.MustCompile(`\s*\(default:? ([^()]*(\([^()]*\)[^()]*)*)\)`)
	want := func(usage, text string) (string, string) {
		m := re.FindStringSubmatchIndex(usage)
		if m == nil {
			return usage, text
		}
		if text == "" {
			text = usage[m[2]:m[3]]
		}
		return usage[:m[0]] + usage[m[1]:], text
	}
	for _, usage := range []string{
		"",
		"the window in tokens (default: from the transcript's model, else 200000)",
		"the state file (default: $XDG_STATE_HOME/bs/watch.json)",
		"blob store: a directory (default $XDG_DATA_HOME/bs, ~/.local/share/bs) or a URL",
		"exit 5 above `RATIO` (e.g. 0.8); 1 stays a failure (default: 0, off)",
		"nested (default: a (b) c (d) e) after",
		"too deep (default: a ((b)) c)",
		"unclosed (default: a (b",
		"(default:x) no space, then (default: y)",
		"(defaults are many) and then \t\n (default z)",
		"no default here at all",
		"two (default: a) and (default: b)",
		"  (default: lead)",
		"(default",
		"(default:",
		"(default: )",
		"(default:  two spaces)",
	} {
		for _, text := range []string{"", "given"} {
			gu, gt := moveDefault(usage, text)
			wu, wt := want(usage, text)
			if gu != wu || gt != wt {
				t.Errorf("moveDefault(%q, %q) = %q, %q; the expression gives %q, %q", usage, text, gu, gt, wu, wt)
			}
		}
	}
}

// FuzzMoveDefault checks moveDefault against the expression it replaced.
func FuzzMoveDefault(f *testing.F) {
	re := regexp.MustCompile(`\s*\(default:? ([^()]*(\([^()]*\)[^()]*)*)\)`)
	for _, s := range []string{"x (default: a (b) c)", "(default z)", "a\t(default: (b)) (default: c)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, usage string) {
		gu, gt := moveDefault(usage, "")
		wu, wt := usage, ""
		if m := re.FindStringSubmatchIndex(usage); m != nil {
			wu, wt = usage[:m[0]]+usage[m[1]:], usage[m[2]:m[3]]
		}
		if gu != wu || gt != wt {
			t.Errorf("moveDefault(%q) = %q, %q; the expression gives %q, %q", usage, gu, gt, wu, wt)
		}
	})
}
