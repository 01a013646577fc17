package gauge

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bstools/bs/filters/transcript"
)

// piWithCompaction is a pi session of six 4,000-character messages and a
// compaction after them that keeps the entries from the third on, with a
// blank line early on (pi numbers entries without it). v3 names the first
// kept entry by id, v1 by number.
func piWithCompaction(v1 bool) (withKept, keptOnly string) {
	return piSession(v1, 6, 1333, 2)
}

// piSession is piWithCompaction with n messages of words words each, the
// compaction keeping from message keep on. In v3 each entry is the child
// of the one before it.
func piSession(v1 bool, n, words, keep int) (withKept, keptOnly string) {
	return piBranched(v1, n, words, keep, nil)
}

// piBranched is piSession where message i's parent is message parents[i]
// when given: the user went back to it, leaving a branch.
func piBranched(v1 bool, n, words, keep int, parents map[int]int) (withKept, keptOnly string) {
	var all, kept strings.Builder
	if v1 {
		all.WriteString(`{"type":"session","id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n\n")
	} else {
		all.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n\n")
	}
	onPath := map[int]bool{}
	for i := n - 1; i >= 0; {
		onPath[i] = true
		if p, ok := parents[i]; ok {
			i = p
		} else {
			i--
		}
	}
	ids := func(i int) string {
		parent := "null"
		if p, ok := parents[i]; ok {
			parent = fmt.Sprintf(`"m%07d"`, p)
		} else if i > 0 {
			parent = fmt.Sprintf(`"m%07d"`, i-1)
		}
		return fmt.Sprintf(`"id":"m%07d","parentId":%s,`, i, parent)
	}
	for i := range n {
		role := []string{"user", "assistant"}[i%2]
		line := fmt.Sprintf(`{"type":"message",%s"timestamp":"2026-03-08T12:00:0%d.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]}}`+"\n", ids(i), i, role, strings.Repeat(fmt.Sprintf("w%d ", i), words))
		if v1 {
			line = strings.Replace(line, ids(i), "", 1)
		}
		all.WriteString(line)
		if i >= keep && onPath[i] {
			kept.WriteString(line)
		}
	}
	// The header is entry 0; the blank line is none.
	keptRef := fmt.Sprintf(`"firstKeptEntryId":"m%07d"`, keep)
	if v1 {
		keptRef = fmt.Sprintf(`"firstKeptEntryIndex":%d`, keep+1)
	}
	compID := ""
	if !v1 {
		compID = fmt.Sprintf(`"id":"c0000000","parentId":"m%07d",`, n-1)
	}
	comp := `{"type":"compaction",` + compID + `"timestamp":"2026-03-08T12:01:00.000Z","summary":"what came before",` + keptRef + `,"tokensBefore":9000}` + "\n"
	all.WriteString(comp)
	after := `{"type":"message","timestamp":"2026-03-08T12:02:00.000Z","message":{"role":"user","content":"and now?"}}` + "\n"
	all.WriteString(after)
	// The same context with nothing kept before the compaction: the
	// summary, then the kept entries, then what follows.
	bare := `{"type":"compaction","timestamp":"2026-03-08T12:01:00.000Z","summary":"what came before","tokensBefore":9000}` + "\n"
	return all.String(), `{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n" + bare + kept.String() + after
}

// TestGaugeCountsPiKeptEntries: after a pi compaction the context is its
// summary, the entries it keeps (which stand before it in the file) and
// what follows; streamed and read from the end alike.
func TestGaugeCountsPiKeptEntries(t *testing.T) {
	for _, v1 := range []bool{false, true} {
		in, same := piWithCompaction(v1)
		checkKept(t, v1, in, same)
		// Lines of about 1 MiB go round the stream's lookback buffer
		// several times; the three kept ones are within it.
		in, same = piSession(v1, 9, 350000, 6)
		checkKept(t, v1, in, same)
	}
}

// TestGaugeKeptEntriesOnThePath: a v3 session is a tree. Between the
// first kept entry and the compaction stand entries of a branch the user
// went back from (messages 3 and 4; message 5 is a child of message 2):
// they are not in the context, whether the lookback reads them from a
// stream or from the end of the file.
func TestGaugeKeptEntriesOnThePath(t *testing.T) {
	in, same := piBranched(false, 6, 2666, 2, map[int]int{5: 2})
	if strings.Count(same, `"role"`) != 3 {
		t.Fatalf("the test keeps %d messages, want 3 (2, 5 and what follows)", strings.Count(same, `"role"`))
	}
	checkKept(t, false, in, same)
}

// TestGaugeV1NumbersParsedEntries: pi numbers a v1 session's entries by
// the lines it parses, so a line cut short before the kept entries takes
// no number, streamed or from the end.
func TestGaugeV1NumbersParsedEntries(t *testing.T) {
	in, same := piWithCompaction(true)
	header := strings.Index(in, "\n\n") + 2
	in = in[:header] + `{"type":"message","timestamp":"2026-03-08T12:00:00.500Z","message":{"role":"user","cont` + "\n" + in[header:]
	checkKept(t, true, in, same)
}

// TestGaugeV1NumbersLossyEntries: a line pi reads only once its invalid
// UTF-8 is replaced (bs passes it through as a bad line) still takes a
// number, as pi gives it one.
func TestGaugeV1NumbersLossyEntries(t *testing.T) {
	in, same := piWithCompaction(true)
	header := strings.Index(in, "\n\n") + 2
	in = in[:header] + `{"type":"custom","customType":"note","data":{"text":"caf` + "\xff" + `"},"timestamp":"2026-03-08T12:00:00.500Z"}` + "\n" + in[header:]
	in = strings.Replace(in, `"firstKeptEntryIndex":3`, `"firstKeptEntryIndex":4`, 1)
	checkKept(t, true, in, same)
}

// checkKept: the gauge of in, streamed and read from the end, is the
// gauge of same, which holds the same context with nothing kept from
// before its compaction.
func checkKept(t *testing.T, v1 bool, in, same string) {
	t.Helper()
	want, err := Measure("same", strings.NewReader(same), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want.Tokens < 4000 {
		t.Fatalf("the kept entries' context is %d tokens: the test is wrong", want.Tokens)
	}
	streamed, err := Measure("in", strings.NewReader(in), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	fromEnd := measurePrefix(t, []byte(in))
	if streamed.Tokens != want.Tokens || fromEnd.Tokens != want.Tokens {
		t.Errorf("v1=%v: streamed %d, from the end %d; want the summary, the kept entries and what follows: %d", v1, streamed.Tokens, fromEnd.Tokens, want.Tokens)
	}
	// Usage after the compaction covers the kept entries itself.
	withUsage := in + `{"type":"message","timestamp":"2026-03-08T12:03:00.000Z","message":{"role":"assistant","content":"ok","usage":{"input":7000,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":7010},"stopReason":"stop"}}` + "\n"
	if res, _ := Measure("u", strings.NewReader(withUsage), nil, Options{}); res.Tokens != 7010 {
		t.Errorf("v1=%v: with a later usage %d, want 7010", v1, res.Tokens)
	}
	if res := measurePrefix(t, []byte(withUsage)); res.Tokens != 7010 {
		t.Errorf("v1=%v: from the end, with a later usage %d, want 7010", v1, res.Tokens)
	}
}

// TestGaugeKeptEntryNotFound: a first kept entry that is not there (or
// further back than the lookback) counts for nothing.
func TestGaugeKeptEntryNotFound(t *testing.T) {
	in, _ := piWithCompaction(false)
	in = strings.Replace(in, `"firstKeptEntryId":"m0000002"`, `"firstKeptEntryId":"gone0000"`, 1)
	res, err := Measure("in", bytes.NewReader([]byte(in)), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Tokens > 100 || measurePrefix(t, []byte(in)).Tokens != res.Tokens {
		t.Errorf("streamed %d, from the end %d: want the summary and what follows only", res.Tokens, measurePrefix(t, []byte(in)).Tokens)
	}
}

// BenchmarkMeasureStream gauges a file as a pipe would give it: the
// session of BS_GAUGE_BENCH, or a generated pi session of 32 MiB.
func BenchmarkMeasureStream(b *testing.B) {
	var data []byte
	if f := os.Getenv("BS_GAUGE_BENCH"); f != "" {
		var err error
		if data, err = os.ReadFile(f); err != nil {
			b.Fatal(err)
		}
	} else {
		in, _ := piSession(false, 320, 33000, 300)
		data = []byte(in)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := Measure("bench", bytes.NewReader(data), nil, Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGaugeFileFollowsThePath: a pi user went back (/tree) to message 40,
// before a compaction and the two turns after it, and typed a prompt. pi's
// context is the path from that prompt: messages 1 to 40, whose last usage
// is 4000, and the prompt. Read from the end, the gauge takes that usage,
// not the later one on the branch the user left; a roll note before the
// branch does not change that.
func TestGaugeFileFollowsThePath(t *testing.T) {
	for _, rolled := range []bool{false, true} {
		var b strings.Builder
		b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
		msg := func(id, parent, role, text string, usage int) {
			u := ""
			if usage > 0 {
				u = fmt.Sprintf(`,"usage":{"input":%d,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop"`, usage, usage)
			}
			fmt.Fprintf(&b, `{"type":"message","id":%q,"parentId":%s,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":%q,"content":[{"type":"text","text":%q}]%s}}`+"\n", id, parent, role, text, u)
		}
		parent := "null"
		for i := 1; i <= 40; i++ {
			id := fmt.Sprintf("m%07d", i)
			if i%2 == 1 {
				msg(id, parent, "user", "question", 0)
			} else {
				msg(id, parent, "assistant", "answer", 100*i)
			}
			parent = strconv.Quote(id)
			if rolled && i == 30 {
				// bs roll's compaction, appended at the end of the file
				// as it then was; the agent went on from it.
				b.WriteString(`{"type":"compaction","id":"r0000000","parentId":"m0000030","timestamp":"2026-03-08T12:00:30.000Z","summary":"rolled","firstKeptEntryId":"m0000029","tokensBefore":9000,"_rolled":{"by":"bs roll","tokens":1234,"kept_lines":0}}` + "\n")
				parent = `"r0000000"`
			}
		}
		b.WriteString(`{"type":"compaction","id":"c0000000","parentId":"m0000040","timestamp":"2026-03-08T12:01:00.000Z","summary":"before","firstKeptEntryId":"m0000039","tokensBefore":4000}` + "\n")
		msg("m0000041", `"c0000000"`, "user", "more", 0)
		msg("m0000042", `"m0000041"`, "assistant", "done", 500)
		msg("m0000043", `"m0000040"`, "user", "a prompt of forty characters, give or t", 0)
		in := b.String()
		if got := measurePrefix(t, []byte(in)); got.Tokens != 4010 || got.Source != "usage" {
			t.Errorf("rolled %v: from the end %d (%s), want the path's usage 4000 and the prompt's 10", rolled, got.Tokens, got.Source)
		}
	}
}

// TestGaugeClaudeSidechainTail: older Claude Code wrote a subagent's lines
// (isSidechain) into the main session's file. They are not in the main
// thread's context: the main thread's last usage stands, whether a
// subagent's answer with its own usage comes after it or not, streamed and
// from the end; a subagent's own file is read as its thread.
func TestGaugeClaudeSidechainTail(t *testing.T) {
	line := func(uuid, parent string, sidechain bool, role string, usage int) string {
		u := ""
		if usage > 0 {
			u = fmt.Sprintf(`,"usage":{"input_tokens":%d,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":0}`, usage)
		}
		return fmt.Sprintf(`{"parentUuid":%s,"isSidechain":%t,"type":%q,"message":{"id":"msg_%s","role":%q,"content":[{"type":"text","text":"abcdefgh"}]%s},"uuid":%q,"timestamp":"2026-03-08T12:00:00.000Z","sessionId":"s"}`+"\n",
			parent, sidechain, role, uuid, role, u, uuid)
	}
	main := line("m1", "null", false, "user", 0) + line("m2", `"m1"`, false, "assistant", 160000)
	sub := line("s1", "null", true, "user", 0) + line("s2", `"s1"`, true, "assistant", 3000)
	for _, c := range []struct {
		name, in string
		want     int
	}{
		{"main then subagent", main + sub, 160000},
		{"subagent's file", sub, 3000},
	} {
		streamed, err := Measure("s", strings.NewReader(c.in), nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if fromEnd := measurePrefix(t, []byte(c.in)); streamed.Tokens != c.want || fromEnd.Tokens != c.want {
			t.Errorf("%s: streamed %d, from the end %d, want %d", c.name, streamed.Tokens, fromEnd.Tokens, c.want)
		}
	}
}

// TestGaugeFileNumbersBadLines: read from the end, a file whose last usage
// follows a bs roll note is measured from that note on; a bad line
// between them is reported by its number in the file, not from the note.
func TestGaugeFileNumbersBadLines(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}` + "\n")
	parent := "null"
	for i := 1; i <= 10; i++ {
		fmt.Fprintf(&b, `{"type":"message","id":"m%d","parentId":%s,"timestamp":"2026-03-08T12:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"question"}]}}`+"\n", i, parent)
		parent = fmt.Sprintf(`"m%d"`, i)
	}
	b.WriteString(`{"type":"compaction","id":"r","parentId":"m10","timestamp":"2026-03-08T12:00:30.000Z","summary":"rolled","firstKeptEntryId":"m10","tokensBefore":9000,"_rolled":{"by":"bs roll","tokens":1234,"kept_lines":0}}` + "\n")
	b.WriteString(`{"usage": oops}` + "\n") // line 13
	b.WriteString(`{"type":"message","id":"a","parentId":"r","timestamp":"2026-03-08T12:00:40.000Z","message":{"role":"assistant","content":[{"type":"text","text":"answer"}],"usage":{"input":2000,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":2000},"stopReason":"stop"}}` + "\n")
	b.WriteString(`{"type":"message","id":"u","parentId":"a","timestamp":"2026-03-08T12:00:50.000Z","message":{"role":"user","content":[{"type":"text","text":"more"}]}}` + "\n")
	path := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var bad []int
	res, err := MeasureFile(f, Options{OnBadLine: func(e *transcript.BadLineError) error { bad = append(bad, e.Line); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || bad[0] != 13 || res.UsageTokens != 2000 {
		t.Errorf("bad lines reported %v, want [13]; usage %d, want 2000", bad, res.UsageTokens)
	}
}
