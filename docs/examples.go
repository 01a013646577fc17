package docs

// Examples are each command's examples, shown by --help and in its man
// page: a comment line says what the command line after it does.
var Examples = map[string][]string{
	"extract": {
		"# Move old tool output, thinking and tool arguments to the store",
		"bs extract session.jsonl > lean.jsonl",
		"# Keep the last 5 messages whole; move only tool results and images over 2000 characters",
		"bs extract --keep-recent 5 --types tool_result,image --min-length 2000 < session.jsonl > lean.jsonl",
		"# Never move the results of the read tool",
		`bs extract --rule 'if .message.toolName == "read" then false else null end' session.jsonl > lean.jsonl`,
		"# What a pass in place would move, changing nothing",
		"bs extract --dry-run -i ~/.openclaw/agents/main/sessions/*.jsonl",
		"# Rewrite live sessions in place",
		"bs extract -i ~/.openclaw/agents/main/sessions/*.jsonl",
	},
	"restore": {
		"# Everything back, byte for byte",
		"bs restore --all lean.jsonl > session.jsonl",
		"# One entry back into context, stamped _restored",
		"bs restore --id 10009aab -i session.jsonl",
		"# Keep an entry in context from now on",
		"bs restore --set-extractable 10009aab=false -i session.jsonl",
	},
	"gauge": {
		"bs gauge session.jsonl",
		"bs gauge --json session.jsonl",
		"# Stream through and gauge on standard error",
		"bs extract session.jsonl | bs gauge --tee > lean.jsonl",
		"# Exit 5 above 80%",
		`bs gauge --fail-above 0.8 session.jsonl; [ $? -eq 5 ] && bs roll -i session.jsonl`,
	},
	"roll": {
		"# Acts only at or above the trigger (90%), down to the target (80%)",
		"bs roll session.jsonl > rolled.jsonl",
		"bs roll --trigger 0.85 --target 0.6 --min-keep 20 -i session.jsonl",
	},
	"search": {
		"bs search connection refused",
		"bs search --kind tool_result --tool bash --limit 5 go test",
		"bs search --json migration | jq -r .restore",
	},
	"index": {
		"# Make what older transcripts hold searchable",
		"bs index ~/.claude/projects/*/*.jsonl",
	},
	"trim": {
		"bs trim session.jsonl > trimmed.jsonl",
		"bs trim --ttl 5m --deny '*image*' -i session.jsonl",
	},
	"checkpoint": {
		"# Pass the transcript through; at 80% or more write a checkpoint",
		"bs checkpoint session.jsonl > /dev/null",
		"bs checkpoint --force --learning 'tests need BS_NOW' session.jsonl > /dev/null",
		"# The text to give the agent back after a compaction",
		"bs checkpoint render --session-key main",
	},
	"archive": {
		"bs archive --holders ~/holders -i session.jsonl",
		"bs archive list lean.jsonl",
		"bs archive show 3a83a6f13bafa224 lean.jsonl",
	},
	"watch": {
		"# Extract in place every session that has been idle for 5 minutes",
		"bs watch --interval 30s ~/.openclaw/agents -- extract --idle 5m",
		"bs watch --once ~/.claude/projects -- roll --trigger 0.85",
	},
	"config": {
		"bs config show",
		"bs config show --json | jq 'select(.source != \"default\")'",
	},
	"stats": {
		"bs stats session.jsonl",
		"bs stats --json session.jsonl | jq '.kinds.tool_result.tokens, .would_free.tokens'",
		"bs stats --keep-recent 0 --types tool_call,tool_result,thinking,image session.jsonl",
	},
	"mcp": {
		"# Serve the agent its tools over stdio",
		"bs mcp --session ~/.openclaw/agents/main/sessions/current.jsonl",
		"bs mcp --sessions-dir ~/.claude/projects/myproject",
	},
	"tool": {
		`echo '{"type":"tool_call","name":"restore","arguments":{"entry_id":"10009aab"}}' | bs tool --session session.jsonl`,
	},
	"skill": {
		"bs skill > ~/.claude/skills/smart-purge-control/SKILL.md",
	},
	"store": {
		"bs store stats",
		"bs store verify --json",
		"bs store list --long",
		"# Merge small packs and move loose blobs into packs",
		"bs store repack",
	},
	"prune-retention": {
		"# What would go, changing nothing",
		"bs prune-retention --dry-run --sessions ~/.openclaw/agents",
		"bs prune-retention --older-than 72h --sessions ~/.openclaw/agents --sessions '~/.claude/projects/*/*.jsonl'",
	},
	"ui": {
		"# Browse the sessions where the runtimes keep them",
		"bs ui",
		"bs ui --addr 127.0.0.1:8765 --open ~/.claude/projects",
	},
	"completion": {
		"bs completion bash > ~/.local/share/bash-completion/completions/bs",
		"bs completion zsh > ~/.zfunc/_bs",
		"bs completion fish > ~/.config/fish/completions/bs.fish",
	},
}
