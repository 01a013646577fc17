package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/blobstore/storetest"
)

// benchSession is an OpenClaw session of n unique tool results of about
// size bytes each, each followed by a user message, so extract moves
// every result but the last few.
func benchSession(n, size int) []byte {
	words := strings.Fields("the of and to in is that for it as with func return err nil if else struct type package import string int byte slice map range go defer chan select case default interface error fmt path dir json yaml http server client request response status header body value key index count total bytes lines result output input config")
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"bench","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}` + "\n")
	for i := range n {
		fmt.Fprintf(&b, `{"type":"message","id":"r%d","parentId":null,"timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"read","content":[{"type":"text","text":"`, i, i)
		end := b.Len() + size
		for b.Len() < end {
			b.WriteString(words[rng.IntN(len(words))])
			if rng.IntN(12) == 0 {
				b.WriteString(`\n`)
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(`"}],"isError":false,"timestamp":1772971201000}}` + "\n")
		fmt.Fprintf(&b, `{"type":"message","id":"u%d","parentId":null,"timestamp":"2026-03-08T12:00:02.000Z","message":{"role":"user","content":"next","timestamp":1772971202000}}`+"\n", i)
	}
	return b.Bytes()
}

// BenchmarkExtractStore measures bs extract, end to end in process, into
// each kind of store: a local directory, gocloud's fileblob
// and the S3-compatible server named by BS_TEST_S3_ENDPOINT when it is
// set (see store_test.go). Every iteration writes into a fresh store, so
// every blob is new.
func BenchmarkExtractStore(b *testing.B) {
	in := benchSession(400, 24<<10)
	stores := []struct {
		name string
		spec func(dir string, i int) string
	}{
		{"Local", func(dir string, i int) string { return filepath.Join(dir, fmt.Sprint(i)) }},
		{"File", func(dir string, i int) string { return "file://" + filepath.Join(dir, fmt.Sprint(i)) }},
	}
	if srv, ok, _ := storetest.S3FromEnv(); ok {
		stores = append(stores, struct {
			name string
			spec func(dir string, i int) string
		}{"S3", func(string, int) string { return srv.URL("bs-bench") }})
	}
	for _, st := range stores {
		b.Run(st.name, func(b *testing.B) {
			dir := b.TempDir()
			b.SetBytes(int64(len(in)))
			i := 0
			for b.Loop() {
				var errb bytes.Buffer
				code := run([]string{"bs", "extract", "--no-index", "--store", st.spec(dir, i), "--keep-recent", "3"}, bytes.NewReader(in), io.Discard, &errb)
				if code != 0 {
					b.Fatalf("exit %d: %s", code, errb.String())
				}
				i++
			}
		})
	}
}

// BenchmarkRestoreID1M measures bs restore --id, in process (so without
// the process's own start), on a local store of 1,000,000 blobs in packs,
// written as extract writes them (PutPending, a commit every 20,000
// blobs); then the same store after bs store repack. The target is at
// most 20 ms a run beyond the process start: opening the store, mapping
// its indexes, finding the blob and reading it. Building the store takes
// about 20 s.
func BenchmarkRestoreID1M(b *testing.B) {
	const total, commitEvery = 1_000_000, 20_000
	dir := filepath.Join(b.TempDir(), "store")
	ctx := context.Background()
	value := func(i int) []byte {
		return fmt.Appendf(nil, `"tool output %d: total %d bytes in %d files, exit status %d"`, i, i*7919%100003, i%97, i%3)
	}
	s, err := blobstore.OpenLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	for i := range total {
		v := value(i)
		if err := s.PutPending(ctx, blobstore.Sum(v), v); err != nil {
			b.Fatal(err)
		}
		if i%commitEvery == commitEvery-1 {
			if err := s.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	target := value(total / 2)
	d := blobstore.Sum(target)
	session := fmt.Appendf(nil, `{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}
{"type":"message","id":"e1","parentId":null,"timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"bash","content":[{"type":"text","text":"[[extracted-e1]]"}],"isError":false},"_extracted":{"/message/content/0/text":{"blob":"%s","bytes":%d}}}
`, d, len(target))
	restore := func(b *testing.B) {
		sum, err := blobstore.Summarize(ctx, s, 2)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%d blobs in %d packs, %d index files", sum.Blobs, sum.Packs, sum.Indexes)
		for b.Loop() {
			var out, errb bytes.Buffer
			code := run([]string{"bs", "restore", "--id", "e1", "--keys", "/message/content/0/text", "--store", dir, "--result", os.DevNull}, bytes.NewReader(session), &out, &errb)
			if code != 0 {
				b.Fatalf("exit %d: %s", code, errb.String())
			}
			if !bytes.Contains(out.Bytes(), target) {
				b.Fatalf("restore gave back:\n%s\nwant the value %s", out.Bytes(), target)
			}
		}
	}
	b.Run("Packs", restore)
	if _, err := s.Repack(ctx, blobstore.RepackOptions{}); err != nil {
		b.Fatal(err)
	}
	b.Run("Repacked", restore)
}
