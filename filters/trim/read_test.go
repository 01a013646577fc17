package trim

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/transcript"
)

// oddSession is an OpenClaw session with what the readers must get right:
// results far longer than every buffer, blank and white-space lines, a
// line that is not JSON, CRLF, and no final line feed.
func oddSession() []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"odd","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	sizes := []int{10, 5000, 3 << 20, 700, 1 << 20, 40000, 2 << 20, 100}
	for i, n := range sizes {
		fmt.Fprintf(&b, `{"type":"message","id":"u%d","timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":"go %d"}}`+"\n", i, i)
		fmt.Fprintf(&b, `{"type":"message","id":"a%d","timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c%d","name":"bash","arguments":{}}],"model":"m"}}`+"\n", i, i)
		text := strings.Repeat(`line é \"q\" 😀 \n`, n/20+1)
		fmt.Fprintf(&b, `{"type":"message","id":"r%d","timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"%s"}]}}`+"\n", i, i, text)
		switch i {
		case 1:
			b.WriteString("\n  \t \n")
		case 3:
			b.WriteString(`{"not": json` + "\n")
		case 5:
			b.WriteString(`{"type":"custom","x":1}` + "\r\n")
		}
	}
	b.WriteString(`{"type":"message","id":"z","timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"assistant","content":[]}}`)
	return b.Bytes()
}

// TestBufferSizes: the output does not depend on how the input is cut
// into batches and buffers, lines straddling every boundary.
func TestBufferSizes(t *testing.T) {
	inputs := map[string][]byte{"odd": oddSession()}
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "shared", "corpus", "*", "*.jsonl"))
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[filepath.Base(f)] = in
	}
	settings := map[string]func(*Options){
		"hard": func(o *Options) {
			o.SoftTrimRatio, o.HardClearRatio, o.MinPrunableChars, o.KeepLastAssistants = 0, 0, 0, 1
		},
		"soft": func(o *Options) {
			o.SoftTrimRatio, o.HardClear, o.KeepLastAssistants = 0, false, 1
			o.SoftMax, o.SoftHead, o.SoftTail = 200, 80, 60
		},
	}
	run := func(t *testing.T, in []byte, set func(*Options), store bool) ([]byte, Stats) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "in.jsonl")
		if err := os.WriteFile(path, in, 0o600); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		opt := Defaults()
		set(&opt)
		if store {
			opt.Store = new(blobstore.Mem)
		}
		var bad []int
		opt.OnBadLine = func(e *transcript.BadLineError) error { bad = append(bad, e.Line); return nil }
		var out bytes.Buffer
		st, err := Run(context.Background(), "in", f, &out, opt)
		if err != nil {
			t.Fatal(err)
		}
		return append(out.Bytes(), fmt.Sprint(bad)...), st
	}
	defer func(b, r int) { batchSize, readSize = b, r }(batchSize, readSize)
	for name, in := range inputs {
		for sname, set := range settings {
			for _, store := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/store=%v", name, sname, store), func(t *testing.T) {
					batchSize, readSize = 512<<10, 1<<20
					want, wst := run(t, in, set, store)
					if name == "odd" && wst.Trimmed+wst.Cleared < 4 {
						t.Fatalf("only %d results pruned", wst.Trimmed+wst.Cleared)
					}
					cuts := [][2]int{{7, 100}}
					if name == "odd" {
						cuts = [][2]int{{1, 16}, {7, 100}, {4096, 4096}, {64 << 10, 256 << 10}}
					}
					for _, sizes := range cuts {
						batchSize, readSize = sizes[0], sizes[1]
						got, st := run(t, in, set, store)
						if !bytes.Equal(got, want) || st != wst {
							t.Fatalf("batches of %d, reads of %d: output differs (%d vs %d bytes; %+v vs %+v)", sizes[0], sizes[1], len(got), len(want), st, wst)
						}
					}
				})
			}
		}
	}
}
