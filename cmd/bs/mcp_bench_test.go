//go:build unix

package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/agent"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/xdg"
)

// BenchmarkPurgeControlRestore restores one entry of a 100 MiB OpenClaw
// session through purge_control, as bs mcp does: find the entry's line,
// restore it from the blob store, stamp _restored, redact the restore
// call, and rewrite the file through the in-place code (locks, temp file,
// fsync, rename). Each iteration restores another entry. Target: under
// 300 ms per call.
func BenchmarkPurgeControlRestore(b *testing.B) {
	dir := b.TempDir()
	b.Setenv("XDG_STATE_HOME", filepath.Join(dir, "state"))
	store, err := blobstore.OpenLocal(filepath.Join(dir, "store"))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	value := `"` + strings.Repeat("output line of a tool, long enough to be extracted\\n", 200) + `"`
	d, err := store.Put(ctx, []byte(value))
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintf(w, `{"type":"session","version":3,"id":"big","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}`+"\n")
	kept := strings.Repeat("a message that stays in context, as most of a long session does. ", 30)
	size, entries := 0, 0
	for i := 0; size < 100<<20; i++ {
		var n int
		if i%10 == 0 {
			n, _ = fmt.Fprintf(w, `{"type":"message","id":"x%d","parentId":"p%d","timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"[[extracted-x%d]]"}],"isError":false,"timestamp":1772971201000},"_extracted":{"/message/content/0/text":{"blob":"%s","bytes":%d}}}`+"\n",
				i, i, i, i, d, len(value))
			entries++
		} else {
			n, _ = fmt.Fprintf(w, `{"type":"message","id":"p%d","parentId":"x%d","timestamp":"2026-03-08T12:00:02.000Z","message":{"role":"user","content":"%s","timestamp":1772971202000}}`+"\n", i, i-1, kept)
		}
		size += n
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	ip := inplace.Options{LockTimeout: 10 * time.Second, Force: true, StateDir: xdg.State()}
	a := agent.New(agent.Env{
		Sessions: agent.Sessions{File: path},
		Store:    store,
		Rewrite: func(ctx context.Context, p string, edit agent.EditFunc) error {
			return rewriteWhenQuiet(ctx, ip, p, edit)
		},
	})
	b.SetBytes(int64(size))
	// CPU time (user and system) per call, beside the wall time: on a
	// shared machine the wall time mostly says how busy the others are.
	var r0, r1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &r0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := (i * 7919) % entries * 10 // spread over the file
		res, isErr := a.Call(ctx, "purge_control", []byte(fmt.Sprintf(`{"action":"restore","entry_id":"x%d"}`, id)))
		if isErr {
			b.Fatalf("restore x%d: %#v", id, res)
		}
	}
	b.StopTimer()
	syscall.Getrusage(syscall.RUSAGE_SELF, &r1)
	cpu := time.Duration(r1.Utime.Nano() - r0.Utime.Nano() + r1.Stime.Nano() - r0.Stime.Nano())
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/op")
}
