#!/bin/sh
# OpenClaw recipe for bs checkpoint: run from cron (or as the filter of
# 'bs watch'). For every OpenClaw session transcript it writes a checkpoint
# once the context is 80% full, and keeps the render text beside the
# session as <session>.checkpoint.md, so that the post-compaction context
# can include it: name that file in the "Session Startup" section of the
# workspace's AGENTS.md, which OpenClaw injects after every compaction.
#
#   */5 * * * * /path/to/openclaw.sh            # all agents
#   openclaw.sh ~/.openclaw/agents/main          # one agent
#
# The session key is the transcript's session id. Checkpoints go to
# $BS_CHECKPOINT_DIR, else $XDG_STATE_HOME/bs/checkpoints.
set -eu
root=${1:-${OPENCLAW_STATE_DIR:-$HOME/.openclaw}/agents/*}
status=0
for f in $root/sessions/*.jsonl; do
	[ -f "$f" ] || continue
	if ! bs checkpoint --threshold "${BS_CHECKPOINT_THRESHOLD:-0.8}" "$f" >/dev/null; then
		status=1
		continue
	fi
	# A session with no checkpoint yet has no text to render.
	if out=$(bs checkpoint render "$f" 2>/dev/null); then
		tmp="${f%.jsonl}.checkpoint.md.tmp"
		printf '%s\n' "$out" >"$tmp" && mv "$tmp" "${f%.jsonl}.checkpoint.md"
	fi
done
exit $status
