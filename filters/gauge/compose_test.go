package gauge_test

import (
	"bytes"
	"context"

	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/trim"
	"github.com/bstools/bs/internal/corpustest"
)

// A filter of the pipelines the accounting must agree across.
type filter struct {
	name string
	run  func(in []byte, store blobstore.Store) ([]byte, error)
}

var now = time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

func filters() []filter {
	ctx := context.Background()
	return []filter{
		{"extract", func(in []byte, store blobstore.Store) ([]byte, error) {
			o := extract.Defaults()
			o.Store, o.Now = store, now
			var out bytes.Buffer
			_, err := extract.Run(ctx, "in", bytes.NewReader(in), &out, o)
			return out.Bytes(), err
		}},
		{"trim", func(in []byte, store blobstore.Store) ([]byte, error) {
			o := trim.Defaults()
			o.Store, o.Now = store, now
			var out bytes.Buffer
			_, err := trim.Run(ctx, "in", bytes.NewReader(in), &out, o)
			return out.Bytes(), err
		}},
		{"archive", func(in []byte, store blobstore.Store) ([]byte, error) {
			o := archive.Defaults()
			o.Store, o.Now = store, now
			var out bytes.Buffer
			_, err := archive.Run(ctx, "in", bytes.NewReader(in), &out, o)
			return out.Bytes(), err
		}},
		{"roll", func(in []byte, store blobstore.Store) ([]byte, error) {
			// Low enough that most sessions of the corpus roll.
			o := roll.Defaults()
			o.Trigger, o.Target, o.Store, o.Now = 0.25, 0.15, store, now
			var out bytes.Buffer
			_, err := roll.Run(ctx, "in", bytes.NewReader(in), &out, o)
			return out.Bytes(), err
		}},
	}
}

func restoreAll(in []byte, store blobstore.Store) ([]byte, error) {
	var out bytes.Buffer
	_, _, err := restore.Run(context.Background(), "in", bytes.NewReader(in), &out, restore.Options{All: true, Store: store})
	return out.Bytes(), err
}

func measure(t *testing.T, data []byte) gauge.Result {
	t.Helper()
	res, err := gauge.Measure("in", bytes.NewReader(data), nil, gauge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// gauge FILE reads from the end: it must agree with the stream.
	f := filepath.Join(t.TempDir(), "f.jsonl")
	if err := os.WriteFile(f, data, 0o600); err != nil {
		t.Fatal(err)
	}
	fh, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	file, err := gauge.MeasureFile(fh, gauge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if file.Tokens != res.Tokens {
		t.Errorf("gauge FILE reads %d, the stream %d", file.Tokens, res.Tokens)
	}
	return res
}

// runtimeTokens is the context as the runtime would load it, estimated
// (no usage): what moved out of it between two files is what a filter
// took out, counted independently of what the filter recorded.
func runtimeTokens(t *testing.T, data []byte) int {
	t.Helper()
	res, err := gauge.MeasureRuntime("in", bytes.NewReader(data), gauge.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Tokens
}

// TestFiltersAgreeOnTheContext: on every corpus session that carries
// usage, for every pipeline of one or two of extract, trim, archive and
// roll, the gauge of the output is the gauge of the input less what the
// pipeline took out of the context the runtime loads, worth what the
// transcript's own usage says an estimated token is, within 2% of the
// window; and restore --all brings the figure back exactly.
func TestFiltersAgreeOnTheContext(t *testing.T) {
	files := corpustest.Files(t, "*/*.jsonl")
	fs := filters()
	var pipelines [][]filter
	for _, a := range fs {
		pipelines = append(pipelines, []filter{a})
		for _, b := range fs {
			pipelines = append(pipelines, []filter{a, b})
		}
	}
	tested, worst, worstName := 0, 0.0, ""
	for _, file := range files {
		in, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		before := measure(t, in)
		if before.Source != "usage" {
			continue
		}
		cal, err := gauge.Calibrate("in", bytes.NewReader(in), gauge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		runtimeBefore := runtimeTokens(t, in)
		tested++
		for _, p := range pipelines {
			name := filepath.Base(file)
			for _, f := range p {
				name += "|" + f.name
			}
			t.Run(name, func(t *testing.T) {
				store := new(blobstore.Mem)
				out := in
				for _, f := range p {
					if out, err = f.run(out, store); err != nil {
						t.Fatal(err)
					}
				}
				after := measure(t, out)
				took := runtimeBefore - runtimeTokens(t, out)
				want := before.Tokens - int(math.Round(cal.Scale*float64(took)))
				d := math.Abs(float64(after.Tokens - want))
				if d/float64(after.Window) > worst {
					worst, worstName = d/float64(after.Window), name
				}
				if d > 0.02*float64(after.Window) {
					t.Errorf("gauge %d, want %d: %d before less %d estimated tokens taken out, worth %v each (off by %.1f%% of the window)",
						after.Tokens, want, before.Tokens, took, cal.Scale, 100*d/float64(after.Window))
				}
				back, err := restoreAll(out, store)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(back, in) {
					t.Fatal("restore --all does not give the input back")
				}
				if got := measure(t, back); got.Tokens != before.Tokens {
					t.Errorf("after restore --all the gauge reads %d, before %d", got.Tokens, before.Tokens)
				}
			})
		}
	}
	if tested == 0 {
		t.Skip("no corpus session with usage")
	}
	t.Logf("%d sessions, %d pipelines each; the farthest off: %s, by %.2f%% of the window", tested, len(pipelines), worstName, 100*worst)
}

// TestExtractFollowsTheBranch: in a pi session whose user went back to an
// earlier entry and went on from it, what extract takes out of the branch
// left behind is not in the context: the gauge of the output reads what
// it reads of the same extraction of the path alone, and less than the
// file gave before only by what extract took off that path.
func TestExtractFollowsTheBranch(t *testing.T) {
	var branched, path strings.Builder
	both := func(b bool, s string) {
		branched.WriteString(s)
		if b {
			path.WriteString(s)
		}
	}
	both(true, `{"type":"session","version":3,"id":"s","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/"}`+"\n")
	turn := func(onPath bool, n int, parent string, output int) string {
		id := func(k int) string { return fmt.Sprintf("%02d%06d", n, k) }
		ts := `"timestamp":"2026-03-08T12:00:00.000Z"`
		both(onPath, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%s,%s,"message":{"role":"user","content":[{"type":"text","text":"step %d"}]}}`+"\n", id(1), parent, ts, n))
		both(onPath, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,%s,"message":{"role":"assistant","content":[{"type":"toolCall","id":"call%d","name":"bash","arguments":{"command":"ls"}}],"model":"claude-sonnet-4-5","usage":{"input":%d,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"toolUse"}}`+"\n", id(2), id(1), ts, n, 1000*n, 1000*n+10))
		both(onPath, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,%s,"message":{"role":"toolResult","toolCallId":"call%d","toolName":"bash","content":[{"type":"text","text":%q}],"isError":false}}`+"\n", id(3), id(2), ts, n, strings.Repeat("output line\n", output)))
		both(onPath, fmt.Sprintf(`{"type":"message","id":%q,"parentId":%q,%s,"message":{"role":"assistant","content":[{"type":"text","text":"done"}],"model":"claude-sonnet-4-5","usage":{"input":%d,"output":10,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop"}}`+"\n", id(4), id(3), ts, 1000*n+500, 1000*n+510))
		return strconv.Quote(id(4))
	}
	root := turn(true, 1, "null", 400) // on the path: a value extract moves
	left := turn(false, 2, root, 4000) // the branch the user left
	turn(false, 3, left, 10)           // ends that branch
	last := turn(true, 4, root, 10)    // the user went back to turn 1
	turn(true, 5, last, 10)            // and on
	o := extract.Defaults()
	o.KeepRecent, o.Now = 0, now
	run := func(in string) (string, gauge.Result) {
		t.Helper()
		o.Store = new(blobstore.Mem)
		var out bytes.Buffer
		if _, err := extract.Run(context.Background(), "in", strings.NewReader(in), &out, o); err != nil {
			t.Fatal(err)
		}
		return out.String(), measure(t, out.Bytes())
	}
	out, after := run(branched.String())
	_, alone := run(path.String())
	if after.Tokens != alone.Tokens {
		t.Errorf("after extract the gauge reads %d, of the path alone %d", after.Tokens, alone.Tokens)
	}
	before := measure(t, []byte(branched.String()))
	if strings.Count(out, `"_extracted"`) != 2 || after.Tokens >= before.Tokens {
		t.Errorf("extract moved %d values, the gauge went from %d to %d: want the two long outputs moved and the figure down", strings.Count(out, `"_extracted"`), before.Tokens, after.Tokens)
	}
}
