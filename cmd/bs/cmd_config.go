package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"
)

// The configuration file: flag values by command, so that a long-running
// setup (cron, bs watch, hooks) need not repeat them. Precedence: a flag on
// the command line, then its BS_* environment variable, then the file,
// then the default.
//
//	# seed 000's SmartPruningConfig names
//	keep_recent: 3
//	min_value_length: 500
//	trigger_types: [thinking, tool_result]
//	scan_interval_seconds: 30
//	retention: 24h
//	keep_purge_control_calls: false
//	keep_after_restore_seconds: 600
//	# a flag every filter takes
//	store: /srv/bs/store
//	# any flag of a command, under its name
//	trim:
//	  soft-trim-ratio: 0.4
//	  deny: ["*image*"]

// configSetting is one value the file gives a command's flag.
type configSetting struct {
	values []string // one, or several for a repeatable flag
	line   int
	key    string // as written in the file, for messages
}

// config is a parsed configuration file.
type config struct {
	path string
	// settings by command name, then flag name.
	settings map[string]map[string]configSetting
}

// seedKeys maps seed 000's SmartPruningConfig names to the flags they set.
var seedKeys = map[string][]struct{ cmd, flag, unit string }{
	"keep_recent":                {{"extract", "keep-recent", ""}},
	"min_value_length":           {{"extract", "min-length", ""}},
	"trigger_types":              {{"extract", "types", "list"}},
	"scan_interval_seconds":      {{"watch", "interval", "s"}},
	"retention":                  {{"watch", "retention", ""}, {"prune-retention", "older-than", ""}},
	"keep_purge_control_calls":   {{"restore", "keep-restore-calls", ""}, {"mcp", "keep-restore-calls", ""}, {"tool", "keep-restore-calls", ""}},
	"keep_after_restore_seconds": {{"extract", "keep-after-restore", "s"}},
}

// noConfig are flags a file may not set: they say what to do now, not how.
var noConfig = []string{"in-place", "help", "now", "dry-run", "once", "config"}

// configPath is --config, else $XDG_CONFIG_HOME/bs/config.yaml; explicit
// says whether it was asked for (then it must exist).
func configPath(c *cli.Context) (path string, explicit bool) {
	if p := c.String("config"); p != "" {
		return p, true
	}
	return filepath.Join(xdgDir("XDG_CONFIG_HOME", ".config"), "config.yaml"), false
}

// loadConfig reads and checks the configuration file against the app's
// commands. A missing default file is an empty configuration.
func loadConfig(c *cli.Context) (*config, error) {
	path, explicit := configPath(c)
	cfg := &config{path: path, settings: map[string]map[string]configSetting{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return cfg, nil
	}
	if err != nil {
		return nil, usagef(msgConfigRead, err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, usagef(msgConfigSyntax, path, err)
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, usagef(msgConfigBad, path, root.Line, "(top)", "want a mapping of keys to values")
	}
	cmds := map[string]*cli.Command{}
	for _, cmd := range c.App.Commands {
		cmds[cmd.Name] = cmd
	}
	for i := 0; i < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		switch {
		case seedKeys[k.Value] != nil:
			for _, t := range seedKeys[k.Value] {
				if cmds[t.cmd] == nil {
					continue // a command this build does not have
				}
				if err := cfg.set(cmds[t.cmd], t.flag, k.Value, v, t.unit); err != nil {
					return nil, err
				}
			}
		case cmds[k.Value] != nil && v.Kind == yaml.MappingNode:
			for j := 0; j < len(v.Content); j += 2 {
				fk, fv := v.Content[j], v.Content[j+1]
				if err := cfg.set(cmds[k.Value], fk.Value, k.Value+"."+fk.Value, fv, ""); err != nil {
					return nil, err
				}
			}
		case isCommonFlag(k.Value):
			// A flag every filter takes: set it for each command that has it.
			for _, cmd := range c.App.Commands {
				if findFlag(cmd, k.Value) != nil {
					if err := cfg.set(cmd, k.Value, k.Value, v, ""); err != nil {
						return nil, err
					}
				}
			}
		default:
			return nil, usagef(msgConfigBad, path, k.Line, k.Value, "not a setting bs knows")
		}
	}
	return cfg, nil
}

func isCommonFlag(name string) bool {
	if slices.Contains(noConfig, name) {
		return false
	}
	for _, f := range commonFlags() {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

func findFlag(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// set records value node v for cmd's flag, checking that the flag exists
// and that the value parses as its type. unit "s" means seconds (a number
// for a duration flag), "list" a list joined with commas.
func (cfg *config) set(cmd *cli.Command, flag, key string, v *yaml.Node, unit string) error {
	bad := func(why string) error { return usagef(msgConfigBad, cfg.path, v.Line, key, why) }
	f := findFlag(cmd, flag)
	if f == nil || slices.Contains(noConfig, flag) {
		return usagef(msgConfigBad, cfg.path, v.Line, key, fmt.Sprintf("'bs %s' has no flag --%s that a file may set", cmd.Name, flag))
	}
	var values []string
	switch v.Kind {
	case yaml.ScalarNode:
		values = []string{v.Value}
	case yaml.SequenceNode:
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				return bad("want a list of plain values")
			}
			values = append(values, item.Value)
		}
	default:
		return bad("want a value or a list")
	}
	if unit == "list" {
		values = []string{strings.Join(values, ",")}
	}
	if _, repeatable := f.(*cli.StringSliceFlag); !repeatable && len(values) != 1 {
		return bad("want one value, not a list")
	}
	for i, s := range values {
		var err error
		switch f.(type) {
		case *cli.IntFlag:
			_, err = strconv.Atoi(s)
			if err != nil {
				return bad(fmt.Sprintf("want an integer, got %q", s))
			}
		case *cli.Float64Flag:
			if _, err = strconv.ParseFloat(s, 64); err != nil {
				return bad(fmt.Sprintf("want a number, got %q", s))
			}
		case *cli.BoolFlag:
			if _, err = strconv.ParseBool(s); err != nil {
				return bad(fmt.Sprintf("want true or false, got %q", s))
			}
		case *cli.DurationFlag:
			if unit == "s" {
				n, err := strconv.ParseFloat(s, 64)
				if err != nil || n < 0 {
					return bad(fmt.Sprintf("want a number of seconds, got %q", s))
				}
				values[i] = time.Duration(n * float64(time.Second)).String()
			} else if _, err = time.ParseDuration(s); err != nil {
				return bad(fmt.Sprintf("want a duration such as 30s or 24h, got %q", s))
			}
		}
	}
	if cfg.settings[cmd.Name] == nil {
		cfg.settings[cmd.Name] = map[string]configSetting{}
	}
	cfg.settings[cmd.Name][f.Names()[0]] = configSetting{values: values, line: v.Line, key: key}
	return nil
}

// applyConfig gives each flag of the running command that neither the
// command line nor the environment set the value the file has for it.
func applyConfig(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	return cfg.apply(c, c.Command.Name, nil)
}

// apply sets, from the file's settings for command section, each flag of
// c not set on the command line (or, with only, each of those flags).
func (cfg *config) apply(c *cli.Context, section string, only []string) error {
	for flag, s := range cfg.settings[section] {
		if c.IsSet(flag) || only != nil && !slices.Contains(only, flag) {
			continue
		}
		for _, v := range s.values {
			if err := c.Set(flag, v); err != nil {
				return usagef(msgConfigBad, cfg.path, s.line, s.key, err.Error())
			}
		}
	}
	return nil
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "show the configuration in effect",
		Description: "The configuration file is --config FILE (or BS_CONFIG), else $XDG_CONFIG_HOME/bs/config.yaml. " +
			"It takes the SmartPruningConfig names other purge tools use (keep_recent, min_value_length, trigger_types, " +
			"scan_interval_seconds, retention, keep_purge_control_calls, keep_after_restore_seconds), any flag " +
			"every filter takes (store, format, log-level, lock-timeout, ...), and any flag of a command under its " +
			"name (trim: {soft-trim-ratio: 0.4}). A flag on the command line wins, then its BS_* variable, then the " +
			"file, then the default.",
		Subcommands: []*cli.Command{{
			Name:   "show",
			Usage:  "print every setting, its value and where it came from (default, environment or file:line)",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "one JSON object per setting"}},
			Action: runConfigShow,
		}},
	}
}

func runConfigShow(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	w := c.App.Writer
	for _, cmd := range c.App.Commands {
		if cmd.Name == "config" || cmd.Name == "help" {
			continue
		}
		for _, f := range cmd.Flags {
			name := f.Names()[0]
			if slices.Contains(noConfig, name) {
				continue
			}
			value, source := flagDefault(f), "default"
			if env, v, ok := flagEnv(f); ok {
				value, source = v, "environment "+env
			} else if s, ok := cfg.settings[cmd.Name][name]; ok {
				value, source = strings.Join(s.values, ","), fmt.Sprintf("%s:%d", cfg.path, s.line)
			}
			if c.Bool("json") {
				b, _ := json.Marshal(map[string]string{"command": cmd.Name, "flag": name, "value": value, "source": source})
				fmt.Fprintf(w, "%s\n", b)
			} else {
				fmt.Fprintf(w, "%s --%s = %s\t(%s)\n", cmd.Name, name, value, source)
			}
		}
	}
	return nil
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
