package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkProfile runs one bs command line in process on a file, for
// profiling with the go tool's flags, e.g.
//
//	BS_PROFILE_IN=session.jsonl BS_PROFILE_ARGS='extract --no-index --store @STORE@' \
//	  go test ./cmd/bs -run '^$' -bench Profile -benchtime 5x -cpuprofile cpu.out
//	go tool pprof -top -cum cmd/bs.test cpu.out   # or -http :8080
//
// The file is standard input and standard output is /dev/null, as for
// 'bs CMD < FILE > /dev/null'; @STORE@ in the arguments stands for a new,
// empty store each iteration, and @IN@ for the file's path (for commands
// that take a file: 'trim --lossy @IN@', 'roll --store DIR @IN@', where a
// store named outright is warm after the first iteration). Without
// BS_PROFILE_IN it is skipped. Unlike timing the binary it leaves out
// process start and a cold heap, which is what the engine's own costs need.
func BenchmarkProfile(b *testing.B) {
	in := os.Getenv("BS_PROFILE_IN")
	if in == "" {
		b.Skip("set BS_PROFILE_IN (and BS_PROFILE_ARGS) to profile a command")
	}
	data, err := os.ReadFile(in)
	if err != nil {
		b.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	dir := b.TempDir()
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		args := []string{"bs"}
		for _, a := range strings.Fields(os.Getenv("BS_PROFILE_ARGS")) {
			a = strings.ReplaceAll(a, "@STORE@", filepath.Join(dir, fmt.Sprint(i)))
			args = append(args, strings.ReplaceAll(a, "@IN@", in))
		}
		var errb bytes.Buffer
		if code := run(args, bytes.NewReader(data), null, &errb); code != 0 {
			b.Fatalf("%v: exit %d: %s", args, code, errb.String())
		}
	}
}
