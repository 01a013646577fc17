package main

import (
	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/clidoc"
)

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usagef(msgCompletionArgs)
			}
			comp := clidoc.Completion{Commands: c.App.Commands, Formats: transcript.DialectList(), Kinds: transcript.KindNames()}
			switch c.Args().First() {
			case "bash":
				return comp.Bash(c.App.Writer)
			case "zsh":
				return comp.Zsh(c.App.Writer)
			case "fish":
				return comp.Fish(c.App.Writer)
			}
			return usagef(msgCompletionShell, c.Args().First())
		},
	}
}
