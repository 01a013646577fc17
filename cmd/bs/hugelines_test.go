package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bstools/bs/internal/hugemem"
)

// hugeLineSize is the length of the huge lines TestHugeLines writes: 4 MiB
// by default (longer than every buffer bs reuses), the 100 MiB of real
// Claude Code files with BS_STRESS=full, or BS_STRESS_HUGE_MIB.
func hugeLineSize() int {
	size := 4 << 20
	if os.Getenv("BS_STRESS") == "full" {
		size = 100 << 20
	}
	if n, err := strconv.Atoi(os.Getenv("BS_STRESS_HUGE_MIB")); err == nil {
		size = n << 20
	}
	return size
}

// TestHugeLines: a session with two huge tool results, each with messages
// after it, goes through every filter and back byte for byte; extract
// moves the huge values (the ones most worth moving) rather than keeping
// them. Each command's peak memory is logged beside the longest line
// (go test -v), for the performance table. The text is random letters,
// which compress to about 60% and so go into packs, and a repeated
// passage, which compresses to a few KiB and so is stored as a loose blob
// (restore reads that as a stream too).
func TestHugeLines(t *testing.T) {
	for _, text := range []struct {
		name  string
		loose bool // the huge values are stored as loose blobs
		fill  func(rng *rand.Rand, p []byte)
	}{
		{"random", false, func(rng *rand.Rand, p []byte) {
			for j := range p {
				p[j] = "abcdefghijklmnopqrstuvwxyz .,"[rng.IntN(29)]
			}
		}},
		{"repeated", true, func(_ *rand.Rand, p []byte) {
			for j := range p {
				p[j] = "the same passage, read again and again "[j%39]
			}
		}},
	} {
		t.Run(text.name, func(t *testing.T) { testHugeLines(t, text.loose, text.fill) })
	}
}

func testHugeLines(t *testing.T, loose bool, fill func(rng *rand.Rand, p []byte)) {
	size := hugeLineSize()
	dir := t.TempDir()
	in := filepath.Join(dir, "huge.jsonl")
	writeHugeSession(t, in, size, fill)
	bin := bsBinary(t)
	store := filepath.Join(dir, "store")
	// run runs bs with its output to the file out. Peak memory is read
	// from the process's rusage, which on Linux counts the test process as
	// it was when bs started (exec keeps the high-water mark of the fork):
	// the test keeps no session in memory, so that stays small.
	run := func(out string, args ...string) {
		t.Helper()
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cmd := exec.Command(bin, args...)
		cmd.Env = bsEnv(dir)
		var errs bytes.Buffer
		cmd.Stdout, cmd.Stderr = f, &errs
		if err := cmd.Run(); err != nil {
			t.Fatalf("bs %s: %v\n%s", strings.Join(args, " "), err, errs.Bytes())
		}
		if strings.Contains(errs.String(), "kept") {
			t.Errorf("bs %s left a value in place: %s", args[0], errs.Bytes())
		}
		peak := peakRSS(cmd.ProcessState)
		t.Logf("%-8s peak %4d MiB (longest line %d MiB)", args[0], peak>>20, size>>20)
		// Under the full stress run only (a bound on memory is no unit
		// test): every command within the 64 MiB the soft limit allows
		// beside the longest line and one copy of it (hugemem.Make makes
		// huge buffers one at a time), with half a copy to spare for what
		// the runtime has not yet given back: a command that holds two
		// copies (a line stored while the next is read; extract once
		// kept a spilled line alive through an empty slice of it) fails.
		if bound := int64(hugemem.Base + size + size/2); os.Getenv("BS_STRESS") == "full" && size >= hugemem.Huge && peak > bound {
			t.Errorf("bs %s peaked at %d MiB with lines of %d MiB: more than %d MiB", args[0], peak>>20, size>>20, bound>>20)
		}
	}
	want := fileSum(t, in)
	back := func(name string, args ...string) {
		t.Helper()
		out := filepath.Join(dir, name+".jsonl")
		run(out, append(args, in)...)
		restored := filepath.Join(dir, name+".restored.jsonl")
		run(restored, "restore", "--all", "--store", store, out)
		if fileSum(t, restored) != want {
			t.Errorf("restore --all after %s did not give the session back", name)
		}
	}
	back("extract", "extract", "--no-index", "--store", store)
	if info, err := os.Stat(filepath.Join(dir, "extract.jsonl")); err != nil || info.Size() > int64(size) {
		t.Errorf("extract left the huge values in place (%v)", err)
	}
	if blobs, _ := filepath.Glob(filepath.Join(store, "blobs", "*", "*")); (len(blobs) > 0) != loose {
		t.Errorf("extract stored %d loose blobs; want them loose: %v", len(blobs), loose)
	}
	back("trim", "trim", "--no-index", "--store", store)
	back("archive", "archive", "--no-index", "--store", store, "--token-threshold", "1000")
	back("roll", "roll", "--no-index", "--store", store, "--trigger", "0.01", "--target", "0.005", "--min-keep", "2")
	run(filepath.Join(dir, "stats.txt"), "stats", in)
	run(filepath.Join(dir, "gauge.txt"), "gauge", in)
}

// fileSum is the SHA-256 of a file, read in pieces.
func fileSum(t *testing.T, path string) [sha256.Size]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// writeHugeSession writes a pi session with two tool results of size
// bytes of text made by fill, each followed by the messages that let it
// move. The text is written in pieces: the test process stays small (see
// run).
func writeHugeSession(t *testing.T, path string, size int, fill func(rng *rand.Rand, p []byte)) {
	file, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f := bufio.NewWriter(file)
	defer f.Flush()
	rng := rand.New(rand.NewPCG(uint64(size), 1))
	piece := make([]byte, 64<<10)
	text := func() {
		for left := size; left > 0; left -= len(piece) {
			p := piece[:min(left, len(piece))]
			fill(rng, p)
			f.Write(p)
		}
	}
	fmt.Fprintln(f, `{"type":"session","version":3,"id":"huge","timestamp":"2026-02-20T10:00:00.000Z","cwd":"/"}`)
	parent, n := "null", 0
	begin := func() {
		n++
		fmt.Fprintf(f, `{"type":"message","id":"e%d","parentId":%s,"timestamp":"2026-02-20T10:00:%02d.000Z","message":`, n, parent, n)
	}
	end := func() {
		fmt.Fprintln(f, "}")
		parent = fmt.Sprintf(`"e%d"`, n)
	}
	entry := func(format string, args ...any) {
		begin()
		fmt.Fprintf(f, format, args...)
		end()
	}
	usage := `"usage":{"input":5,"output":10,"cacheRead":60000,"cacheWrite":0,"totalTokens":60015}`
	for i := range 2 {
		entry(`{"role":"user","content":[{"type":"text","text":"read file %d"}],"timestamp":1}`, i)
		entry(`{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"read","arguments":{"path":"/f%d"}}],"provider":"anthropic","model":"claude-sonnet-4-5",%s,"stopReason":"toolUse","timestamp":1}`, i, i, usage)
		begin()
		fmt.Fprintf(f, `{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"`, i)
		text()
		fmt.Fprint(f, `"}],"isError":false,"timestamp":1}`)
		end()
		for k := range 3 {
			entry(`{"role":"user","content":[{"type":"text","text":"and then %d"}],"timestamp":1}`, k)
			entry(`{"role":"assistant","content":[{"type":"text","text":"done %d"}],"provider":"anthropic","model":"claude-sonnet-4-5",%s,"stopReason":"stop","timestamp":1}`, k, usage)
		}
	}
}
