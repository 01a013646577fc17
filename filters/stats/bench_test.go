package stats

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
)

// benchSession builds an OpenClaw session of about n bytes shaped like
// scripts/benchgen's: turns of a user message, an assistant message with
// thinking and a tool call, a tool result of 1–16 KiB, and an answer.
func benchSession(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"bench","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	line := `src/store.go:42: func (s *Store) Put(ctx context.Context, data []byte) error {\n`
	for i := 0; b.Len() < n; i++ {
		out := strings.Repeat(line, 12+(i*37)%200)
		fmt.Fprintf(&b, `{"type":"message","id":"u%d","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"look at store %d and tell me what Put does"}]}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"message","id":"c%d","parentId":"u%d","timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"%s","thinkingSignature":"sig"},{"type":"toolCall","id":"t%d","name":"read","arguments":{"path":"/src/store%d.go"}}],"stopReason":"toolUse"}}`+"\n", i, i, strings.Repeat("I should read the file first. ", 10+i%40), i, i%50)
		fmt.Fprintf(&b, `{"type":"message","id":"r%d","parentId":"c%d","timestamp":"2026-03-08T12:00:02.000Z","message":{"role":"toolResult","toolCallId":"t%d","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false}}`+"\n", i, i, i, out)
		fmt.Fprintf(&b, `{"type":"message","id":"a%d","parentId":"r%d","timestamp":"2026-03-08T12:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Store %d looks fine."}],"stopReason":"stop"}}`+"\n", i, i, i)
	}
	return b.Bytes()
}

// BenchmarkStats measures bs stats on a 32 MiB session, or on the file
// named by $BS_STATS_BENCH (for example scripts/benchgen's output): the
// breakdown alone, and with extract's planner run beside it (the default
// of the command).
func BenchmarkStats(b *testing.B) {
	in := benchSession(32 << 20)
	if path := os.Getenv("BS_STATS_BENCH"); path != "" {
		var err error
		if in, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
	for _, mode := range []string{"breakdown", "would-free"} {
		b.Run(mode, func(b *testing.B) {
			opt := Options{}
			if mode == "would-free" {
				opt.Plan = plan()
			}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				r, err := Run(context.Background(), "bench", bytes.NewReader(in), opt)
				if err != nil {
					b.Fatal(err)
				}
				if r.Tokens == 0 {
					b.Fatal("no tokens")
				}
			}
		})
	}
}
