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
		Description: "Completes the commands, their flags, the values of --format and --types, and file names. " +
			"Install it for bash with 'bs completion bash > ~/.local/share/bash-completion/completions/bs', " +
			"for zsh with 'bs completion zsh > ~/.zfunc/_bs' (with ~/.zfunc on $fpath before compinit), " +
			"for fish with 'bs completion fish > ~/.config/fish/completions/bs.fish'; or source it from the " +
			"shell's start-up file: 'source <(bs completion bash)'.",
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
