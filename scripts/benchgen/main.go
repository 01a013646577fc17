// Command benchgen writes a synthetic OpenClaw v3 session of a given size
// for benchmarks: user turns, assistant turns with thinking and tool calls,
// and tool results whose sizes follow the spread seen in the real corpus
// (most under 16 KB, a tail up to 120 KB). Every tool result is unique, so
// deduplication does not flatter the store.
//
//	go run ./scripts/benchgen -size 256MiB > session.jsonl
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

var words = strings.Fields(`the of and to in is that for it as with was on be by this are from at or
an not have has func return err nil if else struct type package import string int byte slice map
range go defer chan select case default interface error fmt println test build run file line read
write open close path dir json yaml http server client request response status header body value
key index count total bytes lines result output input config option flag main cmd filter store blob`)

func main() {
	sizeFlag := flag.String("size", "256MiB", "approximate output size (KiB, MiB, GiB suffixes)")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	size, err := parseSize(*sizeFlag)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchgen:", err)
		os.Exit(2)
	}
	rng := rand.New(rand.NewPCG(*seed, 2))
	pool := textPool(rng, 4<<20)
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer w.Flush()

	t0 := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	fmt.Fprintf(w, `{"type":"session","version":3,"id":"bench-0000-4000-8000-000000000000","timestamp":"%s","cwd":"/home/user/project"}`+"\n", t0.Format(time.RFC3339Nano))
	written, n, parent := 0, 0, "null"
	emit := func(msg string) {
		n++
		id := fmt.Sprintf("%08x", n)
		ts := t0.Add(time.Duration(n) * time.Second)
		line := fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"%s","message":%s}`+"\n", id, parent, ts.Format("2006-01-02T15:04:05.000Z"), msg)
		parent = strconv.Quote(id)
		written += len(line)
		w.WriteString(line)
	}
	// slice cuts k bytes of the pool at spaces, so no escape is split.
	slice := func(k int) string {
		start := rng.IntN(len(pool) - k - 64)
		start += strings.IndexByte(pool[start:], ' ') + 1
		end := start + k
		end += strings.IndexByte(pool[end:], ' ')
		return pool[start:end]
	}
	for written < size {
		emit(fmt.Sprintf(`{"role":"user","content":[{"type":"text","text":"step %d: %s"}],"timestamp":%d}`, n, slice(60+rng.IntN(200)), 1772971200000+n))
		calls := 1 + rng.IntN(3)
		for c := 0; c < calls && written < size; c++ {
			call := fmt.Sprintf("call_%d_%d", n, c)
			emit(fmt.Sprintf(`{"role":"assistant","content":[{"type":"thinking","thinking":"%s","thinkingSignature":"sig%d"},{"type":"toolCall","id":"%s","name":"bash","arguments":{"command":"grep -rn %s ."}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":120,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0.003,"output":0.0018,"cacheRead":0,"cacheWrite":0,"total":0.024485299999999998}},"stopReason":"toolUse","timestamp":%d}`,
				slice(200+rng.IntN(2800)), n, call, slice(12), 1000+n, 1120+n, 1772971200000+n))
			emit(fmt.Sprintf(`{"role":"toolResult","toolCallId":"%s","toolName":"bash","content":[{"type":"text","text":"result %d\n%s"}],"isError":false,"timestamp":%d}`,
				call, n, slice(resultSize(rng)), 1772971200000+n))
		}
		emit(fmt.Sprintf(`{"role":"assistant","content":[{"type":"text","text":"%s"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":80,"cacheRead":0,"cacheWrite":0,"totalTokens":%d,"cost":{"input":0.003,"output":0.0012,"cacheRead":0,"cacheWrite":0,"total":0.0042}},"stopReason":"stop","timestamp":%d}`,
			slice(80+rng.IntN(400)), 2000+n, 2080+n, 1772971200000+n))
	}
}

// resultSize draws a tool result size: 40% small, 45% medium, 15% large.
func resultSize(rng *rand.Rand) int {
	switch p := rng.IntN(100); {
	case p < 40:
		return 100 + rng.IntN(1400)
	case p < 85:
		return 1500 + rng.IntN(14500)
	default:
		return 16000 + rng.IntN(104000)
	}
}

// textPool returns JSON-string-safe text (already escaped) built from words,
// with escaped newlines, tabs and quotes as tool output has them.
func textPool(rng *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		switch rng.IntN(12) {
		case 0:
			b.WriteString(`\n `)
		case 1:
			b.WriteString(`\t `)
		case 2:
			b.WriteString(`\"quoted\" `)
		default:
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func parseSize(s string) (int, error) {
	mult := 1
	for suffix, m := range map[string]int{"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30} {
		if strings.HasSuffix(s, suffix) {
			s, mult = strings.TrimSuffix(s, suffix), m
		}
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}
