package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

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
