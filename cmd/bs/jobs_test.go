package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestJobsTakesCoresForTheRunOnly: -j N caps the cores of one extract at
// N and gives them back after, so that a program running bs in process
// (or the next command of bs watch) is not left on one core.
func TestJobsTakesCoresForTheRunOnly(t *testing.T) {
	in, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sample", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	old := runtime.GOMAXPROCS(4)
	defer runtime.GOMAXPROCS(old)
	var outs [][]byte
	for _, j := range []string{"1", "8"} {
		var out, errb bytes.Buffer
		args := []string{"bs", "extract", "--no-index", "--keep-recent", "1", "--min-length", "50", "-j", j, "--store", filepath.Join(t.TempDir(), "s")}
		if code := run(args, bytes.NewReader(in), &out, &errb); code != 0 {
			t.Fatalf("-j %s: exit %d: %s", j, code, errb.String())
		}
		if n := runtime.GOMAXPROCS(0); n != 4 {
			t.Fatalf("after extract -j %s GOMAXPROCS is %d, want the 4 it was", j, n)
		}
		outs = append(outs, out.Bytes())
	}
	if !bytes.Equal(outs[0], outs[1]) || !bytes.Contains(outs[0], []byte("extracted-")) {
		t.Error("-j 1 and -j 8 gave different output, or nothing moved")
	}
}
