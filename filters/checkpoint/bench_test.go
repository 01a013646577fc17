package checkpoint

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// benchTurns builds an OpenClaw session of about n bytes in turns of a user
// message, a tool call, a 6 KiB tool result and an answer.
func benchTurns(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"bench","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	output := strings.Repeat(`src/store.go:42: func (s *Store) Put(ctx context.Context) error {\n`, 90)
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"type":"message","id":"u%d","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":"look at store %d"}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"message","id":"c%d","parentId":"u%d","timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"t%d","name":"read","arguments":{"path":"/src/store%d.go"}}],"usage":{"input":1000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":1010},"stopReason":"toolUse"}}`+"\n", i, i, i, i%50)
		fmt.Fprintf(&b, `{"type":"message","id":"r%d","parentId":"c%d","timestamp":"2026-03-08T12:00:02.000Z","message":{"role":"toolResult","toolCallId":"t%d","toolName":"read","content":[{"type":"text","text":"%s"}],"isError":false}}`+"\n", i, i, i, output)
		fmt.Fprintf(&b, `{"type":"message","id":"a%d","parentId":"r%d","timestamp":"2026-03-08T12:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"Store %d looks fine."}],"usage":{"input":3000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":3010},"stopReason":"stop"}}`+"\n", i, i, i)
	}
	return b.Bytes()
}

// BenchmarkObserve measures the tap's pass over the stream: every line
// parsed and passed through, the working state observed.
func BenchmarkObserve(b *testing.B) {
	in := benchTurns(16 << 20)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := observe("bench", bytes.NewReader(in), io.Discard, transcript.Unknown, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRender measures bs checkpoint render's work: read the latest
// checkpoint through _latest.json, parse it, render it.
func BenchmarkRender(b *testing.B) {
	dir := b.TempDir()
	opt := forced(dir)
	opt.SessionKey = "bench"
	if _, err := Run("bench", bytes.NewReader(benchTurns(1<<20)), io.Discard, opt); err != nil {
		b.Fatal(err)
	}
	d := Dir{Root: dir}
	for b.Loop() {
		cp, _, err := d.Latest("bench")
		if err != nil {
			b.Fatal(err)
		}
		if len(Render(cp)) == 0 {
			b.Fatal("empty render")
		}
	}
}
