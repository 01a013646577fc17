#!/bin/sh
# Claude Code hook for bs checkpoint. Claude Code runs a hook's command with
# the event as JSON on standard input (session_id, transcript_path,
# hook_event_name, and trigger or source); bs checkpoint hook reads it:
#
#   PreCompact    writes a checkpoint of the transcript (trigger compaction)
#   SessionEnd    writes one (trigger session-end)
#   Stop          writes one once the context is 80% full (--threshold)
#   SessionStart  prints the latest checkpoint's text; Claude Code adds what a
#                 SessionStart hook prints to the context, so after a
#                 compaction (source "compact") the agent gets it back
#
# Install: in ~/.claude/settings.json (or .claude/settings.json)
#
#   {"hooks": {
#     "PreCompact":   [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "SessionStart": [{"matcher": "compact", "hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "Stop":         [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}],
#     "SessionEnd":   [{"hooks": [{"type": "command", "command": "/path/to/claude-code.sh"}]}]
#   }}
#
# Checkpoints go to $BS_CHECKPOINT_DIR, else $XDG_STATE_HOME/bs/checkpoints.
# Extra arguments are passed to bs (e.g. --threshold 0.7).
# A failure exits 1, which Claude Code reports without blocking the session.
exec bs checkpoint hook "$@"
