package gauge

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/corpustest"
)

const corpusDir = "../../../shared/corpus"

// usageOf computes the usage-derived context size of a line independently
// of Classify, with encoding/json, from the field definitions: OpenClaw/pi
// input+cacheRead+cacheWrite+output (or totalTokens), Claude Code
// input+cache_creation+cache_read+output, Codex last_token_usage.total_tokens.
func usageOf(line []byte) (int, bool) {
	var v struct {
		Type    string
		Message struct {
			Role       string
			StopReason string
			Usage      map[string]any
		}
		Payload struct {
			Type string
			Info *struct {
				LastTokenUsage map[string]any `json:"last_token_usage"`
			}
		}
		IsAPIErrorMessage *bool `json:"isApiErrorMessage"`
	}
	if json.Unmarshal(line, &v) != nil {
		return 0, false
	}
	num := func(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }
	u := v.Message.Usage
	switch {
	case v.Type == "event_msg" && v.Payload.Type == "token_count" && v.Payload.Info != nil:
		n := num(v.Payload.Info.LastTokenUsage, "total_tokens")
		return n, n > 0
	case v.Message.Role == "assistant" && u != nil && v.IsAPIErrorMessage == nil:
		if v.Message.StopReason == "error" || v.Message.StopReason == "aborted" {
			return 0, false
		}
		n := num(u, "input") + num(u, "cacheRead") + num(u, "cacheWrite") + num(u, "output")
		if n == 0 {
			n = num(u, "totalTokens")
		}
		n += num(u, "input_tokens") + num(u, "cache_creation_input_tokens") + num(u, "cache_read_input_tokens") + num(u, "output_tokens")
		return n, n > 0
	}
	return 0, false
}

// TestCorpusUsagePrefixes: at every line that carries usage, the gauge of
// the prefix ending there is exactly that usage, source "usage", both
// streamed and read from the end of a file.
func TestCorpusUsagePrefixes(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("corpus not present")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(data), "\n")
			var s State
			var p transcript.Parser
			d := detect(t, data)
			checked, offset := 0, 0
			for i, line := range lines {
				offset += len(line)
				body := bytes.TrimSuffix([]byte(line), []byte("\n"))
				tr, err := p.Parse(body)
				if err != nil {
					continue
				}
				s.Add(Classify(tr, d, CharsPer4{}))
				want, ok := usageOf(body)
				if !ok {
					continue
				}
				res := s.Result(withDefaults(Options{}))
				if res.Tokens != want || res.Source != "usage" {
					t.Fatalf("line %d: streamed gauge %d (%s), want %d (usage)", i+1, res.Tokens, res.Source, want)
				}
				// Reading the prefix from its end agrees (checked on a sample:
				// each check writes the prefix to a file).
				if checked%16 == 0 {
					fres := measurePrefix(t, data[:offset])
					if fres.Tokens != want || fres.Source != "usage" {
						t.Fatalf("line %d: gauge of the file prefix %d (%s), want %d", i+1, fres.Tokens, fres.Source, want)
					}
				}
				checked++
			}
			t.Logf("%d usage points", checked)
		})
	}
}

func detect(t *testing.T, data []byte) transcript.Dialect {
	src := transcript.NewSource("x", bytes.NewReader(data), transcript.Unknown, func(*transcript.BadLineError) error { return nil })
	src.Next()
	return src.Dialect()
}

func measurePrefix(t *testing.T, prefix []byte) Result {
	path := filepath.Join(t.TempDir(), "p.jsonl")
	if err := os.WriteFile(path, prefix, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := MeasureFile(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestFileAndStreamAgree: reading a file from its end gives exactly what
// streaming it gives, on every corpus file.
func TestFileAndStreamAgree(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl"))
	if len(files) == 0 {
		t.Skip("corpus not present")
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		fromEnd, err := MeasureFile(fh, Options{})
		if err != nil {
			t.Fatal(err)
		}
		fh.Seek(0, 0)
		streamed, err := Measure(f, fh, nil, Options{})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
		if fromEnd != streamed {
			t.Errorf("%s: from the end %+v, streamed %+v", filepath.Base(f), fromEnd, streamed)
		}
	}
}

func TestNoUsageIsEstimate(t *testing.T) {
	in := `{"role":"user","content":"` + strings.Repeat("x", 4000) + `"}` + "\n"
	res, err := Measure("-", strings.NewReader(in), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "estimate" || res.Tokens != 1000 || res.Window != defaultWindow {
		t.Errorf("got %+v, want 1000 estimated tokens of a 200000 window", res)
	}
	if got := res.String(); got != "[Context: 1% | 1k/200k tokens]" {
		t.Errorf("String() = %q", got)
	}
}

func TestCompactionMakesUsageStale(t *testing.T) {
	in := `{"type":"session","version":3,"id":"s"}
{"type":"message","id":"a","message":{"role":"assistant","content":[],"usage":{"input":150000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":150010},"stopReason":"stop","model":"claude-sonnet-4-5"}}
{"type":"compaction","id":"c","summary":"` + strings.Repeat("s", 400) + `","firstKeptEntryId":"a","tokensBefore":150010}
{"type":"message","id":"b","message":{"role":"user","content":"` + strings.Repeat("u", 40) + `"}}
`
	res, _ := Measure("-", strings.NewReader(in), nil, Options{})
	if res.Source != "estimate" || res.Tokens != 110 {
		t.Errorf("after a compaction got %+v, want 110 estimated tokens", res)
	}
	// An errored or zero-usage assistant message carries no size.
	in2 := `{"type":"message","id":"a","message":{"role":"assistant","content":[],"usage":{"input":100,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":100},"stopReason":"stop"}}
{"type":"message","id":"b","message":{"role":"assistant","content":[],"usage":{"input":900,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":900},"stopReason":"error"}}
{"type":"message","id":"c","message":{"role":"assistant","content":[],"usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0},"stopReason":"stop","provider":"openclaw","model":"delivery-mirror"}}
`
	res, _ = Measure("-", strings.NewReader(in2), nil, Options{Format: transcript.OpenClaw})
	if res.Source != "usage" || res.UsageTokens != 100 {
		t.Errorf("got %+v, want the usage of the first message", res)
	}
}

func TestWindowFor(t *testing.T) {
	for model, want := range map[string]int{"claude-opus-4-6": 200000, "gpt-4.1-mini": 1047576, "gpt-5.1-codex": 400000, "mystery": defaultWindow} {
		if got := WindowFor(model); got != want {
			t.Errorf("WindowFor(%q) = %d, want %d", model, got, want)
		}
	}
}

// TestCalibrate: the estimator is compared with the growth of the usage
// between turns; a turn it estimates exactly has no error, one it
// estimates at half has -50%, and a compaction breaks the chain.
func TestCalibrate(t *testing.T) {
	user := func(chars int) string {
		return `{"type":"message","message":{"role":"user","content":"` + strings.Repeat("u", chars) + `"}}` + "\n"
	}
	assistant := func(usage int) string {
		return `{"type":"message","message":{"role":"assistant","content":[],"usage":{"input":` + fmt.Sprint(usage) + `,"output":0,"cacheRead":0,"cacheWrite":0},"stopReason":"stop"}}` + "\n"
	}
	in := `{"type":"session","version":3,"id":"s"}` + "\n" +
		assistant(1000) + user(400) + assistant(1100) + // +100 real, 100 estimated
		user(400) + assistant(1300) + // +200 real, 100 estimated: -50%
		`{"type":"compaction","summary":"","firstKeptEntryId":"x","tokensBefore":1300}` + "\n" +
		user(4000) + assistant(5000) // no pair across the compaction
	c, err := Calibrate("-", strings.NewReader(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Pairs != 2 || c.WorstError != -0.5 || c.WorstLine != 6 || c.MeanAbsError != 0.25 || c.RealTokens != 300 || c.EstimateTokens != 200 {
		t.Errorf("got %#v", c)
	}
}

// TestBackwardLines: lines come out last first, exactly as splitting the
// file at line feeds gives them, whatever their length against the chunk
// (empty lines, lines across one boundary, lines of many chunks), with or
// without a final line feed, and the walk stops when fn says so.
func TestBackwardLines(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	for round := range 40 {
		var lines []string
		for range r.IntN(30) {
			switch n := r.IntN(10); {
			case n == 0:
				lines = append(lines, "")
			case n < 7:
				lines = append(lines, strings.Repeat(string(rune('a'+r.IntN(26))), r.IntN(3000)))
			default:
				lines = append(lines, strings.Repeat("L", tailChunk/2+r.IntN(5*tailChunk)))
			}
		}
		data := strings.Join(lines, "\n")
		if round%2 == 0 {
			data += "\n"
		}
		want := strings.Split(data, "\n")
		if data == "" {
			want = nil
		} else if want[0] == "" && len(want) == 1 {
			want = nil
		}
		slices.Reverse(want)
		if len(want) > 0 && want[len(want)-1] == "" {
			want = want[:len(want)-1] // an empty first line is not reported
		}
		var got []string
		if err := backwardLines(strings.NewReader(data), int64(len(data)), func(l []byte) bool {
			got = append(got, string(l))
			return true
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: %d lines back, want %d", round, len(got), len(want))
		}
		if len(want) > 2 {
			n := 0
			backwardLines(strings.NewReader(data), int64(len(data)), func([]byte) bool { n++; return n < 2 })
			if n != 2 {
				t.Fatalf("round %d: walked %d lines after fn said stop at 2", round, n)
			}
		}
	}
}

// TestStreamOffPathOnlyOnABranch: over prefixes of the pi and Claude Code
// corpus files, a stream says it read off the path only when reading
// the prefix along the path from its end gives another figure: a warning
// that is never wrong, and never missing where the figures differ.
func TestStreamOffPathOnlyOnABranch(t *testing.T) {
	files := append(corpustest.Files(t, "openclaw/*.jsonl"), corpustest.Files(t, "claude-code/*.jsonl")...)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(string(data), "\n")
		stride := max(1, len(lines)/40) // a sample of each file's prefixes
		off, warned := 0, 0
		for i, line := range lines {
			off += len(line)
			if i%stride != 0 && i != len(lines)-1 {
				continue
			}
			prefix := data[:off]
			streamed, err := Measure("p", bytes.NewReader(prefix), nil, Options{})
			if err != nil {
				t.Fatal(err)
			}
			fromEnd := measurePrefix(t, prefix)
			if streamed.OffPath {
				warned++
			}
			if streamed.OffPath != (streamed.Tokens != fromEnd.Tokens) {
				t.Errorf("%s, %d bytes: streamed %d (off the path: %v), from the end %d", filepath.Base(f), off, streamed.Tokens, streamed.OffPath, fromEnd.Tokens)
			}
		}
		t.Logf("%s: %d prefixes off the path", filepath.Base(f), warned)
	}
}

// TestStreamClaudeUnreadChain: a Claude Code chain the gauge cannot follow
// (no parentUuid, or a parent not in the file, as a roll that kept a line
// whose parent it evicted leaves) counts the whole main thread, read from
// the end or streamed alike: no warning. A rewind to an answer before the
// usage read is one.
func TestStreamClaudeUnreadChain(t *testing.T) {
	line := func(uuid, parent, role string, usage int) string {
		u := ""
		if usage > 0 {
			u = fmt.Sprintf(`,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`, usage)
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":false,"type":%q,"message":{"id":"msg_%s","role":%q,"content":[{"type":"text","text":"abcdefgh"}]%s},"uuid":%q,"timestamp":"2026-03-08T12:00:00.000Z","sessionId":"s"}`+"\n",
			parent, role, uuid, role, u, uuid)
	}
	for _, c := range []struct {
		name, in string
		off      bool
	}{
		{"no parents", line("u1", "null", "user", 0) + line("a2", "null", "assistant", 5000) + line("u3", "null", "user", 0), false},
		{"a parent not in the file", line("a2", `"gone"`, "assistant", 5000) + line("u3", `"evicted"`, "user", 0), false},
		{"a rewind", line("u1", "null", "user", 0) + line("a2", `"u1"`, "assistant", 5000) + line("u3", `"a2"`, "user", 0) + line("a4", `"u3"`, "assistant", 9000) + line("u5", `"a2"`, "user", 0), true},
	} {
		streamed, err := Measure("s", strings.NewReader(c.in), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if fromEnd := measurePrefix(t, []byte(c.in)); streamed.OffPath != c.off || c.off == (fromEnd.Tokens == streamed.Tokens) {
			t.Errorf("%s: streamed %d (off the path: %v), from the end %d; want off the path %v", c.name, streamed.Tokens, streamed.OffPath, fromEnd.Tokens, c.off)
		}
	}
}

// TestMeasureLeavesTheTee: once Measure has returned, here on a --strict
// error with the input still arriving, nothing more reaches the tee (the
// Source's reader may outlive Measure).
func TestMeasureLeavesTheTee(t *testing.T) {
	line := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", 100) + `"}}` + "\n"
	stop := errors.New("strict")
	pr, pw := io.Pipe()
	go func() {
		for range 3 {
			pw.Write([]byte(line))
		}
		pw.Write([]byte("{\"usage\": bad\n"))
		for range 50 {
			time.Sleep(2 * time.Millisecond)
			pw.Write([]byte(line))
		}
		pw.Close()
	}()
	var tee lockedBuffer
	_, err := Measure("in", pr, &tee, Options{Format: transcript.ClaudeCode, OnBadLine: func(*transcript.BadLineError) error { return stop }})
	if !errors.Is(err, stop) {
		t.Fatalf("Measure: %v, want the error OnBadLine gave", err)
	}
	n := tee.Len()
	time.Sleep(200 * time.Millisecond) // the rest of the input arrives meanwhile
	if tee.Len() != n {
		t.Fatalf("the tee grew from %d to %d bytes after Measure returned", n, tee.Len())
	}
}

// lockedBuffer is a bytes.Buffer safe to write and measure at once, so
// that the race detector reports only the code under test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Len()
}

// TestTailBufferSpills: the lines after the last reset come back in order,
// bytes and numbers intact, whether they stayed in memory or went to the
// temp file; and short lines fill the memory as long ones do, so that
// millions of them do not grow it without bound.
func TestTailBufferSpills(t *testing.T) {
	var b tailBuffer
	defer b.close()
	var want []transcript.Line
	add := func(body []byte) {
		l := transcript.Line{Num: len(want) + 1, Body: body}
		want = append(want, transcript.Line{Num: l.Num, Body: bytes.Clone(body)})
		if err := b.add(l); err != nil {
			t.Fatal(err)
		}
	}
	big := bytes.Repeat([]byte("x"), 1<<20)
	for i := range 40 { // past tailMemory
		big[0] = byte('a' + i%26)
		add(big)
	}
	for i := range 3 {
		add(fmt.Appendf(nil, `{"n":%d}`, i))
		add(nil) // a blank line
	}
	if b.spill == nil {
		t.Fatal("40 MiB of lines stayed in memory")
	}
	var got []transcript.Line
	err := b.each(func(l transcript.Line) error {
		got = append(got, transcript.Line{Num: l.Num, Body: bytes.Clone(l.Body)})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines back, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Num != want[i].Num || !bytes.Equal(got[i].Body, want[i].Body) {
			t.Fatalf("line %d came back as line %d of %d bytes", want[i].Num, got[i].Num, len(got[i].Body))
		}
	}

	b.reset()
	for i := range tailMemory/tailLineCost + 10 {
		if err := b.add(transcript.Line{Num: i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	if b.spill == nil || len(b.lines)*tailLineCost > tailMemory {
		t.Fatalf("%d blank lines kept in memory (%d bytes of places), none spilled", len(b.lines), len(b.lines)*tailLineCost)
	}
}
