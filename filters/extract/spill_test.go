package extract

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
)

// TestSpilledLinesMoveAsInMemory: with room in memory for no waiting line
// at all, every line waiting for its fate goes to the spill file and back,
// and the output is byte for byte what it is with room for all of them:
// a huge value waiting for the messages after it is extracted, not kept.
func TestSpilledLinesMoveAsInMemory(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/*/*.jsonl")
	files = append(files, "../../testdata/sample/session.jsonl")
	tokens := 1000
	rounds := []byte(piRounds(0, 12, &tokens, 10))
	run := func(name string, in []byte) (string, Stats, string) {
		t.Helper()
		var log bytes.Buffer
		opt := Defaults()
		opt.Store = &blobstore.Mem{}
		opt.Log = slog.New(slog.NewTextHandler(&log, nil))
		var out bytes.Buffer
		st, err := Run(context.Background(), name, bytes.NewReader(in), &out, opt)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return out.String(), st, log.String()
	}
	check := func(name string, in []byte) {
		want, wst, _ := run(name, in)
		defer func(q int) { maxQueued = q }(maxQueued)
		maxQueued = 0
		got, st, log := run(name, in)
		if got != want || st != wst {
			t.Errorf("%s: spilled, the output differs (%d values moved, %d in memory)", name, st.Values, wst.Values)
		}
		if strings.Contains(log, "kept") || strings.Contains(log, "spill") {
			t.Errorf("%s: spilling warned: %s", name, log)
		}
	}
	check("rounds", rounds)
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		check(filepath.Base(f), in)
	}
	if _, st, _ := run("rounds", rounds); st.Values == 0 {
		t.Fatal("nothing moved: the test shows nothing")
	}
}
