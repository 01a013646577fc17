package agent

import _ "embed"

// Skill is the agent skill (in the shape of the smart-purge-control skill)
// that teaches an agent the placeholders, the tools, re-extraction and
// _extractable: false. `bs skill` prints it.
//
//go:embed skill.md
var Skill string
