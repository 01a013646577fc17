package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/internal/clidoc"
	"github.com/bstools/bs/internal/config"
	"github.com/bstools/bs/internal/xdg"
)

// configPath is --config, else $XDG_CONFIG_HOME/bs/config.yaml; explicit
// says whether it was asked for (then it must exist).
func configPath(c *cli.Context) (path string, explicit bool) {
	if p := c.String("config"); p != "" {
		return p, true
	}
	return filepath.Join(xdg.Config(), "config.yaml"), false
}

// loadConfig reads and checks the configuration file against the app's
// commands (config.Load), its errors worded as usage errors.
func loadConfig(c *cli.Context) (*config.File, error) {
	path, explicit := configPath(c)
	cfg, err := config.Load(path, explicit, c.App.Commands, isCommonFlag)
	var (
		read   *config.ReadError
		syntax *config.SyntaxError
		bad    *config.BadError
	)
	switch {
	case errors.As(err, &read):
		return nil, usagef(msgConfigRead, read.Err)
	case errors.As(err, &syntax):
		return nil, usagef(msgConfigSyntax, syntax.Path, syntax.Err)
	case errors.As(err, &bad):
		return nil, usagef(msgConfigBad, bad.Path, bad.Line, bad.Key, configWhy(bad))
	}
	return cfg, err
}

// configWhy words what is wrong with a setting.
func configWhy(e *config.BadError) string {
	switch e.Why {
	case config.NotMapping:
		return msgConfigTop
	case config.Unknown:
		return msgConfigUnknown
	case config.NoFlag:
		return fmt.Sprintf(msgConfigNoFlag, e.Cmd, e.Flag)
	case config.NotPlainList:
		return msgConfigPlainList
	case config.NotValueOrList:
		return msgConfigValueOrList
	case config.NotOne:
		return msgConfigOne
	case config.NotInteger:
		return fmt.Sprintf(msgConfigInt, e.Value)
	case config.NotNumber:
		return fmt.Sprintf(msgConfigNumber, e.Value)
	case config.NotBool:
		return fmt.Sprintf(msgConfigBool, e.Value)
	case config.NotSeconds:
		return fmt.Sprintf(msgConfigSeconds, e.Value)
	case config.NotDuration:
		return fmt.Sprintf(msgConfigDuration, e.Value)
	}
	return e.Error()
}

// isCommonFlag is whether name is a flag every filter takes that a file
// may set.
func isCommonFlag(name string) bool {
	if slices.Contains(config.Fixed, name) {
		return false
	}
	for _, f := range commonFlags() {
		if slices.Contains(f.Names(), name) {
			return true
		}
	}
	return false
}

// applyConfig gives each flag of the running command that neither the
// command line nor the environment set the value the file has for it.
func applyConfig(c *cli.Context) error {
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	return applyConfigOf(cfg, c, clidoc.CommandPath(c), nil)
}

// applyConfigOf sets, from cfg's settings for command section, each flag
// of c not set on the command line (or, with only, each of those flags).
func applyConfigOf(cfg *config.File, c *cli.Context, section string, only []string) error {
	for flag, s := range cfg.Settings[section] {
		if c.IsSet(flag) || only != nil && !slices.Contains(only, flag) {
			continue
		}
		for _, v := range s.Values {
			if err := c.Set(flag, v); err != nil {
				return usagef(msgConfigBad, cfg.Path, s.Line, s.Key, err.Error())
			}
		}
	}
	return nil
}

func configCommand() *cli.Command {
	return &cli.Command{
		Name:  "config",
		Usage: "show the configuration in effect",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(msgConfigCommand, c.Args().First())
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: withUsageErrors(&cli.Command{
			Name:   "show",
			Usage:  "print every setting, its value and where it came from (default, environment or file:line)",
			Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "one JSON object per setting"}},
			Before: func(*cli.Context) error { return nil }, // the file is what it shows, not applies
			Action: runConfigShow,
		}),
	}
}

func runConfigShow(c *cli.Context) error {
	if c.NArg() > 0 {
		return usagef(msgConfigShowArgs)
	}
	cfg, err := loadConfig(c)
	if err != nil {
		return err
	}
	config.Show(c.App.Writer, c.App.Commands, cfg, c.Bool("json"))
	return nil
}
