package index

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Realistic text for benchmarks: tool output of a few hundred words, with
// word frequencies following Zipf's law over a vocabulary of English
// words, code identifiers, paths and numbers.

var common = strings.Fields(`the a to of and in is for on that with as it this be
are from by at or not error file line func return if else value test failed
ok build package import type string int nil true false config server client
request response status code data user path module version go run make
warning info debug main src internal cmd http json yaml read write open
close context timeout connection database query table index row column key
cache memory disk process thread lock wait retry start stop done new old
function method struct interface field name list map set get put delete
update create remove check parse load save copy move find search match`)

var syllables = strings.Fields(`ka lo mi ne ru ta vo zi pe qua sel dor fin gar hul
jex bri cro dup eng fal gon hap ix jul kem lun mor nix opt pra qed ros sut tem
ull vex wim xan yor zed bar baz foo qux ser par tok lex gen val ref ptr buf`)

var vocabulary = sync.OnceValue(func() []string {
	r := rand.New(rand.NewPCG(42, 42))
	v := append([]string(nil), common...)
	word := func(n int) string {
		var sb strings.Builder
		for range n {
			sb.WriteString(syllables[r.IntN(len(syllables))])
		}
		return sb.String()
	}
	for len(v) < 20000 {
		switch r.IntN(4) {
		case 0: // camelCase identifier
			w := word(1 + r.IntN(2))
			v = append(v, w+strings.ToUpper(word(1)[:1])+word(1))
		case 1: // snake_case
			v = append(v, word(1)+"_"+word(1+r.IntN(2)))
		case 2: // path
			v = append(v, "/"+word(1)+"/"+word(2)+"/"+word(1)+".go")
		default: // plain made-up word
			v = append(v, word(2+r.IntN(2)))
		}
	}
	return v
})

// benchText returns about words words of tool-output-like text.
func benchText(r *rand.Rand, words int) string {
	v := vocabulary()
	z := rand.NewZipf(r, 1.07, 2, uint64(len(v)-1))
	var sb strings.Builder
	for i := 0; i < words; {
		n := 6 + r.IntN(10)
		for j := 0; j < n && i < words; j++ {
			if j > 0 {
				sb.WriteByte(' ')
			}
			switch r.IntN(20) {
			case 0:
				sb.WriteString(strconv.Itoa(r.IntN(100000)))
			case 1:
				fmt.Fprintf(&sb, "0x%x", r.Uint32())
			default:
				sb.WriteString(v[z.Uint64()])
			}
			i++
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

func benchRows(r *rand.Rand, start, n int) []Row {
	kinds := []string{"tool_result", "tool_result", "tool_result", "tool_call", "thinking", "text"}
	tools := []string{"Bash", "Read", "Grep", "Edit", ""}
	rows := make([]Row, n)
	for i := range rows {
		id := start + i
		text := benchText(r, 150+r.IntN(400))
		rows[i] = Row{
			Session: fmt.Sprintf("agent/session%03d", id/500),
			EntryID: fmt.Sprintf("entry-%07d", id),
			Pointer: "/message/content/0/content",
			Blob:    blob(text),
			Kind:    kinds[r.IntN(len(kinds))],
			Tool:    tools[r.IntN(len(tools))],
			Time:    time.Date(2026, 11, 1, 0, 0, id, 0, time.UTC).Format(time.RFC3339),
			Text:    text,
		}
	}
	return rows
}

func benchRowCount(b *testing.B) int {
	n := 100_000
	if s := os.Getenv("BS_INDEX_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	return n
}

// BenchmarkSearch searches an index of 100,000 rows (BS_INDEX_BENCH_ROWS
// changes that), built once. BS_INDEX_BENCH_DB=FILE builds the index in
// FILE and keeps it, or reuses FILE if it exists, to skip the build on the
// next run.
func BenchmarkSearch(b *testing.B) {
	n := benchRowCount(b)
	path := filepath.Join(b.TempDir(), "index.db")
	reuse := false
	if p := os.Getenv("BS_INDEX_BENCH_DB"); p != "" {
		path = p
		_, err := os.Stat(p)
		reuse = err == nil
	}
	ix, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 1))
	start := time.Now()
	var textBytes int
	for i := 0; i < n && !reuse; i += 1000 {
		rows := benchRows(r, i, min(1000, n-i))
		for _, row := range rows {
			textBytes += len(row.Text)
		}
		if err := ix.Add(ctx, rows); err != nil {
			b.Fatal(err)
		}
	}
	elapsed := time.Since(start)
	fi, _ := os.Stat(path)
	b.Logf("built %d rows (%.0f MB of text) in %v, %.0f rows/s (text generation included); file %.0f MB",
		n, float64(textBytes)/1e6, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds(), float64(fi.Size())/1e6)

	// Words of each shape, from deep in the Zipf distribution (rare) or
	// near its head (common).
	v := vocabulary()
	pick := func(from int, shape func(string) bool) string {
		for _, w := range v[from:] {
			if shape(w) {
				return w
			}
		}
		b.Fatal("no such word")
		return ""
	}
	plain := func(w string) bool { return strings.IndexFunc(w, func(r rune) bool { return r < 'a' || r > 'z' }) < 0 }
	isPath := func(w string) bool { return strings.HasPrefix(w, "/") }
	snake := func(w string) bool { return strings.Contains(w, "_") }
	for _, q := range []struct {
		name string
		q    Query
	}{
		{"frequent-word", Query{Text: "error"}},
		{"mid-word", Query{Text: pick(400, plain)}},
		{"rare-word", Query{Text: pick(15000, plain)}},
		{"rare-path", Query{Text: pick(15000, isPath)}},
		{"snake-identifier", Query{Text: pick(2000, snake)}},
		{"two-frequent-words", Query{Text: "connection timeout"}},
		{"three-words", Query{Text: "database " + pick(300, plain) + " " + pick(1200, snake)}},
		{"no-match", Query{Text: "zzzznotthere"}},
		{"frequent-word-session", Query{Text: "error", Session: "agent/session007"}},
		{"frequent-word-tool-kind", Query{Text: "error", Tool: "Bash", Kind: "tool_result"}},
		{"hostile", Query{Text: `"NEAR(config* OR -yaml): (x`}},
	} {
		b.Run(q.name, func(b *testing.B) {
			var hits int
			for b.Loop() {
				h, err := ix.Search(ctx, q.q)
				if err != nil {
					b.Fatal(err)
				}
				hits = len(h)
			}
			b.ReportMetric(float64(hits), "hits")
		})
	}
}

// BenchmarkAdd measures adding batches of 50 rows of a few hundred words
// to an index that already holds 10,000.
func BenchmarkAdd(b *testing.B) {
	ix, err := Open(filepath.Join(b.TempDir(), "index.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(2, 2))
	const base = 10_000
	for i := 0; i < base; i += 1000 {
		if err := ix.Add(ctx, benchRows(r, i, 1000)); err != nil {
			b.Fatal(err)
		}
	}
	// Text generation is not what is measured: make the batches first.
	const batch = 50
	var batches [][]Row
	for i := range 200 {
		batches = append(batches, benchRows(r, base+i*batch, batch))
	}
	i := 0
	for b.Loop() {
		rows := batches[i%len(batches)]
		if i >= len(batches) { // fresh keys, same text
			rows = append([]Row(nil), rows...)
			for j := range rows {
				rows[j].EntryID += "-" + strconv.Itoa(i)
			}
		}
		if err := ix.Add(ctx, rows); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N*batch)/b.Elapsed().Seconds(), "rows/s")
}
