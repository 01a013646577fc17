package main

import (
	"bufio"
	"bytes"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestMCPReaderFrames: bad lines are answered with a JSON-RPC error and
// dropped, good ones are passed on whole, an over-long line costs one error
// and not the stream, and a last line without a line feed is delivered.
func TestMCPReaderFrames(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"` + strings.Repeat("a", 200) + `"}}`,
		`{bad`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":"s","method":"ping"}`,
	}, "\n")
	var out bytes.Buffer
	p := &pendingCalls{}
	r := &mcpReader{br: bufio.NewReaderSize(strings.NewReader(in), 16), out: &mcpWriter{w: &out, p: p}, p: p, max: 100, wait: time.Millisecond, log: slog.New(slog.DiscardHandler)}
	passed, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"method":"ping"}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"s","method":"ping"}
`
	if string(passed) != want {
		t.Errorf("passed on:\n%s\nwant:\n%s", passed, want)
	}
	wantOut := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the message is longer than 100 bytes"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the line is not JSON"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: the id must be a string or an integer"}}
{"jsonrpc":"2.0","id":1.5,"error":{"code":-32600,"message":"invalid request: the id must be a string or an integer"}}
`
	if out.String() != wantOut {
		t.Errorf("answered:\n%s\nwant:\n%s", out.String(), wantOut)
	}
	if p.open != 2 {
		t.Errorf("%d requests pending, want 2 (ids 1 and \"s\")", p.open)
	}
}
