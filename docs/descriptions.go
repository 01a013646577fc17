package docs

// BsDescription is the description of bs itself, which bs --help and
// bs(1) open with.
const BsDescription = "bs is a set of composable filters over LLM-agent session transcripts " +
	"(OpenClaw/pi, Claude Code, Codex, BrainSurgeon flat and generic chat JSONL). " +
	"Each reads JSONL on standard input or from files and writes JSONL on standard output. " +
	"Values it removes go to a zstd-compressed, content-addressed blob store and can be put back byte for byte."

// Descriptions are each command's description, by its full path ("extract",
// "checkpoint render"): the prose of its --help and of its man page. A
// subcommand whose usage line says it all has none.
var Descriptions = map[string]string{
	"extract": "Keeps the last --keep-recent messages whole and moves every value of the chosen --types " +
		"that is longer than --min-length characters, in older entries, to the blob store. " +
		"An entry's _extractable (true: always, false: never, N: keep for N messages) or, failing that, " +
		"the first --rule with an opinion overrides the defaults; an entry restored less than " +
		"--keep-after-restore ago stays unless forced. Each moved value is listed under the entry's " +
		"_extracted; 'bs restore' puts it back byte for byte.",
	"restore": "With --all, every extracted value is put back and the transcript is exactly what it was " +
		"before 'bs extract'. With --id, one entry is restored (optionally only --keys, each a JSON Pointer or " +
		"its last name), stamped with _restored, restore and purge_control tool calls are marked _redacted, " +
		"and the seed-000 result object is written as one JSON line to --result (default: stderr). " +
		"A missing or corrupt blob leaves its entry unchanged and exits 1.",
	"gauge": "Context tokens are the size recorded by the last assistant message that carries usage " +
		"(OpenClaw/pi usage, Claude Code usage counted once per API message, Codex token_count) plus an " +
		"estimate (characters/4) of every entry after it. Usage before the latest compaction is stale, and " +
		"with no usage at all the whole figure is an estimate (source: estimate). A file argument, or standard " +
		"input redirected from a file, is read from its end, so a huge transcript costs about what a small one does.",
	"roll": "When the gauge reads at or above --trigger, the oldest messages (a tool call always with its " +
		"result) are evicted until the context is at most --target, keeping the last --min-keep messages and " +
		"everything the runtime needs to load the file. The evicted lines go to the blob store, byte for byte; " +
		"a note in the runtime's own compaction shape says how many, which range, and how to get them back " +
		"('bs restore --all'). The gauge of the output reads what roll aimed for.",
	"search": "Searches the values extract moved and the entries roll evicted. Each hit shows the entry id, " +
		"the session, a snippet with the match in [brackets], and the bs restore command that brings it back. " +
		"An exact phrase ranks first.",
	"index": "Reads each transcript's _extracted metadata and roll markers, fetches the removed values " +
		"from the store and adds their rows to the search index (adding a row twice keeps one).",
	"trim": "OpenClaw's session pruning, knob for knob. Only tool results are pruned; those after " +
		"the last --keep-last-assistants assistant messages, before the first user message, or holding images " +
		"are never touched, nor is anything when there are fewer assistant messages. When the context " +
		"(characters; the window is --context-window tokens × 4) is at least --soft-trim-ratio full, results " +
		"over --soft-max characters keep their first --soft-head and last --soft-tail characters and a note; " +
		"when it is still at least --hard-clear-ratio full and the prunable results hold at least " +
		"--min-prunable-chars, whole results become --placeholder, oldest first, until it is not. " +
		"With --ttl, the stream passes through unchanged unless the last assistant message is at least that old at --now. " +
		"Unlike OpenClaw, the removed results go to the blob store (when --store or BS_STORE is given or the " +
		"default store exists) and each placeholder ends with [[extracted-ID]], so 'bs restore' brings them " +
		"back and 'bs search' finds them; --lossy writes OpenClaw's exact output and keeps nothing.",
	"checkpoint": "A tap: the transcript passes through unchanged (with --notice, a notice may follow it). When the gauge reads at or above " +
		"--threshold (or with --force, or --trigger compaction|session-end) the session's working state is " +
		"written, with no model call, as a YAML checkpoint (meta, working, decisions, resources, " +
		"thread, open_items, learnings) to --dir/<session key>/cp_NNN.yaml, and _latest.json points at it. " +
		"Files are written once and never changed; the last --keep are kept. With --notice, from --notice-from " +
		"(0.7) the agent is told of its context: one entry appended after the transcript, in the " +
		"shape its runtime takes injected context in, holds the gauge, [Context: 75% | 150k/200k tokens], and at " +
		"the threshold, once the checkpoint is saved, [Context: 81% | 162k/200k tokens | Checkpoint saved] and " +
		"an advisory note; a notice the transcript's last one already says is not appended again. With -i " +
		"(and --notice) the file is rewritten only to append a notice. 'bs checkpoint render' prints " +
		"the lean text to put back in the context after a compaction (at most 700 o200k tokens).",
	"checkpoint render": "FILE is a checkpoint (.yaml) or a transcript, whose session key is found as " +
		"'bs checkpoint' finds it. The text warns of the compaction death spiral after more than " +
		"three compactions. It fits 700 tokens as --tokenizer counts them: the " +
		"lowest-value sections lose their items first, the oldest first (tools used, files read, " +
		"key exchanges, failed calls, files modified, learnings, decisions, open items).",
	"checkpoint inject": "The appended entry has the dialect's own shape for injected context: an OpenClaw/pi " +
		"custom_message, a Claude Code meta user message, a Codex user message item, a system entry " +
		"otherwise. With no checkpoint for the session the transcript passes through unchanged.",
	"checkpoint hook": "For use as the command of Claude Code hooks (see scripts/hooks/claude-code.sh). " +
		"PreCompact writes a checkpoint of transcript_path (trigger compaction); SessionEnd writes one " +
		"(trigger session-end); Stop and UserPromptSubmit write one when the threshold is reached. " +
		"UserPromptSubmit and SessionStart print what Claude Code adds to the context, as " +
		"hookSpecificOutput.additionalContext: from --notice-from the agent's notice of its context " +
		"(the gauge, and at the threshold '| Checkpoint saved' and an advisory note), and at " +
		"SessionStart the latest checkpoint's text. The session key is session_id.",
	"archive": "A turn runs from a user message to the end of the assistant's final reply. A finished turn " +
		"of more than --token-threshold estimated tokens, with at least --tool-call-threshold tool-use pairs, " +
		"or that stopped at a max-turns limit (--on-max-turns) is archived: its original lines, byte for byte " +
		"and its user prompt included, become a holder transcript in the blob store (and DIR/<id>.jsonl with " +
		"--holders DIR), and its entries go to the search index. The user prompt stays; the rest of the turn " +
		"becomes one synthetic assistant entry, '[archived turn]\\nsubagent_id: <id>\\n\\n<summary>' and the line " +
		"'[archived: <id>]', in the dialect's own shape. The summary is mechanical (--summary-style structured: a JSON object with " +
		"outcome, key_findings, files_touched, tools_used and open_questions; or paragraph), or the standard " +
		"output of --summarize-cmd, run with sh -c and the holder on standard input (on failure or after " +
		"--summarize-timeout the mechanical summary is used, with a warning). A turn that ends on a tool call " +
		"with no result, holds a compaction, or holds a holder at --depth-cap is never archived; neither are " +
		"the last --keep-recent turns. 'bs restore --all' puts every archived turn back byte for byte. " +
		"'bs archive list' prints the live holders; 'bs archive show ID' prints one.",
	"archive list": "Prints, for each archived turn still standing in the transcript, its holder id, the gist " +
		"of the turn's user message, its entries and estimated tokens: the block a runtime can put in its " +
		"system prompt. Prints nothing when there are none. --json prints one object per holder.",
	"archive show": "Finds holder ID among the archived turns of the transcripts FILE... (or of standard " +
		"input), holders nested in them included, and prints its lines from the blob store, verified. " +
		"With --holders DIR and no FILE, prints DIR/ID.jsonl instead.",
	"watch": "The periodic scan of a sessions directory, made safe: each pass stats the session files (*.jsonl under each DIR, " +
		"or those a GLOB names) and runs 'bs FILTER FLAGS -i FILE' on those whose size, mtime or inode " +
		"changed since the last pass, as kept in $XDG_STATE_HOME/bs/watch.json; an unchanged file is not " +
		"read at all. Each rewrite has the safety of -i (the runtime's lock, the quiet period, writers that " +
		"hold the file open); a file that is busy is tried again on the next pass. With --retention-interval, " +
		"'bs prune-retention --older-than RETENTION' runs on its own schedule over the same sessions. " +
		"One log line per rewritten file says the bytes and tokens (bytes/4) freed. SIGINT or SIGTERM " +
		"stops it cleanly, after the file in hand.",
	"config": "The configuration file is --config FILE (or BS_CONFIG), else $XDG_CONFIG_HOME/bs/config.yaml. " +
		"It takes the SmartPruningConfig names other purge tools use (keep_recent, min_value_length, trigger_types, " +
		"scan_interval_seconds, retention, keep_purge_control_calls, keep_after_restore_seconds), any flag " +
		"every filter takes (store, format, log-level, lock-timeout, ...), and any flag of a command under its " +
		"name (trim: {soft-trim-ratio: 0.4}); a command's settings and the common flags reach its subcommands " +
		"that have the flag (checkpoint: {dir: D} is checkpoint render's --dir, store: S is bs store verify's). A flag on the command line wins, then its BS_* variable, then the " +
		"file, then the default.",
	"stats": "Breaks the gauge's estimate of the whole transcript (every line estimated, usage ignored; " +
		"--tokenizer as for gauge) down by kind (user, assistant, thinking, tool_call, tool_result, image, other), " +
		"by tool, and into the ten largest entries; counts what _extracted says was moved to the store; " +
		"and says what 'bs extract' with the same --keep-recent, --min-length, --types, --rule and " +
		"--keep-after-restore (and the configuration file's extract settings) would free. " +
		"Bar charts on a terminal (no colour under NO_COLOR), plain text otherwise, --json for programs.",
	"mcp": "A Model Context Protocol server on standard input and output, for Claude Code, Codex, " +
		"OpenClaw and other agent runtimes. With --session FILE the tools act on that transcript; with " +
		"--sessions-dir DIR each call names its session (an OpenClaw session key, a session id, or a path " +
		"inside DIR; anything resolving outside DIR is refused). Restores and set_extractable rewrite the " +
		"transcript as -i does (bs's lock and the runtime's, atomic rename, lines appended meanwhile kept), " +
		"waiting up to --lock-timeout for a file changed within --quiet-period. Standard output carries the " +
		"protocol only; logs go to standard error.",
	"tool": "Reads a tool call in the shape agents send, " +
		`{"type":"tool_call","name":"restore","arguments":{"entry_id":"msg-456","keys":["content"]}}` +
		" (or purge_control with an action, search, checkpoint), acts on --session FILE (or a session " +
		"inside --sessions-dir) as bs mcp would, and prints the tool result as one JSON object. A bad call " +
		"(unknown tool or action, missing argument, unknown entry id) prints an object with \"error\" and " +
		"exits 1.",
	"skill": "The smart-purge-control skill: what gets extracted, the [[extracted-<id>]] placeholder, " +
		"the purge_control, restore, search and checkpoint tools, re-extraction after the protection " +
		"window, and _extractable: false. Install it where the runtime reads skills, e.g. " +
		"'bs skill > ~/.claude/skills/smart-purge-control/SKILL.md'.",
	"store": "bs store stats counts the blobs and the bytes they take, how they are laid out (packs, index " +
		"files, loose blobs) and the compression ratio over the blobs whose size the store records (every packed " +
		"blob; a plain loose blob's zstd header; a remote loose blob's metadata; an encrypted local loose blob's " +
		"size is not known without decrypting it). It reads no blob data: the indexes, and one stat per loose " +
		"blob; a loose blob whose file or metadata is damaged is counted as unreadable and the others are still " +
		"counted. bs store verify reads every blob back and re-hashes it, bypassing --cache: every copy in every " +
		"pack, pack by pack, every index file whole, and the loose blobs; it prints each corrupt copy (naming its " +
		"pack), each it cannot decrypt and each damaged index or pack trailer on standard output and exits 1 if " +
		"there was any; on a terminal it shows its progress on standard error. bs store list prints every " +
		"blob's digest (with --long, where each copy is: its pack and offset, or loose). bs store cat DIGEST " +
		"writes a blob's bytes to standard output. bs store repack merges small packs into packs of up to 16 MiB " +
		"and moves loose blobs into packs, with one index in place of the old ones; it takes no lock, so filters " +
		"may write to the store meanwhile. See docs/store.md for the layout.",
	"prune-retention": "A mark and sweep. Mark reads every transcript --sessions names (a DIR is walked for *.jsonl, " +
		"following symbolic links; a GLOB names files, and a directory it matches is walked; if they name no " +
		"transcript at all, nothing is deleted) and records every blob they reference: values in _extracted (extract, trim), " +
		"the chunks of ranges bs roll evicted and the holder transcripts bs archive wrote, and, read from the " +
		"store, whatever the lines inside those chunks and holders reference in turn. Sweep then deletes each " +
		"unreferenced blob last written (or re-used) more than --older-than before the mark began; a referenced " +
		"blob is never deleted, however old, nor one written while the sweep runs (a filter stores a blob before " +
		"the line that references it is written, so keep --older-than longer than any filter run). If a transcript or a " +
		"referenced chunk or holder cannot be read, or a symbolic link among the sessions leads nowhere, nothing is " +
		"deleted; a line that is not valid JSON keeps every blob it names. It also deletes checkpoints beyond the " +
		"newest --keep of each session key under --checkpoint-dir, and, with --holders DIR, the DIR/<id>.jsonl " +
		"files of holders no transcript references (older than --older-than too; only files named like a holder id, " +
		"16 lowercase hex digits, and never one read as a session). The store is opened as the filters open it " +
		"(--store, --identity, --cache); a --store directory that holds no blob store is an error. On a store " +
		"reached by URL, --older-than must be at least 2h: such a store refreshes a re-used blob's time only once " +
		"it is an hour old. --dry-run lists what would go " +
		"(one blob digest or file path and its bytes a line) and changes nothing. The last line reports counts " +
		"and bytes freed; --json prints it as an object. Rows of the search index (--index) that name a deleted " +
		"blob are removed too. Blobs in packs go by packs: a pack that holds nothing referenced or recent is " +
		"deleted, and one whose share of unreferenced old bytes is above --rewrite-above is rewritten without " +
		"them; the others keep their unreferenced blobs until that share grows (the report counts them). A " +
		"packed blob stays at least 2h after it was last written, whatever --older-than: a writer re-uses a " +
		"packed copy up to an hour old without writing it again.",
	"ui": "Serves a web app over the session files found under each PATH (directories are walked for *.jsonl, " +
		"globs and files are taken as they are; without PATH, where OpenClaw, pi, Claude Code and Codex keep them) " +
		"and prints its URL. The app lists the sessions with their gauge, shows a session's entries page by page " +
		"(placeholders expand to the stored value), charts where its tokens go and its context over time, searches " +
		"the index, shows the latest checkpoint, and previews and applies extract, trim and roll, restores an entry " +
		"and sets _extractable, through the same code as -i (locks, --quiet-period, refusals). It listens on " +
		"127.0.0.1 on a free port; every request needs the token in the printed URL (then a cookie), a Host the " +
		"server answers to, and for a change a POST from the app's own Origin. --read-only serves no actions. " +
		"Everything the page loads is in the binary. Stop it with Ctrl-C.",
	"completion": "Completes the commands, their flags, the values of --format and --types, and file names. " +
		"Install it for bash with 'bs completion bash > ~/.local/share/bash-completion/completions/bs', " +
		"for zsh with 'bs completion zsh > ~/.zfunc/_bs' (with ~/.zfunc on $fpath before compinit), " +
		"for fish with 'bs completion fish > ~/.config/fish/completions/bs.fish'; or source it from the " +
		"shell's start-up file: 'source <(bs completion bash)'.",
}
