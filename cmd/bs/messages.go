package main

// Every message bs shows a person is written here, so that they read as one
// voice: on stderr, prefixed "bs: ", lowercase, no trailing period; a
// warning says "warning: " and goes on; an error ends the run; a hint says
// what to try next. Logs (--log-level) are slog records and separate.

import (
	"fmt"
	"io"
)

type ui struct{ w io.Writer }

func (u ui) errorf(cmd, format string, args ...any) {
	if cmd != "" {
		cmd += ": "
	}
	fmt.Fprintf(u.w, "bs: %s%s\n", cmd, fmt.Sprintf(format, args...))
}

func (u ui) warnf(format string, args ...any) {
	fmt.Fprintf(u.w, "bs: warning: %s\n", fmt.Sprintf(format, args...))
}

func (u ui) hintf(format string, args ...any) {
	fmt.Fprintf(u.w, "bs: hint: %s\n", fmt.Sprintf(format, args...))
}

const (
	msgBadLine        = "%s:%d: not a valid JSON entry (%v); passed through unchanged"
	msgGaugeOffPath   = "%s: read in file order, but the session's last entry is on a branch that leaves the usage counted (the user went back to an earlier entry): give the file as an argument for the runtime's own figure"
	msgBadLineStrict  = "%s:%d: not a valid JSON entry: %v"
	hintHelp          = "see 'bs %s --help'"
	hintStrict        = "run without --strict to pass such lines through unchanged"
	msgBadRule        = "bad --rule %q: %v"
	hintRule          = "a rule is a jq expression yielding true, false, an integer or null, e.g. --rule '.message.role == \"toolResult\"'"
	hintMissingBlob   = "was the transcript extracted with another --store? restore reads the store it was written to"
	hintCorruptBlob   = "the stored copy is damaged; 'bs store verify' lists every damaged blob (a later extract of the same value stores it again)"
	msgRestoreWhat    = "nothing to do: give --id ID, --all or --set-extractable ID=VALUE"
	msgRestoreBoth    = "--id and --all cannot be used together"
	msgKeysWithoutID  = "--keys needs --id"
	msgSetExtractable = "bad --set-extractable %q: want ID=true, ID=false or ID=N"
	msgBadNow         = "bad --now %q: want an RFC 3339 time such as 2026-02-20T17:30:00Z"
	msgBadLogLevel    = "bad --log-level %q: want debug, info, warn or error"
	msgInterrupted    = "interrupted"
	msgUnknownCommand = "unknown command %q (see 'bs --help')"
	msgUnknownFlag    = "unknown flag %s"
	msgDidYouMean     = " (did you mean %s?)"
	msgStoreOpen      = "cannot open the blob store at %s: %v"
	msgInPlaceStdin   = "-i/--in-place needs file arguments"
	msgInPlaceDash    = "-i/--in-place rewrites files: standard input (-) cannot be rewritten"
	msgStoreDisk      = "blob store %s: %v"
	msgMoreBadLines   = "%s: … and %d more lines that are not valid JSON"
	msgNotTranscript  = "%s: not a transcript: none of its %d lines is a valid JSON entry"
	msgFormatNoMatch  = "%s: --format %s matches none of its entries, which read as %s (without --format the dialect is detected)"
	msgFlagAfterFile  = "%s: flags go before file names (bs COMMAND [FLAGS] FILE...); a file whose name starts with - is ./-name"
	msgFlagAfterArgs  = "%s: flags go before the other arguments (see the usage line)"
	msgNotFinite      = "%s %v: want a finite number"
	msgBadValue       = "%s %q: want %s"
	msgNoValue        = "%s needs a value"
	msgAboveZero      = "%s %v: must be above 0"
	msgNegative       = "%s %v: must not be negative"

	// In-place rewrites.
	msgNotIdle           = "modified %v ago, not idle for --idle %v"
	msgMinSavings        = "the pass would free about %d tokens, under --min-savings %d"
	msgQuietPeriod       = "changed %v ago, within --quiet-period %v: the agent may be writing it (retry later, or --force)"
	msgHeldOpen          = "held open for writing by %s: its appends would go on to the replaced file, so it is left alone (rewrite it when that process ends)"
	msgRuntimeLocked     = "locked by the runtime (%s, held by %s); gave up after --lock-timeout %v"
	msgReplacedMeanwhile = "%s was replaced by another program during the rewrite"

	// The configuration file.
	msgConfigRead   = "cannot read the configuration: %v"
	msgConfigSyntax = "%s: %v"
	msgConfigBad    = "%s:%d: %s: %s"
	// What is wrong with a setting (msgConfigBad's last part).
	msgConfigTop         = "want a mapping of keys to values"
	msgConfigUnknown     = "not a setting bs knows"
	msgConfigNoFlag      = "'bs %s' has no flag --%s that a file may set"
	msgConfigPlainList   = "want a list of plain values"
	msgConfigValueOrList = "want a value or a list"
	msgConfigOne         = "want one value, not a list"
	msgConfigInt         = "want an integer, got %q"
	msgConfigNumber      = "want a number, got %q"
	msgConfigBool        = "want true or false, got %q"
	msgConfigSeconds     = "want a number of seconds, got %q"
	msgConfigDuration    = "want a duration such as 30s or 24h, got %q"

	// bs watch.
	msgWatchArgs    = "want: bs watch [FLAGS] DIR|GLOB... -- FILTER [FLAGS]"
	msgWatchNoRoot  = "%s does not exist (yet): watching for it"
	msgWatchFilter  = "bs watch cannot run %q in place: want one of %s"
	msgWatchGlob    = "bad pattern %q: %v"
	msgWatchFailed  = "the pass ran, but %d runs failed (the warnings above say which)"
	msgWatchState   = "%s is damaged (%v): delete it and every file is processed again on the next pass"
	msgJobs         = "--jobs must be at least 1"
	msgIndexWrite   = "the search index %s could not be updated: %v; the removed content is safe in the store"
	hintIndex       = "rebuild the index with 'bs index FILE...' (delete a damaged index file first)"
	msgNoHits       = "no hits for %q"
	msgNoIndex      = "no search index at %s: nothing has been indexed there"
	hintNoIndex     = "extract, roll, trim and archive index what they remove (unless --no-index); 'bs index FILE...' indexes transcripts; --index and BS_INDEX name another index"
	msgIndexChunk   = "the text of the entries rolled into %s cannot be read from the store %s (%v): their rows go into the search index without it"
	msgPendingWaits = "the queued search rows %s wait for the store %s, which holds their text (%v): they go into the index once it can be read (delete the file to give them up)"
	msgPendingBad   = "pending index rows %s are damaged (%v): the rows before the damage were added, the file is kept as .bad"

	// Flags and arguments of the filters.
	msgBadTypes      = "bad --types: %v"
	msgBadTokenizer  = "bad --tokenizer: %v"
	msgIndexArgs     = "give the transcripts to index: bs index FILE..."
	msgIndexRolled   = "%s: rolled range: %v"
	msgRollTarget    = "--target %v is above --trigger %v: roll down to a ratio at most the one it rolls at"
	msgRollNoIndex   = "--no-index: the evicted entries are not searchable; the note says so, and 'bs restore --all' brings them back"
	msgSearchArgs    = "give a query: bs search WORDS..."
	msgSearchKind    = "unknown --kind %q: want one of %s"
	msgSearchLimit   = "--limit must be at least 1"
	msgIndexArchived = "%s: archived turn %s: %v"
	msgIndexValue    = "%s: entry %s: %s: %v"

	// bs checkpoint
	msgCheckpointTrigger    = "bad --trigger %q: want compaction or session-end"
	msgCheckpointNoNotice   = "no new notice of the context to append"
	msgCheckpointFailed     = "no checkpoint for %s: %v; the transcript was passed through unchanged"
	msgCheckpointNoKey      = "name the session: --session-key KEY, or a transcript FILE"
	msgCheckpointArgs       = "too many arguments"
	msgCheckpointKeyAndFile = "--session-key and FILE both name the session: give one"
	msgCheckpointNone       = "no checkpoint for session key %q in %s"
	msgCheckpointNoID       = "no checkpoint %s for session key %q"
	msgCheckpointNoneInject = "no checkpoint for session key %q: nothing injected"
	msgHookInput            = "cannot read the hook's JSON on standard input: %v"
	msgHookNoSession        = "the hook input has no session_id (or give --session-key)"
	msgHookNoTranscript     = "the %s hook input has no transcript_path"
)

// Progress lines (internal/progress), on a terminal only.
const (
	prgVerify     = "bs store verify"
	prgRepack     = "bs store repack: copying"
	prgMark       = "bs prune-retention: marking"
	prgSweep      = "bs prune-retention: %s" // the phase: list, sweep
	prgWatch      = "bs watch"
	prgIngest     = "bs: indexing the queued search rows"
	prgIndex      = "bs index"
	prgRead       = "bs %s: %s" // the command, the file
	prgWaitLock   = "bs: waiting for %s (held by %s)"
	unitBlobs     = "blobs"
	unitFiles     = "files"
	unitSeconds   = "s"
	unitTranscrip = "transcripts"
)

// bs trim.
const (
	msgTrimRatio       = "--soft-trim-ratio and --hard-clear-ratio must lie between 0 and 1"
	msgTrimPlaceholder = "--placeholder must not be empty"
	msgTrimNoStore     = "no blob store at %s: pruned tool results are not kept (give --store DIR to keep them, or --lossy to say you mean it)"
)

// bs archive.
const (
	msgArchiveStyle     = "bad --summary-style %q: want structured or paragraph"
	msgArchiveSummarize = "%s: holder %s: --summarize-cmd failed (%v); the mechanical summary was used"
	msgArchiveBadMarker = "%s:%d: damaged archive marker (%v); skipped"
	msgArchiveShowArgs  = "give the holder's id: bs archive show ID [FILE...]"
	msgArchiveBadID     = "bad holder id %q"
	msgArchiveNotFound  = "no holder %s in %s"
	hintArchiveList     = "'bs archive list FILE' lists the holders a transcript has"
)

// bs stats.
const (
	msgStatsBadLine = "%s:%d: not a valid JSON entry (%v); its bytes count as other, its tokens as none"
	msgStatsBlob    = "line %d: entry %s: %v; its tokens are estimated from its bytes"
)

// bs mcp, bs tool and bs skill.
const (
	msgAgentArgs         = "no arguments expected: name the transcript with --session FILE or --sessions-dir DIR"
	msgAgentSession      = "give exactly one of --session FILE and --sessions-dir DIR"
	msgAgentNoSession    = "--session %s: not a transcript file"
	msgAgentNoDir        = "--sessions-dir %s: not a directory"
	msgAgentNoIndex      = "no search index yet: bs extract, roll and archive fill it as they remove content"
	msgAgentNoCheckpoint = "no checkpoint for session key %q yet"
	msgToolInput         = "cannot read the tool call on standard input: %v"
	msgSkillArgs         = "bs skill takes no arguments"
	msgCompletionArgs    = "give the shell: bs completion bash|zsh|fish"
	msgCompletionShell   = "no completion for %q: want bash, zsh or fish"
)

// bs store, and the store flags of every command.
const (
	msgCacheSize      = "bad --cache-size %q: want a positive number of bytes, with K, M or G"
	msgStoreArgs      = "the store commands but cat take no arguments (bs store %s); name the store with --store"
	msgStoreCatArgs   = "bs store cat takes one argument, a blob's digest (sha256:…)"
	msgStoreCommand   = "unknown store command %q: want stats, verify, list, cat or repack"
	msgConfigCommand  = "unknown config command %q: want show"
	msgConfigShowArgs = "bs config show takes no arguments; name the file with bs --config FILE"
	msgVerifyFailed   = "%d corrupt and %d undecryptable blobs in %s"
	msgVerifyDamaged  = "%d index files, pack trailers or packs in %s are damaged or missing: the blobs only they held cannot be found (bs store repack indexes a pack from its trailer)"
	msgRepackSmall    = "bad --small %q: want a positive number of bytes, with K, M or G"
	msgRepackNoPacks  = "the store at %s keeps no packs"
	msgRepackDamaged  = "%v: left where it is (bs store verify lists every damaged copy)"
	hintNoIdentity    = "the blob is encrypted: give the age identity it was encrypted to with --identity FILE (or BS_IDENTITY)"
)

// bs prune-retention.
const (
	msgPruneNoSessions = "name the live transcripts with --sessions DIR|GLOB (repeatable): without them every blob would look unreferenced"
	msgPruneRewrite    = "bad --rewrite-above %v: want a share of a pack's bytes, above 0 and at most 1"
	msgPruneNoMatch    = "--sessions %q is no directory and matches no file"
	msgPruneArgs       = "%s: prune-retention takes no arguments: give each root its own --sessions, and quote a glob (--sessions 'dir/*.jsonl')"
	msgPruneDangling   = "%s is a link that leads nowhere: the transcripts it stands for cannot be read, so nothing is deleted (mount its target, or remove the link)"
	msgPruneSession    = "cannot read the transcript %s: %v; nothing was deleted"
	msgPruneUnreadable = "%s:%d: the %s blob %s it references cannot be read (%v): what it holds may reference other blobs, so nothing was deleted"
	msgPruneDamaged    = "%s:%d: %v: the blobs it names cannot be told, so nothing was deleted"
	msgPruneBadLines   = "%s: lines that are not valid JSON: %d (each blob they name is kept)"
	msgPruneFailed     = "some deletions failed: %v"
	msgPruneIndex      = "the search index %s could not be updated (%v): some hits may name deleted blobs"
	msgIndexDamagedRef = "%s: %v; the values it names are not indexed"
	hintPruneStore     = "were the transcripts written with another --store? prune-retention must read the store they use"
	hintPruneRestore   = "'bs restore --all FILE' shows which entry is damaged; fix or remove the reference, then run again"
)

// bs prune-retention: refusals that keep a sweep from deleting live blobs.
const (
	msgPruneNoTranscripts = "--sessions %s name no transcript (*.jsonl): every blob would look unreferenced, so nothing was deleted"
	msgPruneNoStore       = "no blob store at %s: nothing to prune (check --store or BS_STORE)"
	msgPruneRemoteFloor   = "--older-than %v is below %v, the least on a remote store: it refreshes a re-used blob's time only once the blob is older than %v, so a shorter retention could delete a blob a writer just re-used"
)

// bs store stats and verify: reading, not creating, a store.
const (
	msgNoStore         = "no blob store at %s"
	msgStatsUnreadable = "%d blobs could not be read (damaged files or metadata): run bs store verify"
)

// bs mcp: the JSON-RPC errors it answers bad messages with.
const (
	msgMCPParse     = "parse error: the line is not JSON"
	msgMCPBatch     = "invalid request: JSON-RPC batches are not supported; send one message per line"
	msgMCPNotObject = "invalid request: not a JSON-RPC message object"
	msgMCPBadID     = "invalid request: the id must be a string or an integer"
	msgMCPVersion   = `invalid request: want "jsonrpc":"2.0"`
	msgMCPInvalid   = "invalid request: %v"
	msgMCPTooLong   = "invalid request: the message is longer than %d bytes"
)

// bs ui.
const (
	msgUINoRoots     = "no sessions to serve: name a directory, glob or file, or keep sessions where OpenClaw, pi, Claude Code or Codex do (%s)" // the runtimes' session directories (sessions.DefaultDirs)
	msgUIListen      = "cannot listen on %s: %v"
	msgUINotLoopback = "listening on %s, which is not loopback: anyone who can reach it and has the token can read these sessions and the store"
	msgUIOpen        = "cannot open a browser (%v): open the URL above"
)

// wantKind says what a flag's value must be, by clidoc.FlagKind.
var wantKind = map[string]string{
	"integer":  "an integer",
	"number":   "a number",
	"duration": "a duration, such as 90s, 5m or 1h30m",
	"boolean":  "true or false",
}
