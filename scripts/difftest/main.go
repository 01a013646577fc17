// Command difftest runs two bs binaries side by side over the same inputs
// and reports every case where their standard output, standard error, exit
// code or rewritten file differ. It is how a change that must not change
// behaviour (a refactoring) is checked: build the binary before the change
// and after it, and compare.
//
// The inputs are the real transcripts in the corpus and transcripts
// generated from them: runs of their lines, some dropped or repeated, text
// made long enough to move, a line cut short (malformed), a blank line, CRLF
// endings or no final newline. Each input goes through every filter and the
// usual pipelines (see cases), each run in a fresh directory at the same
// path for both binaries, with a fixed clock.
//
//	go build -o /tmp/bs-old ./cmd/bs    # at the commit before the change
//	go build -o /tmp/bs-new ./cmd/bs
//	go run ./scripts/difftest -old /tmp/bs-old -new /tmp/bs-new -n 2000
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// cases are shell scripts run with $BS set to the binary under test, in a
// directory holding the input as in.jsonl. Whatever they print, and the
// files named in after, are compared.
var cases = []struct {
	name   string
	script string
	after  []string // files compared after the run
	once   bool     // run for the first input only: the case does not read it
}{
	{"help", `$BS --help; $BS --version; for c in extract restore gauge roll search index trim checkpoint archive watch config stats mcp tool skill store prune-retention ui completion; do $BS $c --help; echo "rc=$?"; done; $BS store --help; $BS checkpoint render --help; $BS archive list --help`, nil, true},
	{"completion", `for s in bash zsh fish; do $BS completion $s; echo "rc=$?"; done; $BS completion tcsh; echo "rc=$?"`, nil, true},
	{"usage-errors", `$BS extract --bogus; echo "rc=$?"; $BS extract missing.jsonl; echo "rc=$?"; $BS nosuchcommand; echo "rc=$?"; $BS gauge --fail-above 2 in.jsonl; echo "rc=$?"; $BS roll --trigger 0.5 --target 0.9 < in.jsonl; echo "rc=$?"; $BS extract --rule '.[' < in.jsonl; echo "rc=$?"; $BS restore --id x --all < in.jsonl; echo "rc=$?"; $BS config show; echo "rc=$?"; $BS skill | head -3`, nil, true},
	{"dev-full", `for c in "extract --store st --no-index" "gauge" "gauge --json" "trim" "roll --no-index" "archive --no-index" "stats" "stats --json" "checkpoint --force --dir cp" "restore --all"; do $BS $c in.jsonl > /dev/full; echo "$c rc=$?"; done`, nil, true},
	{"store", `$BS extract --store st --no-index --min-length 40 < in.jsonl > out.jsonl; $BS store stats --store st; $BS store verify --store st; echo "rc=$?"; $BS store list --store st | wc -l; $BS store repack --store st; echo "rc=$?"; $BS restore --all --store st < out.jsonl | cmp - in.jsonl; $BS prune-retention --store st --dry-run --sessions out.jsonl; echo "rc=$?"`, nil, true},
	{"extract", `$BS extract --store st --no-index < in.jsonl`, nil, false},
	{"extract-all-types", `$BS extract --store st --no-index --keep-recent 1 --min-length 40 --types tool_call,tool_result,thinking,text,image,bookkeeping < in.jsonl > out.jsonl; echo rc=$?; $BS restore --all --store st < out.jsonl | cmp - in.jsonl; $BS gauge --json < out.jsonl`, []string{"out.jsonl"}, false},
	{"extract-dry-run", `$BS extract --dry-run --store st --no-index --min-length 40 in.jsonl`, nil, false},
	{"extract-strict", `$BS extract --strict --store st --no-index < in.jsonl`, nil, false},
	{"extract-in-place", `cp in.jsonl f.jsonl; $BS extract -i --force --quiet-period 0 --store st --no-index --min-length 40 f.jsonl; echo rc=$?; $BS restore --all --store st -i --force --quiet-period 0 f.jsonl; echo rc=$?; cmp f.jsonl in.jsonl`, []string{"f.jsonl"}, false},
	{"extract-index-search", `$BS extract --store st --index idx.db --min-length 40 < in.jsonl > /dev/null; echo rc=$?; $BS search --index idx.db --json --limit 5 the; $BS search --index idx.db --limit 3 error`, nil, false},
	{"restore-id", `$BS extract --store st --no-index --keep-recent 0 --min-length 40 < in.jsonl > out.jsonl; id=$($BS extract --dry-run --no-index --keep-recent 0 --min-length 40 in.jsonl | grep -o '"entry_id":"[^"]*"' | head -1 | cut -d'"' -f4); echo "id=$id"; $BS restore --store st --id "$id" --result res.json < out.jsonl; echo rc=$?; cat res.json 2>/dev/null`, nil, false},
	{"gauge", `$BS gauge < in.jsonl; $BS gauge --json in.jsonl; $BS gauge --calibrate in.jsonl; $BS gauge --fail-above 0.01 in.jsonl`, nil, false},
	{"gauge-tokenizer", `$BS gauge --json --tokenizer o200k < in.jsonl`, nil, false},
	{"trim", `$BS trim --store st --no-index < in.jsonl`, nil, false},
	{"trim-aggressive", `$BS trim --store st --no-index --keep-last-assistants 1 --soft-trim-ratio 0 --hard-clear-ratio 0 --min-prunable-chars 0 --soft-max 100 --soft-head 20 --soft-tail 20 --context-window 1000 < in.jsonl > out.jsonl; echo rc=$?; cat out.jsonl; $BS restore --all --store st < out.jsonl | cmp - in.jsonl; $BS gauge --json < out.jsonl`, nil, false},
	{"trim-partial", `for w in 2000 20000 50000; do $BS trim --log-level info --store st --no-index --keep-last-assistants 1 --soft-trim-ratio 0.2 --hard-clear-ratio 0.4 --min-prunable-chars 0 --soft-max 300 --soft-head 50 --soft-tail 50 --context-window $w < in.jsonl 2>&1 | sed "s/time=[0-9TZ:.-]* //"; done`, nil, false},
	{"trim-lossy", `$BS trim --lossy --keep-last-assistants 1 --soft-trim-ratio 0 --hard-clear-ratio 0 --min-prunable-chars 0 --soft-max 100 --context-window 1000 < in.jsonl`, nil, false},
	{"roll", `$BS roll --store st --no-index < in.jsonl`, nil, false},
	{"roll-forced", `$BS roll --store st --no-index --trigger 0.01 --target 0.005 --min-keep 2 --context-window 2000 < in.jsonl > out.jsonl; echo rc=$?; cat out.jsonl; $BS restore --all --store st < out.jsonl | cmp - in.jsonl; $BS gauge --json < out.jsonl`, nil, false},
	{"roll-no-note", `$BS roll --store st --no-index --no-note --trigger 0.01 --target 0.005 --min-keep 4 --context-window 5000 < in.jsonl`, nil, false},
	{"archive", `$BS archive --store st --no-index --holders h --token-threshold 50 --tool-call-threshold 1 --keep-recent 0 < in.jsonl > out.jsonl; echo rc=$?; cat out.jsonl; ls h 2>/dev/null; $BS restore --all --store st < out.jsonl | cmp - in.jsonl; $BS gauge --json < out.jsonl; $BS archive list --store st < out.jsonl`, nil, false},
	{"archive-paragraph", `$BS archive --store st --no-index --summary-style paragraph --token-threshold 200 --keep-recent 1 < in.jsonl`, nil, false},
	{"checkpoint", `$BS checkpoint --force --dir cp --session-key k --notice < in.jsonl; echo rc=$?; cat cp/k/*.yaml; $BS checkpoint render --dir cp --session-key k`, nil, false},
	{"checkpoint-threshold", `$BS checkpoint --dir cp --threshold 0.01 --notice --notice-from 0.001 --context-window 1000 < in.jsonl; echo rc=$?; find cp -type f | sort`, nil, false},
	{"stats", `$BS stats < in.jsonl; $BS stats --json in.jsonl; $BS stats --chart in.jsonl`, nil, false},
	{"pipeline", `$BS extract --store st --no-index < in.jsonl | $BS trim --store st --no-index | $BS archive --store st --no-index --token-threshold 100 | $BS roll --store st --no-index --trigger 0.01 --target 0.005 --context-window 20000 > out.jsonl; echo rc=$?; $BS gauge --json < out.jsonl; $BS stats --json < out.jsonl; $BS restore --all --store st < out.jsonl | cmp - in.jsonl`, nil, false},
	{"format-generic", `$BS extract --format generic --store st --no-index --min-length 40 < in.jsonl; $BS gauge --format generic --json < in.jsonl`, nil, false},
	// The cases below exercise the command-line layer of the commands that
	// read or write beside the transcript: holders, checkpoints, the index,
	// retention, the store, the agent tools, watch and the configuration.
	// $p is the run directory, replaced by "." where a command prints
	// absolute paths; times of the clock (log records, file times) are cut.
	{"archive-show", `$BS archive --store st --no-index --holders h --token-threshold 50 --tool-call-threshold 1 --keep-recent 0 < in.jsonl > out.jsonl; $BS archive list --json --store st out.jsonl; id=$($BS archive list --json --store st < out.jsonl | head -1 | grep -o '"id":"[^"]*"' | cut -d'"' -f4); echo "id=$id"; $BS archive show --store st "$id" out.jsonl; echo "rc=$?"; $BS archive show --store st "$id" < out.jsonl > s.jsonl; echo "rc=$?"; cmp s.jsonl "h/$id.jsonl"; $BS archive show --holders h "$id" > s2.jsonl; echo "rc=$?"; cmp s2.jsonl "h/$id.jsonl"; $BS archive show --store st nosuch out.jsonl; echo "rc=$?"; $BS archive show --store st nosuch < out.jsonl; echo "rc=$?"; $BS archive show --holders h nosuch; echo "rc=$?"`, nil, false},
	{"archive-show-errors", `$BS archive show; echo "rc=$?"; $BS archive show --holders h ../x; echo "rc=$?"; $BS archive show --holders h a/b; echo "rc=$?"; $BS archive show --holders h; echo "rc=$?"; $BS archive show --store st --bogus x; echo "rc=$?"; $BS archive list --json --store st < in.jsonl; echo "rc=$?"`, nil, true},
	{"checkpoint-list", `$BS checkpoint --force --dir cp --session-key k < in.jsonl > /dev/null; $BS checkpoint --force --dir cp --session-key k --learning two < in.jsonl > /dev/null; $BS checkpoint --force --dir cp in.jsonl > /dev/null; echo "rc=$?"; $BS checkpoint list --dir cp; $BS checkpoint list --dir cp --json; $BS checkpoint list --dir cp --session-key k; $BS checkpoint list --dir cp --session-key k --json; $BS checkpoint list --dir cp in.jsonl; echo "rc=$?"; $BS checkpoint list --dir cp --session-key none; echo "rc=$?"`, nil, false},
	{"checkpoint-show", `$BS checkpoint --force --dir cp --session-key k < in.jsonl > /dev/null; $BS checkpoint --force --dir cp --session-key k --learning two < in.jsonl > /dev/null; $BS checkpoint show --dir cp --session-key k; echo "rc=$?"; $BS checkpoint show --dir cp --session-key k cp_001; echo "rc=$?"; $BS checkpoint show --dir cp cp/k/cp_002.yaml | cmp - cp/k/cp_002.yaml; $BS checkpoint show --dir cp --session-key k cp_009; echo "rc=$?"; $BS checkpoint show --dir cp --session-key none; echo "rc=$?"; $BS checkpoint show --dir cp in.jsonl; echo "rc=$?"; $BS checkpoint render --dir cp --session-key k cp_001; echo "rc=$?"; $BS checkpoint render --tokenizer chars4 --dir cp cp/k/cp_002.yaml; echo "rc=$?"`, nil, false},
	{"checkpoint-errors", `$BS checkpoint show --dir cp; echo "rc=$?"; $BS checkpoint show --dir cp a b c; echo "rc=$?"; $BS checkpoint show --dir cp nosuch.yaml; echo "rc=$?"; $BS checkpoint render --dir cp; echo "rc=$?"; $BS checkpoint render --tokenizer bogus --dir cp --session-key k; echo "rc=$?"; $BS checkpoint list --dir cp; echo "rc=$?"; $BS checkpoint list --dir cp --session-key k x --json; echo "rc=$?"; $BS checkpoint inject --dir cp a b; echo "rc=$?"; $BS checkpoint --trigger bogus --dir cp < in.jsonl; echo "rc=$?"; $BS checkpoint --keep -1 --dir cp < in.jsonl; echo "rc=$?"`, nil, true},
	{"checkpoint-inject", `$BS checkpoint --force --dir cp --session-key k < in.jsonl > /dev/null; $BS checkpoint inject --dir cp --session-key k < in.jsonl > a.jsonl; echo "rc=$?"; cmp a.jsonl in.jsonl; tail -n 2 a.jsonl; $BS checkpoint inject --dir cp --session-key none < in.jsonl > b.jsonl; echo "rc=$?"; cmp b.jsonl in.jsonl; $BS checkpoint inject --dir cp in.jsonl > c.jsonl; echo "rc=$?"; cmp c.jsonl in.jsonl`, nil, false},
	{"checkpoint-hook", `h() { printf '%s\n' "$1" > ev.json; shift; $BS checkpoint hook --dir cp --log-level info "$@" < ev.json 2> err; echo "rc=$?"; sed 's/time=[^ ]* //' err; }; h '{"hook_event_name":"PreCompact","session_id":"s1","transcript_path":"in.jsonl","trigger":"auto"}'; h '{"hook_event_name":"SessionStart","session_id":"s1","source":"compact"}'; h '{"hook_event_name":"SessionStart","session_id":"s1","transcript_path":"in.jsonl","source":"resume"}'; h '{"hook_event_name":"SessionStart","session_id":"s9","transcript_path":"new.jsonl","source":"startup"}'; h '{"hook_event_name":"SessionEnd","session_id":"s1","transcript_path":"in.jsonl"}'; h '{"hook_event_name":"Stop","session_id":"s1","transcript_path":"in.jsonl"}' --threshold 0.01; h '{"hook_event_name":"SubagentStop","session_id":"s3","transcript_path":"in.jsonl"}' --threshold 0.01 --keep 1; h '{"hook_event_name":"UserPromptSubmit","session_id":"s2","transcript_path":"in.jsonl"}' --threshold 0.05 --notice-from 0.01; h '{"hook_event_name":"Notification","session_id":"s1"}'; h '{"hook_event_name":"PreCompact","transcript_path":"in.jsonl"}' --session-key k; find cp -name '*.yaml' | sort; $BS checkpoint list --dir cp; $BS checkpoint list --dir cp --session-key s1 --json`, nil, false},
	{"checkpoint-hook-errors", `h() { printf '%s\n' "$1" > ev.json; shift; $BS checkpoint hook --dir cp "$@" < ev.json; echo "rc=$?"; }; h 'not json'; h ''; h '[1]'; h '{"session_id":"s1"}'; h '{"hook_event_name":"SessionStart"}'; h '{"hook_event_name":"PreCompact","session_id":"s1"}'; h '{"hook_event_name":"PreCompact","session_id":"s1","transcript_path":"missing.jsonl"}'; h '{"hook_event_name":"Stop","session_id":"s1","transcript_path":"in.jsonl"}' --threshold 0; h '{"hook_event_name":"Stop","session_id":"s1","transcript_path":"in.jsonl"}' --now yesterday; find cp -type f | sort`, nil, true},
	{"index-search", `$BS extract --store st --index idx.db --min-length 40 < in.jsonl > out.jsonl; echo "rc=$?"; p=$(pwd); $BS index --store st --index idx.db out.jsonl; echo "rc=$?"; $BS index --store st --index i2.db out.jsonl in.jsonl; echo "rc=$?"; $BS search --index i2.db --json --limit 5 the | sed "s#$p#.#g"; $BS search --index idx.db --limit 3 error | sed "s#$p#.#g"; $BS index --store st --index i3.db out.jsonl missing.jsonl; echo "rc=$?"`, nil, false},
	{"index-usage", `$BS index; echo "rc=$?"; $BS index --store st; echo "rc=$?"; $BS index --store missing --index i.db in.jsonl; echo "rc=$?"; ls`, nil, true},
	{"prune", `mkdir live; $BS extract --jobs 1 --store st --no-index --min-length 40 < in.jsonl > live/a.jsonl; $BS extract --jobs 1 --store st --no-index --min-length 40 --keep-recent 0 < in.jsonl > gone.jsonl; $BS index --store st --index idx.db live/a.jsonl gone.jsonl; $BS archive --store st --no-index --holders h --token-threshold 50 --tool-call-threshold 1 --keep-recent 0 < in.jsonl > gone2.jsonl; for i in 1 2 3; do $BS checkpoint --force --dir cp --session-key k --learning "$i" < in.jsonl > /dev/null; done; $BS store list --store st | wc -l; ls h 2>/dev/null | wc -l; $BS search --index idx.db --json --limit 1000 a | wc -l; $BS prune-retention --store st --index idx.db --sessions live --older-than 0 --now 2000-01-01T00:00:00Z --json; echo "rc=$?"; $BS prune-retention --store st --index idx.db --sessions live --older-than 0 --now 2099-01-01T00:00:00Z --checkpoint-dir cp --keep 1 --holders h --dry-run --json; echo "rc=$?"; $BS prune-retention --store st --index idx.db --sessions live --older-than 0 --now 2099-01-01T00:00:00Z --checkpoint-dir cp --keep 1 --holders h --json; echo "rc=$?"; $BS store list --store st | wc -l; ls h 2>/dev/null | wc -l; ls cp/k; $BS search --index idx.db --json --limit 1000 a | wc -l; $BS prune-retention --store st --index idx.db --sessions 'live/*.jsonl' --older-than 0 --now 2099-01-01T00:00:00Z; echo "rc=$?"; $BS restore --all --store st < live/a.jsonl | cmp - in.jsonl; $BS store verify --store st > /dev/null; echo "verify rc=$?"`, nil, false},
	{"prune-packed", `mkdir live; $BS extract --jobs 1 --store st --no-index --min-length 40 < in.jsonl > live/a.jsonl; $BS extract --jobs 1 --store st --no-index --min-length 40 --keep-recent 0 < in.jsonl > gone.jsonl; $BS store repack --store st > /dev/null; $BS prune-retention --store st --index idx.db --sessions live --older-than 0 --now 2099-01-01T00:00:00Z --rewrite-above 0.01 --json; echo "rc=$?"; $BS store stats --store st --json; $BS restore --all --store st < live/a.jsonl | cmp - in.jsonl`, nil, false},
	{"prune-usage", `mkdir live empty; $BS extract --store st --no-index --min-length 40 < in.jsonl > live/a.jsonl; p() { $BS prune-retention "$@"; echo "rc=$?"; }; p --store st; p --store st --sessions live extra; p --store st --sessions live --rewrite-above 0; p --store st --sessions live --rewrite-above 1.5; p --store st --sessions live --rewrite-above NaN; p --store st --sessions nomatch; p --store st --sessions 'nomatch/*.jsonl'; p --store st --sessions empty; p --store st --sessions '['; p --store st --sessions live --older-than -1s; p --store st --sessions live --keep -1; p --store st --sessions live --now yesterday; p --store missing --sessions live; ls`, nil, true},
	// A small store: its blobs loose, then packed. (Values repeated
	// across a pack boundary may be stored twice, depending on timing:
	// store-packed repacks, which keeps one copy, before it looks.)
	{"store-inspect", `$BS extract --jobs 1 --store st --no-index --min-length 40 < in.jsonl > out.jsonl; t='s/"time":"[^"]*"/"time":"T"/g; s/"pack":"[0-9a-f]*","offset":[0-9]*/"pack":"P","offset":0/g; s/ pack [0-9a-f]* @[0-9]*/ pack P @0/'; d=$($BS store list --store st | sort | head -1); echo "d=$d"; $BS store cat --store st "$d"; echo "rc=$?"; $BS store list --store st --long --json | sed "$t" | sort; $BS store list --store st -l | sed "$t" | sort; $BS store stats --store st --json; $BS store repack --store st --dry-run --json; echo "rc=$?"; $BS store repack --store st --json; echo "rc=$?"; $BS store list --store st --long --json | sed "$t" | sort; $BS store list --store st --long | sed "$t" | sort; $BS store cat --store st "$d" | md5sum; $BS store verify --store st --json; echo "rc=$?"; $BS store stats --store st --json; $BS store repack --store st --dry-run --json`, nil, true},
	{"store-packed", `$BS extract --jobs 1 --store st --no-index --min-length 40 < in.jsonl > out.jsonl; $BS extract --jobs 1 --store st --no-index --min-length 40 --keep-recent 0 < in.jsonl > out2.jsonl; t='s/"time":"[^"]*"/"time":"T"/g; s/"pack":"[0-9a-f]*","offset":[0-9]*/"pack":"P","offset":0/g; s/ pack [0-9a-f]* @[0-9]*/ pack P @0/'; $BS store repack --store st --json > /dev/null; echo "rc=$?"; $BS store stats --store st --json; $BS store verify --store st --json; echo "rc=$?"; $BS store list --store st | sort | md5sum; $BS store list --store st --long --json | sed "$t" | sort | md5sum; $BS store list --store st -l | sed "$t" | sort | tail -n 3; d=$($BS store list --store st | sort | tail -n 1); $BS store cat --store st "$d" | md5sum; $BS store repack --store st --dry-run --json; $BS restore --all --store st < out2.jsonl | cmp - in.jsonl`, nil, false},
	{"store-usage", `$BS extract --store st --no-index --min-length 40 < in.jsonl > /dev/null; s() { $BS store "$@"; echo "rc=$?"; }; s cat --store st; s cat --store st a b; s cat --store st sha256:zz; s cat --store st sha256:0000000000000000000000000000000000000000000000000000000000000000; s nosuch; s stats --store missing-dir; s verify --store missing-dir --json; s list --store missing-dir; s cat --store missing-dir sha256:0000000000000000000000000000000000000000000000000000000000000000; s list --store st extra; s verify --store st --jobs 0; s repack --store st --small 0; s stats --store st --bogus; ls`, nil, true},
	{"tool", `$BS extract --store st --index idx.db --min-length 40 --keep-recent 0 < in.jsonl > s.jsonl; p=$(pwd); t() { printf '%s\n' "$1" > call.json; $BS tool --store st --index idx.db --checkpoint-dir cp --session s.jsonl --quiet-period 0 < call.json > res.json; echo "rc=$?"; sed "s#$p#.#g" res.json; }; id=$($BS extract --dry-run --no-index --keep-recent 0 --min-length 40 in.jsonl | grep -o '"entry_id":"[^"]*"' | head -1 | cut -d'"' -f4); echo "id=$id"; t '{"type":"tool_call","name":"purge_control","arguments":{"action":"get_context"}}'; t '{"type":"tool_call","name":"restore","arguments":{"entry_id":"'"$id"'"}}'; t '{"name":"purge_control","arguments":{"action":"set_extractable","entry_id":"'"$id"'","value":false}}'; t '{"name":"search","arguments":{"query":"the","limit":2}}'; t '{"name":"checkpoint","arguments":{}}'; $BS checkpoint --force --dir cp < s.jsonl > /dev/null; t '{"name":"checkpoint"}'; t '{"name":"restore","arguments":{"entry_id":"nosuch"}}'; t '{"name":"purge_control","arguments":{"action":"restore","entry":"'"$id"'"}}'`, []string{"s.jsonl"}, false},
	{"tool-errors", `t() { printf '%s\n' "$1" | $BS tool --store st --session in.jsonl; echo "rc=$?"; }; t 'not json'; t ''; t '[1]'; t '{"type":"x","name":"restore"}'; t '{"arguments":{}}'; t '{"name":"nosuch"}'; t '{"name":"purge_control","arguments":{"action":"bogus"}}'; t '{"name":"restore","arguments":"x"}'; t '{"name":"search","arguments":{"query":"x"}}'; $BS tool < /dev/null; echo "rc=$?"; $BS tool --session missing.jsonl < /dev/null; echo "rc=$?"; $BS tool --session in.jsonl --sessions-dir . < /dev/null; echo "rc=$?"; $BS tool --sessions-dir nodir < /dev/null; echo "rc=$?"; $BS tool --session in.jsonl extra < /dev/null; echo "rc=$?"; $BS tool --session . < /dev/null; echo "rc=$?"`, nil, true},
	{"mcp", `$BS extract --store st --index idx.db --min-length 40 --keep-recent 0 < in.jsonl > f.jsonl; p=$(pwd); printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"difftest","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"purge_control","arguments":{"action":"get_context"}}}' 'not json' '[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]' '{"jsonrpc":"1.0","id":5,"method":"tools/list"}' '{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}' '42' '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"restore","arguments":{"entry_id":"nosuch"}}}' '{"jsonrpc":"2.0","id":"seven","method":"nosuch/method"}' > rpc.jsonl; $BS mcp --store st --index idx.db --session f.jsonl --quiet-period 0 < rpc.jsonl > out.jsonl; echo "rc=$?"; sed "s#$p#.#g" out.jsonl | sort`, nil, false},
	{"mcp-restore", `$BS extract --store st --index idx.db --min-length 40 --keep-recent 0 < in.jsonl > f.jsonl; id=$($BS extract --dry-run --no-index --keep-recent 0 --min-length 40 in.jsonl | grep -o '"entry_id":"[^"]*"' | head -1 | cut -d'"' -f4); echo "id=$id"; printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"difftest","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"restore","arguments":{"entry_id":"'"$id"'"}}}' > rpc.jsonl; $BS mcp --store st --index idx.db --session f.jsonl --quiet-period 0 < rpc.jsonl > out.jsonl; echo "rc=$?"; sort out.jsonl`, []string{"f.jsonl"}, false},
	{"mcp-sessions-dir", `mkdir d; cp in.jsonl d/a.jsonl; p=$(pwd); printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"difftest","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"purge_control","arguments":{"action":"get_context","session":"a.jsonl"}}}' '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"checkpoint","arguments":{}}}' '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}' > rpc.jsonl; $BS mcp --store st --index idx.db --sessions-dir d < rpc.jsonl > out.jsonl; echo "rc=$?"; sed "s#$p#.#g" out.jsonl | sort; $BS mcp < /dev/null; echo "rc=$?"; $BS mcp --session missing.jsonl < /dev/null; echo "rc=$?"; $BS mcp --session in.jsonl --log-level bogus < /dev/null; echo "rc=$?"`, nil, true},
	{"watch", `mkdir d; cp in.jsonl d/a.jsonl; touch -d 2026-01-01T00:00:00Z d/a.jsonl; p=$(pwd); t='s/time=[^ ]* //; s/ took=[^ ]*//; s/"mtime": "[^"]*"/"mtime": "T"/; s/"inode": [0-9]*/"inode": 0/'; $BS watch --once --state ws.json d -- extract --store st --no-index --min-length 40 2> err; echo "rc=$?"; sed "$t; s#$p#.#g" err; sed "$t; s#$p#.#g" ws.json; $BS restore --all --store st < d/a.jsonl | cmp - in.jsonl; $BS watch --once --state ws.json d -- extract --store st --no-index --min-length 40 2> err; echo "rc=$?"; sed "$t; s#$p#.#g" err; touch -d 2026-01-01T00:00:00Z d/a.jsonl; $BS watch --once --state ws2.json --log-level warn d -- restore --all --store st; echo "rc=$?"; cmp d/a.jsonl in.jsonl`, []string{"d/a.jsonl"}, false},
	{"watch-usage", `mkdir d; w() { $BS watch "$@"; echo "rc=$?"; }; w --once d; w --once d --; w --once -- extract; w --once d -- gauge; w --once d -- nosuch; w --once d -- extract --bogus; w --once d -- extract --min-length -1; w --once d -- extract --rule '.['; w --once d -- extract --format nosuch; w --once --interval 0 d -- extract; w --once --retention -1s d -- extract; w --once --state ws.json missing -- extract --store st --no-index; w --once --log-level bogus d -- extract; w --once --state ws.json '[' -- extract; ls`, nil, true},
	{"config", `printf '%s\n' '# difftest' 'min_value_length: 40' 'keep_recent: 0' 'store: st' 'retention: 1h' 'scan_interval_seconds: 5' 'extract:' '  no-index: true' 'gauge:' '  context-window: 100000' 'trim:' '  deny: ["*image*", "x"]' > cfg.yaml; $BS --config cfg.yaml config show; echo "rc=$?"; $BS --config cfg.yaml config show --json; BS_CONFIG=cfg.yaml $BS config show | md5sum; BS_CONFIG=cfg.yaml $BS extract < in.jsonl > a.jsonl; echo "rc=$?"; $BS extract --store st2 --no-index --min-length 40 --keep-recent 0 < in.jsonl | cmp - a.jsonl; $BS --config cfg.yaml gauge --json in.jsonl; $BS --config cfg.yaml gauge --json --context-window 5000 in.jsonl; BS_CONFIG=cfg.yaml $BS extract --min-length 100000 --store st3 < in.jsonl | cmp - in.jsonl; ls; mkdir -p home/config/bs; printf '%s\n' 'gauge:' '  context-window: 1000' > home/config/bs/config.yaml; $BS gauge --json in.jsonl; $BS config show --json | grep -v '"source":"default"' | sed "s#$(pwd)#.#g"`, nil, true},
	{"config-errors", `c() { printf '%s\n' "$@" > bad.yaml; $BS --config bad.yaml config show > /dev/null; echo "rc=$?"; }; c 'nosuch: 1'; c 'min_value_length: abc'; c 'extract:' '  bogus: 1'; c 'extract:' '  dry-run: true'; c 'extract:' '  min-length: [1, 2]'; c 'gauge:' '  context-window: 1.5'; c 'scan_interval_seconds: x'; c 'retention: 3'; c '- a'; c 'a: ['; c 'extract:' '  strict: maybe'; c 'trim:' '  deny: [[1]]'; c 'store: {a: 1}'; c ''; $BS --config missing.yaml config show; echo "rc=$?"; printf '%s\n' 'nosuch: 1' > bad.yaml; $BS --config bad.yaml extract < in.jsonl; echo "rc=$?"; BS_CONFIG=bad.yaml $BS gauge in.jsonl; echo "rc=$?"; $BS config show extra > o.txt; echo "rc=$?"; wc -l < o.txt`, nil, true},
	{"stats-exact", `$BS extract --store st --no-index --min-length 40 < in.jsonl > out.jsonl; $BS stats --exact --store st < out.jsonl; echo "rc=$?"; $BS stats --exact --json --store st out.jsonl; echo "rc=$?"; $BS extract --store other --no-index --min-length 40 < in.jsonl > /dev/null; $BS stats --exact --json --store empty out.jsonl > /dev/null; echo "rc=$?"; ls`, nil, false},
	{"restore-set-extractable", `$BS extract --store st --no-index --min-length 40 < in.jsonl > out.jsonl; id=$($BS extract --dry-run --no-index --keep-recent 0 --min-length 40 in.jsonl | grep -o '"entry_id":"[^"]*"' | head -1 | cut -d'"' -f4); echo "id=$id"; $BS restore --store st --set-extractable "$id=false" < out.jsonl > a.jsonl; echo "rc=$?"; $BS restore --store st --set-extractable "$id=3" out.jsonl > b.jsonl; echo "rc=$?"; $BS restore --store st --set-extractable "$id=true" < a.jsonl > c.jsonl; echo "rc=$?"; $BS restore --store st --set-extractable nosuch=false < out.jsonl > d.jsonl; echo "rc=$?"; cmp d.jsonl out.jsonl; $BS extract --store st --no-index --min-length 40 --keep-recent 0 < a.jsonl | $BS gauge --json`, []string{"a.jsonl", "b.jsonl", "c.jsonl"}, false},
	{"restore-usage", `r() { $BS restore --store st "$@" < in.jsonl > /dev/null; echo "rc=$?"; }; r --set-extractable x=maybe; r --set-extractable noequals; r --set-extractable =false; r --set-extractable x=-1; r --keys /x; r --keys /x --all; r; r --id x --keys content`, nil, true},
	{"gauge-tee", `$BS gauge --tee < in.jsonl > a.jsonl; echo "rc=$?"; cmp a.jsonl in.jsonl; $BS gauge --tee --json in.jsonl > b.jsonl; echo "rc=$?"; cmp b.jsonl in.jsonl; $BS gauge --tee --fail-above 0.01 in.jsonl > c.jsonl; echo "rc=$?"; cmp c.jsonl in.jsonl; $BS gauge --tee --context-window 1000 --json < in.jsonl | cmp - in.jsonl`, nil, false},
}

func main() {
	oldBin := flag.String("old", "", "the bs binary before the change")
	newBin := flag.String("new", "", "the bs binary after the change")
	n := flag.Int("n", 200, "how many generated transcripts (besides the corpus files)")
	seed := flag.Uint64("seed", 1, "random seed of the generated transcripts")
	corpus := flag.String("corpus", "../shared/corpus", "the corpus of real transcripts")
	only := flag.String("case", "", "run only the cases whose name contains this")
	jobs := flag.Int("j", 2, "inputs compared at once")
	work := flag.String("work", "", "work directory (default: a new temporary one, removed at the end)")
	show := flag.Bool("show", false, "print what the old binary produced for every case (to check the cases exercise something)")
	flag.Parse()
	if *oldBin == "" || *newBin == "" {
		fmt.Fprintln(os.Stderr, "difftest: -old and -new are required")
		os.Exit(2)
	}
	for _, p := range []*string{oldBin, newBin} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			fatal(err)
		}
		*p = abs
	}

	seeds, err := filepath.Glob(filepath.Join(*corpus, "*", "*.jsonl"))
	if err != nil || len(seeds) == 0 {
		fatal(fmt.Errorf("no corpus transcripts under %s", *corpus))
	}
	sort.Strings(seeds)
	type input struct {
		name string
		data []byte
	}
	var inputs []input
	var lines [][][]byte
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			fatal(err)
		}
		inputs = append(inputs, input{strings.TrimPrefix(s, *corpus+"/"), b})
		lines = append(lines, splitLines(b))
	}
	rng := rand.New(rand.NewPCG(*seed, 7))
	for i := range *n {
		k := rng.IntN(len(seeds))
		inputs = append(inputs, input{fmt.Sprintf("gen-%04d(%s)", i, filepath.Base(seeds[k])), generate(rng, lines[k])})
	}

	dir := *work
	if dir == "" {
		dir, err = os.MkdirTemp("", "difftest")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(dir)
	}

	var (
		mu               sync.Mutex
		ran, differ, idx atomic.Int64
		wg               sync.WaitGroup
	)
	for w := range *jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run := filepath.Join(dir, fmt.Sprintf("w%d", w))
			for {
				i := int(idx.Add(1)) - 1
				if i >= len(inputs) {
					return
				}
				in := inputs[i]
				for _, c := range cases {
					if c.once && i > 0 {
						continue
					}
					if *only != "" && !strings.Contains(c.name, *only) {
						continue
					}
					a := runCase(run, *oldBin, c.script, c.after, in.data)
					b := runCase(run, *newBin, c.script, c.after, in.data)
					ran.Add(1)
					if *show {
						mu.Lock()
						fmt.Printf("=== %s %s\n%.2000s\n", in.name, c.name, a)
						mu.Unlock()
					}
					if a != b {
						differ.Add(1)
						mu.Lock()
						fmt.Printf("DIFF %s %s\n%s\n", in.name, c.name, firstDifference(a, b))
						if *work != "" {
							name := strings.NewReplacer("/", "_", "(", "_", ")", "").Replace(in.name)
							_ = os.WriteFile(filepath.Join(dir, name+".jsonl"), in.data, 0o644)
						}
						mu.Unlock()
					}
				}
			}
		}()
	}
	wg.Wait()
	fmt.Printf("difftest: %d inputs (%d corpus, %d generated), %d runs, %d differ\n", len(inputs), len(seeds), *n, ran.Load(), differ.Load())
	if differ.Load() > 0 {
		os.Exit(1)
	}
}

// runCase runs one script with one binary in a fresh directory at run and
// returns everything it produced as one text.
func runCase(run, bin, script string, after []string, in []byte) string {
	if err := os.RemoveAll(run); err != nil {
		fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(run, "home"), 0o755); err != nil {
		fatal(err)
	}
	if err := os.WriteFile(filepath.Join(run, "in.jsonl"), in, 0o644); err != nil {
		fatal(err)
	}
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = run
	cmd.Env = []string{
		"BS=" + bin,
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + filepath.Join(run, "home"),
		"XDG_CONFIG_HOME=" + filepath.Join(run, "home", "config"),
		"XDG_DATA_HOME=" + filepath.Join(run, "home", "data"),
		"XDG_STATE_HOME=" + filepath.Join(run, "home", "state"),
		"BS_NOW=2026-11-27T12:00:00Z",
		"TZ=UTC",
		"LANG=C.UTF-8",
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		fatal(err)
	}
	var out strings.Builder
	fmt.Fprintf(&out, "exit %d\n--- stdout\n%s\n--- stderr\n%s\n", code, stdout.Bytes(), stderr.Bytes())
	for _, f := range after {
		b, err := os.ReadFile(filepath.Join(run, f))
		fmt.Fprintf(&out, "--- %s (%v)\n%s\n", f, err, b)
	}
	return out.String()
}

// generate makes a transcript from a real one's lines: a run of them (the
// first line kept when it is a session header), some dropped or repeated,
// and a few of the changes real files show or bad input brings.
func generate(rng *rand.Rand, lines [][]byte) []byte {
	start := 0
	if len(lines) > 1 && rng.IntN(3) > 0 {
		start = 1 + rng.IntN(len(lines)-1)
	}
	end := start + 1 + rng.IntN(min(len(lines)-start, 120))
	var out [][]byte
	if start > 0 && rng.IntN(2) == 0 {
		out = append(out, lines[0])
	}
	for _, l := range lines[start:end] {
		switch rng.IntN(20) {
		case 0: // dropped
			continue
		case 1: // repeated
			out = append(out, l, l)
			continue
		case 2, 3: // text long enough to move, trim or evict
			l = lengthen(rng, l)
		}
		out = append(out, l)
	}
	if len(out) == 0 {
		out = append(out, lines[0])
	}
	switch rng.IntN(12) {
	case 0: // a line cut short, as a crash mid-write leaves it
		i := rng.IntN(len(out))
		out[i] = append([]byte(nil), out[i][:len(out[i])/2]...)
	case 1:
		i := rng.IntN(len(out) + 1)
		out = append(out[:i], append([][]byte{{}}, out[i:]...)...)
	case 2:
		out = append(out, []byte("not json at all"))
	}
	sep := []byte("\n")
	if rng.IntN(25) == 0 {
		sep = []byte("\r\n")
	}
	b := bytes.Join(out, sep)
	if rng.IntN(10) > 0 {
		b = append(b, sep...)
	}
	return b
}

// lengthen repeats words inside the line's first string value of some
// length, so the line stays valid JSON with the same keys.
func lengthen(rng *rand.Rand, l []byte) []byte {
	for _, key := range [][]byte{[]byte(`"text":"`), []byte(`"content":"`), []byte(`"output":"`), []byte(`"thinking":"`), []byte(`"arguments":"`)} {
		i := bytes.Index(l, key)
		if i < 0 {
			continue
		}
		i += len(key)
		pad := strings.Repeat("lorem ipsum dolor sit amet ", 10+rng.IntN(400))
		out := make([]byte, 0, len(l)+len(pad))
		out = append(out, l[:i]...)
		out = append(out, pad...)
		return append(out, l[i:]...)
	}
	return l
}

func splitLines(b []byte) [][]byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.Split(b, []byte("\n"))
}

// firstDifference shows the two outputs from the first line where they part.
func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) || i < len(bl); i++ {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("  line %d\n  old: %.300s\n  new: %.300s", i+1, x, y)
		}
	}
	return "  (same lines, different length)"
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "difftest:", err)
	os.Exit(1)
}
