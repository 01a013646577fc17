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
