#!/bin/sh
# Claude Code hook for bs checkpoint. Claude Code runs a hook's command with
# the event as JSON on standard input (session_id, transcript_path,
# hook_event_name, and trigger or source); bs checkpoint hook reads it:
#
#   UserPromptSubmit  from 70% tells the agent its gauge (seed 003 §6.3),
#                     as the hook output Claude Code adds to the context:
#                     {"hookSpecificOutput":{"hookEventName":"UserPromptSubmit",
#                      "additionalContext":"[Context: 75% | 150k/200k tokens]"}};
#                     at 80% it writes a checkpoint first, and the agent gets
#                     "[Context: 81% | 162k/200k tokens | Checkpoint saved]"
#                     and a one-line advisory note
#   PreCompact        writes a checkpoint of the transcript (trigger compaction)
#   SessionStart      adds the latest checkpoint's text to the context (after
#                     a compaction, source "compact", the agent gets it back),
#                     after the agent's gauge when the session is 70% full
#   Stop              writes a checkpoint once the context is 80% full
#   SessionEnd        writes one (trigger session-end)
#
# Install: in ~/.claude/settings.json (or .claude/settings.json)
#
#   {"hooks": {
#     "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "PreCompact":       [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "SessionStart":     [{"matcher": "compact|resume", "hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "Stop":             [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "SessionEnd":       [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}]
#   }}
#
# Checkpoints go to $BS_CHECKPOINT_DIR, else $XDG_STATE_HOME/bs/checkpoints.
# Extra arguments are passed to bs (e.g. --threshold 0.7, --notice-from 0.6).
# A failure exits 1, which Claude Code reports without blocking the session.
exec bs checkpoint hook "$@"
