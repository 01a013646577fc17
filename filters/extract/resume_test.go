package extract

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// piRounds is a pi v1 session of rounds of a call, a long result and an
// answer, each answer's usage grown by worth/10 tokens for each estimated
// one of the result.
func piRounds(from, n int, tokens *int, worth int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		text := strings.Repeat(fmt.Sprintf("word%d ", i), 600)
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-01T10:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"go %d"}],"timestamp":1}}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-01T10:00:01.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"bash","arguments":{"command":"ls"}}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":5,"output":10,"cacheRead":%d,"cacheWrite":0,"totalTokens":%d},"stopReason":"toolUse","timestamp":1}}`+"\n", i, *tokens, *tokens+15)
		*tokens += len(text) / 4 * worth / 10
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-01T10:00:02.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":%q}],"isError":false,"timestamp":1}}`+"\n", i, text)
		fmt.Fprintf(&b, `{"type":"message","timestamp":"2026-03-01T10:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":5,"output":10,"cacheRead":%d,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop","timestamp":1}}`+"\n", *tokens, *tokens+15)
	}
	return b.String()
}

// TestResumeCalibratesOnWhatCameBefore: a run that resumes past the lines
// an earlier run left final (an in-place pass over a live session) writes
// what a run over the whole file writes, the worth of a token its usage
// lines carry included: it calibrates on the lines before (Before).
func TestResumeCalibratesOnWhatCameBefore(t *testing.T) {
	ctx := context.Background()
	tokens := 2000
	// The worth of a token differs between the lines before and after:
	// a run that calibrated on the lines after alone would say another.
	head := `{"type":"session","id":"s","timestamp":"2026-03-01T10:00:00.000Z","cwd":"/w"}` + "\n" + piRounds(0, 8, &tokens, 15)
	tail := piRounds(8, 12, &tokens, 11)
	opt := Defaults()
	opt.Store = new(blobstore.Mem)
	var first bytes.Buffer
	st, err := Run(ctx, "s", strings.NewReader(head), &first, opt)
	if err != nil {
		t.Fatal(err)
	}
	file := first.String() + tail // the runtime appended
	var whole bytes.Buffer
	if _, err := Run(ctx, "s", strings.NewReader(file), &whole, opt); err != nil {
		t.Fatal(err)
	}
	final := int(st.Final)
	resumed := opt
	resumed.LinesBefore = strings.Count(file[:final], "\n")
	resumed.Before = strings.NewReader(file[:final])
	var rest bytes.Buffer
	if _, err := Run(ctx, "s", strings.NewReader(file[final:]), &rest, resumed); err != nil {
		t.Fatal(err)
	}
	if got := file[:final] + rest.String(); got != whole.String() {
		t.Fatalf("a resumed run wrote other bytes than a run over the whole file:\n%s\nwant\n%s", got[final:], whole.String()[final:])
	}
	if last := whole.String()[strings.LastIndex(whole.String(), `"_adjusted":{`):]; !strings.Contains(last, `"scale":1.`) {
		t.Fatalf("the test session should make the run write a measured worth of a token: %.80s", last)
	}
}
