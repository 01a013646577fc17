package config

import (
	"bytes"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestShow: each flag a file may set shows where its value came from, the
// environment before the file, the file before the default; the fixed
// flags are not shown.
func TestShow(t *testing.T) {
	cfg, err := load(t, "keep_recent: 5\nstore: /s\n")
	if err != nil {
		t.Fatal(err)
	}
	cmds := commands()
	cmds[0].Flags = append(cmds[0].Flags, &cli.StringFlag{Name: "index", Value: "ix.db", EnvVars: []string{"BS_TEST_SHOW_INDEX"}})
	t.Setenv("BS_TEST_SHOW_INDEX", "/env.db")
	var b bytes.Buffer
	Show(&b, cmds, cfg, false)
	got := b.String()
	for _, want := range []string{
		"extract --keep-recent = 5\t(" + cfg.Path + ":1)\n",
		"extract --types = \t(default)\n",
		"extract --index = /env.db\t(environment BS_TEST_SHOW_INDEX)\n",
		"trim --store = /s\t(" + cfg.Path + ":2)\n",
		"store verify --store = /s\t(" + cfg.Path + ":2)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("no %q in\n%s", want, got)
		}
	}
	if strings.Contains(got, "--in-place") {
		t.Errorf("a fixed flag shown:\n%s", got)
	}
	b.Reset()
	Show(&b, cmds[2:3], cfg, true)
	if b.String() != `{"command":"gauge","flag":"json","source":"default","value":"false"}`+"\n" {
		t.Errorf("JSON: %s", b.String())
	}
}
