package clidoc

import (
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
