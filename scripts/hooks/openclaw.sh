#!/bin/sh
# OpenClaw recipe for bs checkpoint: run from cron. For every OpenClaw
# session transcript it
#
#   - writes a checkpoint once the context is 80% full (--threshold);
#   - from 70% tells the agent its gauge (seed 003 §6.3): bs checkpoint --notice -i
#     appends a custom_message to the session, which OpenClaw, reading the
#     transcript again on the next run, puts into the agent's context:
#       [Context: 75% | 150k/200k tokens]
#     and, once the checkpoint is saved,
#       [Context: 81% | 162k/200k tokens | Checkpoint saved]
#     with a one-line advisory note. A notice is appended only when it
#     differs from the last one; the rewrite takes OpenClaw's <file>.lock
#     and leaves a file changed in the last 2 seconds for the next pass;
#   - keeps the render text beside the session as <session>.checkpoint.md,
#     so that the post-compaction context can include it: name that file in
#     the "Session Startup" section of the workspace's AGENTS.md, which
#     OpenClaw injects after every compaction.
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
	if ! bs checkpoint --notice -i --threshold "${BS_CHECKPOINT_THRESHOLD:-0.8}" "$f"; then
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
