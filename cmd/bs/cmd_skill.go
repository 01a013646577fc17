package main

import (
	"io"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/agent"
)

func skillCommand() *cli.Command {
	return &cli.Command{
		Name:  "skill",
		Usage: "print the agent skill (Markdown) that explains placeholders, the tools and _extractable",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(msgSkillArgs)
			}
			_, err := io.WriteString(c.App.Writer, agent.Skill)
			return err
		},
	}
}
