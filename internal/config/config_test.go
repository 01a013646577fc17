package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

func commands() []*cli.Command {
	return []*cli.Command{
		{Name: "extract", Flags: []cli.Flag{
			&cli.IntFlag{Name: "keep-recent"}, &cli.StringFlag{Name: "types"},
			&cli.DurationFlag{Name: "keep-after-restore"}, &cli.StringFlag{Name: "store"},
			&cli.BoolFlag{Name: "in-place"}, &cli.StringSliceFlag{Name: "rule"},
		}},
		{Name: "trim", Flags: []cli.Flag{&cli.Float64Flag{Name: "soft-trim-ratio"}, &cli.StringFlag{Name: "store"}}},
		{Name: "gauge", Flags: []cli.Flag{&cli.BoolFlag{Name: "json"}}},
		{Name: "store", Subcommands: []*cli.Command{
			{Name: "verify", Flags: []cli.Flag{&cli.StringFlag{Name: "store"}, &cli.IntFlag{Name: "jobs"}}},
			{Name: "stats", Flags: []cli.Flag{&cli.StringFlag{Name: "store"}, &cli.BoolFlag{Name: "json"}}},
		}},
		{Name: "stats", Flags: []cli.Flag{&cli.IntFlag{Name: "keep-recent"}}},
	}
}

// TestLoadSubcommands: a common flag and a command's section reach its
// subcommands, by their paths; a section of a command whose name a
// subcommand shares (stats, store stats) stays its own.
func TestLoadSubcommands(t *testing.T) {
	for _, tc := range []struct{ text, cmd, flag, want string }{
		{"store: /s\n", "store verify", "store", "/s"},
		{"store: /s\n", "store stats", "store", "/s"},
		{"store:\n  jobs: 4\n", "store verify", "jobs", "4"},
		{"stats:\n  keep-recent: 5\n", "stats", "keep-recent", "5"},
	} {
		cfg, err := load(t, tc.text)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Settings[tc.cmd][tc.flag].Values; !slices.Equal(got, []string{tc.want}) {
			t.Errorf("%q: %s --%s = %v, want %s", tc.text, tc.cmd, tc.flag, got, tc.want)
		}
		if s := cfg.Settings["store stats"]; tc.cmd == "stats" && len(s) != 0 {
			t.Errorf("%q: store stats got %v", tc.text, s)
		}
	}
	var bad *BadError
	if _, err := load(t, "store:\n  nope: 1\n"); !errors.As(err, &bad) || bad.Why != NoFlag || bad.Cmd != "store" {
		t.Errorf("a flag no store command has: %v", err)
	}
	if _, err := load(t, "store:\n  jobs: many\n"); !errors.As(err, &bad) || bad.Why != NotInteger || bad.Cmd != "store verify" {
		t.Errorf("a bad value for a subcommand's flag: %v", err)
	}
}

func load(t *testing.T, text string) (*File, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(path, []byte(text), 0o600)
	return Load(path, true, commands(), func(name string) bool { return name == "store" })
}

func TestLoad(t *testing.T) {
	cfg, err := load(t, "keep_recent: 5\ntrigger_types: [thinking, text]\nkeep_after_restore_seconds: 90\nstore: /s\ntrim:\n  soft-trim-ratio: 0.4\nextract:\n  rule: [a, b]\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string][]string{
		"extract": {"keep-recent": {"5"}, "types": {"thinking,text"}, "keep-after-restore": {(90 * time.Second).String()}, "store": {"/s"}, "rule": {"a", "b"}},
		"trim":    {"soft-trim-ratio": {"0.4"}, "store": {"/s"}},
	}
	for cmd, flags := range want {
		for flag, values := range flags {
			if got := cfg.Settings[cmd][flag].Values; !slices.Equal(got, values) {
				t.Errorf("%s --%s = %v, want %v", cmd, flag, got, values)
			}
		}
	}
	if s := cfg.Settings["trim"]["soft-trim-ratio"]; s.Line != 6 || s.Key != "trim.soft-trim-ratio" {
		t.Errorf("trim's setting at %d as %q", s.Line, s.Key)
	}
	if len(cfg.Settings["gauge"]) != 0 {
		t.Errorf("gauge got %v", cfg.Settings["gauge"])
	}
}

func TestLoadRefuses(t *testing.T) {
	for text, want := range map[string]BadError{
		"- a\n":                                  {Line: 1, Key: "(top)", Why: NotMapping},
		"nonsense: 1\n":                          {Line: 1, Key: "nonsense", Why: Unknown},
		"extract:\n  in-place: true\n":           {Line: 2, Key: "extract.in-place", Why: NoFlag, Cmd: "extract", Flag: "in-place"},
		"extract:\n  nope: 1\n":                  {Line: 2, Key: "extract.nope", Why: NoFlag, Cmd: "extract", Flag: "nope"},
		"keep_recent: [1, 2]\n":                  {Line: 1, Key: "keep_recent", Why: NotOne, Cmd: "extract", Flag: "keep-recent"},
		"keep_recent: x\n":                       {Line: 1, Key: "keep_recent", Why: NotInteger, Cmd: "extract", Flag: "keep-recent", Value: "x"},
		"trim:\n  soft-trim-ratio: a\n":          {Line: 2, Key: "trim.soft-trim-ratio", Why: NotNumber, Cmd: "trim", Flag: "soft-trim-ratio", Value: "a"},
		"gauge:\n  json: maybe\n":                {Line: 2, Key: "gauge.json", Why: NotBool, Cmd: "gauge", Flag: "json", Value: "maybe"},
		"keep_after_restore_seconds: -1\n":       {Line: 1, Key: "keep_after_restore_seconds", Why: NotSeconds, Cmd: "extract", Flag: "keep-after-restore", Value: "-1"},
		"extract:\n  keep-after-restore: soon\n": {Line: 2, Key: "extract.keep-after-restore", Why: NotDuration, Cmd: "extract", Flag: "keep-after-restore", Value: "soon"},
		"extract:\n  rule: [[a]]\n":              {Line: 2, Key: "extract.rule", Why: NotPlainList, Cmd: "extract", Flag: "rule"},
		"extract:\n  rule: {a: b}\n":             {Line: 2, Key: "extract.rule", Why: NotValueOrList, Cmd: "extract", Flag: "rule"},
	} {
		_, err := load(t, text)
		var bad *BadError
		if !errors.As(err, &bad) {
			t.Errorf("%q: %v", text, err)
			continue
		}
		want.Path = bad.Path
		if *bad != want {
			t.Errorf("%q: got %+v, want %+v", text, *bad, want)
		}
	}
	var syntax *SyntaxError
	if _, err := load(t, "a: [\n"); !errors.As(err, &syntax) {
		t.Errorf("not YAML: %v", err)
	}
	var read *ReadError
	if _, err := Load(filepath.Join(t.TempDir(), "none.yaml"), true, commands(), nil); !errors.As(err, &read) {
		t.Errorf("a missing file asked for: %v", err)
	}
	if cfg, err := Load(filepath.Join(t.TempDir(), "none.yaml"), false, commands(), nil); err != nil || len(cfg.Settings) != 0 {
		t.Errorf("a missing default file: %v %v", cfg, err)
	}
}
