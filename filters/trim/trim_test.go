package trim_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/trim"
	"github.com/bstools/bs/internal/corpustest"
)

// TestCorpusRoundTrip: on every real transcript, trim with settings that
// force pruning (everything hard-cleared; soft trim only) and restore --all
// gives back the input byte for byte, and each changed line carries a
// placeholder and _extracted.
func TestCorpusRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("corpus not present")
	}
	settings := map[string]func(*trim.Options){
		"hard": func(o *trim.Options) {
			o.SoftTrimRatio, o.HardClearRatio, o.MinPrunableChars, o.KeepLastAssistants = 0, 0, 0, 1
		},
		"soft": func(o *trim.Options) {
			o.SoftTrimRatio, o.HardClear, o.KeepLastAssistants = 0, false, 1
			o.SoftMax, o.SoftHead, o.SoftTail = 200, 80, 60
		},
	}
	pruned := map[string]int{}
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for name, set := range settings {
			t.Run(filepath.Base(f)+"/"+name, func(t *testing.T) {
				store := new(blobstore.Mem)
				opt := trim.Defaults()
				set(&opt)
				opt.Store = store
				var out bytes.Buffer
				st, err := trim.Run(context.Background(), f, bytes.NewReader(in), &out, opt)
				if err != nil {
					t.Fatal(err)
				}
				pruned[name] += st.Trimmed + st.Cleared
				inLines, outLines := strings.SplitAfter(string(in), "\n"), strings.SplitAfter(out.String(), "\n")
				if len(inLines) != len(outLines) {
					t.Fatalf("trim wrote %d lines, read %d", len(outLines), len(inLines))
				}
				changed := 0
				for i := range inLines {
					if inLines[i] != outLines[i] {
						changed++
						if (!strings.Contains(outLines[i], `"_extracted":{`) || !strings.Contains(outLines[i], "[[extracted-")) && !corpustest.OnlyAdjusted(inLines[i], outLines[i]) {
							t.Fatalf("line %d changed without a placeholder and _extracted, or an _adjusted alone", i+1)
						}
					}
				}
				if st.Trimmed+st.Cleared > 0 && changed == 0 {
					t.Fatalf("stats say %d pruned, no line changed", st.Trimmed+st.Cleared)
				}
				var back bytes.Buffer
				if _, _, err := restore.Run(context.Background(), f, bytes.NewReader(out.Bytes()), &back, restore.Options{All: true, Store: store}); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back.Bytes(), in) {
					t.Fatalf("restore --all differs from the input (%d vs %d bytes)", back.Len(), len(in))
				}
			})
		}
	}
	for name, n := range pruned {
		if n < 100 {
			t.Errorf("%s: only %d results pruned across the corpus; the test proves little", name, n)
		}
	}
}

// benchSession builds an OpenClaw session of about n bytes shaped like
// scripts/benchgen's: user turns, assistant tool calls and tool results of
// 100 bytes to 120 KB.
func benchSession(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"bench","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	word := `grep result line with \"quotes\" and a tab\t and more words\n`
	sizes := []int{300, 1400, 6000, 15000, 800, 40000, 3000, 120000, 9000, 500}
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, `{"type":"message","id":"u%d","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"step %d"}],"timestamp":1772971200000}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"message","id":"a%d","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"%s","thinkingSignature":"sig"},{"type":"toolCall","id":"call_%d","name":"bash","arguments":{"command":"grep -rn x ."}}],"model":"claude-sonnet-4-5","usage":{"input":1000,"output":120,"cacheRead":0,"cacheWrite":0,"totalTokens":1120},"stopReason":"toolUse","timestamp":1772971200000}}`+"\n", i, strings.Repeat("think ", 100), i)
		text := strings.Repeat(word, sizes[i%len(sizes)]/len(word)+1)
		fmt.Fprintf(&b, `{"type":"message","id":"r%d","parentId":null,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"toolResult","toolCallId":"call_%d","toolName":"bash","content":[{"type":"text","text":"%d %s"}],"isError":false,"timestamp":1772971200000}}`+"\n", i, i, i, text)
	}
	return b.Bytes()
}

// BenchmarkTrim measures the engine on a session far over the window
// (every old result soft-trimmed, then hard-cleared), read from a file as
// 'bs trim FILE' reads it. Lossy: OpenClaw's output; Store: the removed
// results go to an in-memory store (hashing included, disk left out).
func BenchmarkTrim(b *testing.B) {
	in := benchSession(64 << 20)
	path := filepath.Join(b.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, in, 0o600); err != nil {
		b.Fatal(err)
	}
	for _, mode := range []string{"lossy", "store"} {
		b.Run(mode, func(b *testing.B) {
			opt := trim.Defaults()
			if mode == "store" {
				opt.Store = new(blobstore.Mem)
			}
			b.SetBytes(int64(len(in)))
			for b.Loop() {
				f, err := os.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				st, err := trim.Run(context.Background(), "bench", f, io.Discard, opt)
				f.Close()
				if err != nil || st.Cleared == 0 {
					b.Fatalf("trim: %v (%+v)", err, st)
				}
			}
		})
	}
}

// TestCodexForkOutput: a Codex fork writes a function call's output as
// {content, success}; trim clears the content, leaves success, and
// restore gives the line back.
func TestCodexForkOutput(t *testing.T) {
	long := strings.Repeat("output line of the command\\n", 400)
	lines := []string{
		`{"timestamp":"2026-05-11T08:27:17.490Z","type":"session_meta","payload":{"id":"fork","timestamp":"2026-05-11T08:26:55.042Z","cwd":"/"}}`,
		`{"timestamp":"2026-05-11T08:27:18.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"run it"}]}}`,
		`{"timestamp":"2026-05-11T08:27:22.479Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{}","call_id":"call_1"}}`,
		`{"timestamp":"2026-05-11T08:27:23.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"call_1","output":{"content":"` + long + `","success":true}}}`,
	}
	for i := range 3 {
		lines = append(lines,
			fmt.Sprintf(`{"timestamp":"2026-05-11T08:28:0%d.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"and %d"}]}}`, i, i),
			fmt.Sprintf(`{"timestamp":"2026-05-11T08:28:1%d.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done %d"}]}}`, i, i))
	}
	in := []byte(strings.Join(lines, "\n") + "\n")
	store := new(blobstore.Mem)
	opt := trim.Defaults()
	opt.SoftTrimRatio, opt.HardClearRatio, opt.MinPrunableChars, opt.KeepLastAssistants = 0, 0, 0, 1
	opt.Store = store
	var out bytes.Buffer
	st, err := trim.Run(context.Background(), "fork.jsonl", bytes.NewReader(in), &out, opt)
	if err != nil {
		t.Fatal(err)
	}
	result := strings.Split(out.String(), "\n")[3]
	if st.Cleared != 1 || strings.Contains(result, "output line") || !strings.Contains(result, `"success":true`) || !strings.Contains(result, `"content":"`) {
		t.Fatalf("cleared %d; the result line is %.300s", st.Cleared, result)
	}
	var back bytes.Buffer
	if _, _, err := restore.Run(context.Background(), "fork.jsonl", bytes.NewReader(out.Bytes()), &back, restore.Options{All: true, Store: store}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back.Bytes(), in) {
		t.Fatal("restore --all did not give the session back")
	}
}
