package restore_test

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/transcript"
)

func roundTrip(t *testing.T, in []byte, format transcript.Dialect, minLength int) (lean, back []byte) {
	t.Helper()
	ctx := context.Background()
	store := new(blobstore.Mem)
	opt := extract.Defaults()
	opt.KeepRecent, opt.MinLength, opt.Types = 0, minLength, transcript.AllKinds
	opt.Store, opt.Format, opt.Now = store, format, time.Date(2026, 2, 20, 17, 30, 0, 0, time.UTC)
	var out bytes.Buffer
	if _, err := extract.Run(ctx, "fuzz", bytes.NewReader(in), &out, opt); err != nil {
		t.Fatalf("extract: %v", err)
	}
	var restored bytes.Buffer
	if _, _, err := restore.Run(ctx, "fuzz", bytes.NewReader(out.Bytes()), &restored, restore.Options{All: true, Store: store, Format: format}); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return out.Bytes(), restored.Bytes()
}

func TestRoundTripDialects(t *testing.T) {
	for _, in := range []string{
		`{"type":"message","message":{"role":"toolResult","content":[{"type":"text","text":"hello world"},{"type":"image","data":"aGVsbG8=","mimeType":"image/png"}]}}` + "\n",
		`{"uuid":"u1","type":"assistant","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hmm hmm","signature":"s"},{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls -la"}}]}}`,
		`{"timestamp":"t","type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":[{"type":"input_text","text":"abcdef"}]}}` + "\n",
		`{"role":"assistant","content":"long text here","tool_calls":[{"id":"x","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}` + "\n",
	} {
		lean, back := roundTrip(t, []byte(in), transcript.Unknown, 3)
		if !bytes.Contains(lean, []byte("[[extracted-")) {
			t.Errorf("nothing extracted from %s", in)
		}
		if string(back) != in {
			t.Errorf("round trip of %s gave %s (via %s)", in, back, lean)
		}
	}
}

// fuzzDialects numbers the dialects for the fuzzer as the old int enum did
// (0 auto), so the seeds keep meaning what they meant.
var fuzzDialects = []transcript.Dialect{nil, transcript.OpenClaw, transcript.ClaudeCode, transcript.Codex, transcript.BrainSurgeon, transcript.Generic}

// FuzzRoundTrip checks restore(extract(x)) == x on arbitrary input in
// every dialect, with everything eligible for extraction.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte(`{"type":"message","id":"a","message":{"role":"toolResult","content":[{"type":"text","text":"abc\u00e9"}]}}`+"\n"+`{"x":1}`), uint8(1), uint8(1))
	f.Add([]byte(`{"uuid":"u","type":"user","message":{"content":[{"type":"tool_result","content":"out"}]},"toolUseResult":{"stdout":"out"}}`), uint8(2), uint8(1))
	f.Add([]byte(`{"timestamp":"t","type":"response_item","payload":{"type":"function_call","arguments":"{}"}}`), uint8(3), uint8(0))
	f.Add([]byte(`{"__id":"m","type":"tool_result","output":{"a":["b","c"]},"_extractable":true}`), uint8(4), uint8(5))
	f.Add([]byte(`{"role":"user","content":[{"type":"image","source":{"data":"xyz"}}]}`+"\n\n"+`{"role":"tool","content":"r"}{}`), uint8(5), uint8(1))
	f.Fuzz(func(t *testing.T, in []byte, format, minLength uint8) {
		// Input that already carries bs's own markers is extracted output,
		// not an original; its round trip is not this property.
		for _, m := range []string{"_extracted", "extracted-", "__id", "_restored"} {
			if strings.Contains(string(in), m) {
				return
			}
		}
		_, back := roundTrip(t, in, fuzzDialects[format%6], int(minLength%8))
		if !bytes.Equal(back, in) {
			t.Fatalf("restore(extract(x)) != x\n x: %q\ngot: %q", in, back)
		}
	})
}

// benchSession builds an OpenClaw session of about n bytes whose tool
// results (4 KiB each) are all eligible for extraction.
func benchSession(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"bench","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	text := strings.Repeat(`grep result line with \"quotes\" and a tab\t and more words\n`, 70)
	for i := 0; b.Len() < n; i++ {
		b.WriteString(`{"type":"message","id":"` + strconv.Itoa(i) + `","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"toolResult","toolCallId":"c","toolName":"bash","content":[{"type":"text","text":"` + strconv.Itoa(i) + text + `"}],"isError":false,"timestamp":1772971200000}}` + "\n")
		b.WriteString(`{"type":"message","id":"u` + strconv.Itoa(i) + `","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":"ok","timestamp":1772971200000}}` + "\n")
	}
	return b.Bytes()
}

// BenchmarkExtract measures the engine (parse, decide, splice, order) with
// an in-memory store, so disk and compression costs are left out.
func BenchmarkExtract(b *testing.B) {
	in := benchSession(8 << 20)
	opt := extract.Defaults()
	opt.Store = new(blobstore.Mem)
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := extract.Run(context.Background(), "bench", bytes.NewReader(in), io.Discard, opt); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRestoreAll measures restore --all with an in-memory store; the
// throughput is of the restored (original) bytes.
func BenchmarkRestoreAll(b *testing.B) {
	in := benchSession(8 << 20)
	store := new(blobstore.Mem)
	opt := extract.Defaults()
	opt.Store = store
	var lean bytes.Buffer
	if _, err := extract.Run(context.Background(), "bench", bytes.NewReader(in), &lean, opt); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, _, err := restore.Run(context.Background(), "bench", bytes.NewReader(lean.Bytes()), io.Discard, restore.Options{All: true, Store: store}); err != nil {
			b.Fatal(err)
		}
	}
}
