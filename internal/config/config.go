// Package config reads and checks bs's configuration file: flag values by
// command, so that a long-running setup (cron, bs watch, hooks) need not
// repeat them. Precedence: a flag on the command line, then its BS_*
// environment variable, then the file, then the default (the command
// applies them; Show prints where each value came from).
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
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"go.yaml.in/yaml/v3"

	"github.com/bstools/bs/internal/clidoc"
)

// Setting is one value the file gives a command's flag.
type Setting struct {
	Values []string // one, or several for a repeatable flag
	Line   int
	Key    string // as written in the file, for messages
}

// File is a parsed configuration file.
type File struct {
	Path string
	// Settings by command (its name, or its path for a subcommand:
	// "store verify"), then flag name.
	Settings map[string]map[string]Setting
}

// ReadError is a configuration file that cannot be read.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return "read: " + e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// SyntaxError is a file that is not YAML.
type SyntaxError struct {
	Path string
	Err  error
}

func (e *SyntaxError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *SyntaxError) Unwrap() error { return e.Err }

// Why is what is wrong with a setting.
type Why int

const (
	NotMapping     Why = iota + 1 // the file is not a mapping of keys to values
	Unknown                       // the key is no setting
	NoFlag                        // the command has no flag Flag a file may set
	NotPlainList                  // a list of other than plain values
	NotValueOrList                // neither a value nor a list
	NotOne                        // a list for a flag that takes one value
	NotInteger                    // Value is not an integer
	NotNumber                     // Value is not a number
	NotBool                       // Value is not true or false
	NotSeconds                    // Value is not a number of seconds
	NotDuration                   // Value is not a duration
)

// BadError is a setting, Key at Line of the file Path, that bs does not
// take, and Why; Cmd and Flag name the flag, Value the value refused.
type BadError struct {
	Path      string
	Line      int
	Key       string
	Why       Why
	Cmd, Flag string
	Value     string
}

func (e *BadError) Error() string {
	return fmt.Sprintf("%s:%d: %s: bad setting (%d)", e.Path, e.Line, e.Key, e.Why)
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

// Fixed are flags a file may not set: they say what to do now, not how.
var Fixed = []string{"in-place", "help", "now", "dry-run", "once", "config"}

// Load reads the configuration file at path and checks it against the
// commands cmds: their flags, and common, the flags every filter takes
// that a file sets for each command that has it. A command's section sets
// its subcommands' flags of the same names too (checkpoint's dir is
// checkpoint render's), and a common flag is set for every subcommand
// that has it (store for bs store verify). A missing file that was not
// asked for (explicit) is an empty configuration.
func Load(path string, explicit bool, commands []*cli.Command, common func(name string) bool) (*File, error) {
	cfg := &File{Path: path, Settings: map[string]map[string]Setting{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !explicit {
		return cfg, nil
	}
	if err != nil {
		return nil, &ReadError{err}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, &SyntaxError{path, err}
	}
	if len(doc.Content) == 0 {
		return cfg, nil // empty file
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &BadError{Path: path, Line: root.Line, Key: "(top)", Why: NotMapping}
	}
	cmds := map[string]*cli.Command{}
	for _, cmd := range commands {
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
				if err := cfg.set(t.cmd, cmds[t.cmd], t.flag, k.Value, v, t.unit); err != nil {
					return nil, err
				}
			}
		case cmds[k.Value] != nil && v.Kind == yaml.MappingNode:
			for j := 0; j < len(v.Content); j += 2 {
				fk, fv := v.Content[j], v.Content[j+1]
				if err := cfg.setSection(cmds[k.Value], fk.Value, k.Value+"."+fk.Value, fv); err != nil {
					return nil, err
				}
			}
		case common(k.Value):
			// A flag every filter takes: set it for each command that has it.
			err := clidoc.Walk(commands, func(path string, cmd *cli.Command) error {
				if findFlag(cmd, k.Value) == nil {
					return nil
				}
				return cfg.set(path, cmd, k.Value, k.Value, v, "")
			})
			if err != nil {
				return nil, err
			}
		default:
			return nil, &BadError{Path: path, Line: k.Line, Key: k.Value, Why: Unknown}
		}
	}
	return cfg, nil
}

// setSection records a setting of cmd's section for cmd and for each of
// its subcommands that has the flag; one of them at least must have it.
func (cfg *File) setSection(cmd *cli.Command, flag, key string, v *yaml.Node) error {
	found := false
	err := clidoc.Walk([]*cli.Command{cmd}, func(path string, sub *cli.Command) error {
		if findFlag(sub, flag) == nil {
			return nil
		}
		found = true
		return cfg.set(path, sub, flag, key, v, "")
	})
	if err == nil && !found {
		// Worded as the command's own: it has no such flag.
		err = cfg.set(cmd.Name, cmd, flag, key, v, "")
	}
	return err
}

func findFlag(cmd *cli.Command, name string) cli.Flag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// set records value node v for the flag of cmd, whose path is path,
// checking that the flag exists and that the value parses as its type.
// unit "s" means seconds (a number for a duration flag), "list" a list
// joined with commas.
func (cfg *File) set(path string, cmd *cli.Command, flag, key string, v *yaml.Node, unit string) error {
	bad := func(why Why, value string) error {
		return &BadError{Path: cfg.Path, Line: v.Line, Key: key, Why: why, Cmd: path, Flag: flag, Value: value}
	}
	f := findFlag(cmd, flag)
	if f == nil || slices.Contains(Fixed, flag) {
		return bad(NoFlag, "")
	}
	var values []string
	switch v.Kind {
	case yaml.ScalarNode:
		values = []string{v.Value}
	case yaml.SequenceNode:
		for _, item := range v.Content {
			if item.Kind != yaml.ScalarNode {
				return bad(NotPlainList, "")
			}
			values = append(values, item.Value)
		}
	default:
		return bad(NotValueOrList, "")
	}
	if unit == "list" {
		values = []string{strings.Join(values, ",")}
	}
	if _, repeatable := f.(*cli.StringSliceFlag); !repeatable && len(values) != 1 {
		return bad(NotOne, "")
	}
	for i, s := range values {
		var err error
		switch f.(type) {
		case *cli.IntFlag:
			_, err = strconv.Atoi(s)
			if err != nil {
				return bad(NotInteger, s)
			}
		case *cli.Float64Flag:
			if _, err = strconv.ParseFloat(s, 64); err != nil {
				return bad(NotNumber, s)
			}
		case *cli.BoolFlag:
			if _, err = strconv.ParseBool(s); err != nil {
				return bad(NotBool, s)
			}
		case *cli.DurationFlag:
			if unit == "s" {
				n, err := strconv.ParseFloat(s, 64)
				if err != nil || n < 0 {
					return bad(NotSeconds, s)
				}
				values[i] = time.Duration(n * float64(time.Second)).String()
			} else if _, err = time.ParseDuration(s); err != nil {
				return bad(NotDuration, s)
			}
		}
	}
	if cfg.Settings[path] == nil {
		cfg.Settings[path] = map[string]Setting{}
	}
	cfg.Settings[path][f.Names()[0]] = Setting{Values: values, Line: v.Line, Key: key}
	return nil
}
