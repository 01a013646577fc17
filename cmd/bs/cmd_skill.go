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
		Description: "The smart-purge-control skill: what gets extracted, the [[extracted-<id>]] placeholder, " +
			"the purge_control, restore, search and checkpoint tools, re-extraction after the protection " +
			"window, and _extractable: false. Install it where the runtime reads skills, e.g. " +
			"'bs skill > ~/.claude/skills/smart-purge-control/SKILL.md'.",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(msgSkillArgs)
			}
			_, err := io.WriteString(c.App.Writer, agent.Skill)
			return err
		},
	}
}
