package config

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/internal/clidoc"
)

// Show prints every flag of commands and their subcommands that a file
// may set, its value and where the value came from: the default, the
// environment, or cfg's file:line. With asJSON, one object a setting.
func Show(w io.Writer, commands []*cli.Command, cfg *File, asJSON bool) {
	clidoc.Walk(commands, func(path string, cmd *cli.Command) error {
		if path == "config" {
			return clidoc.SkipCommand
		}
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			if slices.Contains(Fixed, name) {
				continue
			}
			value, source := flagDefault(f), "default"
			if env, v, ok := flagEnv(f); ok {
				value, source = v, "environment "+env
			} else if s, ok := cfg.Settings[path][name]; ok {
				value, source = strings.Join(s.Values, ","), fmt.Sprintf("%s:%d", cfg.Path, s.Line)
			}
			if asJSON {
				b, _ := json.Marshal(map[string]string{"command": path, "flag": name, "value": value, "source": source})
				fmt.Fprintf(w, "%s\n", b)
			} else {
				fmt.Fprintf(w, "%s --%s = %s\t(%s)\n", path, name, value, source)
			}
		}
		return nil
	})
}

// flagDefault is a flag's default value as text.
func flagDefault(f cli.Flag) string {
	if d, ok := f.(cli.DocGenerationFlag); ok {
		return d.GetDefaultText()
	}
	return ""
}

// flagEnv is the first of a flag's environment variables that is set.
func flagEnv(f cli.Flag) (name, value string, ok bool) {
	d, isDoc := f.(cli.DocGenerationFlag)
	if !isDoc {
		return "", "", false
	}
	for _, e := range d.GetEnvVars() {
		if v, set := os.LookupEnv(e); set {
			return e, v, true
		}
	}
	return "", "", false
}
