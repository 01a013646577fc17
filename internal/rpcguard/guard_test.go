package rpcguard

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestFrames: bad lines are answered with a JSON-RPC error and
// dropped, good ones are passed on whole, an over-long line costs one error
// and not the stream, and a last line without a line feed is delivered.
func TestFrames(t *testing.T) {
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
	r := &reader{br: bufio.NewReaderSize(strings.NewReader(in), 16), out: &writer{w: &out, p: p}, p: p, max: 100, wait: time.Millisecond, log: slog.New(slog.DiscardHandler), message: words}
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
	wantOut := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"too long: 100"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"not JSON"}}
{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bad id"}}
{"jsonrpc":"2.0","id":1.5,"error":{"code":-32600,"message":"bad id"}}
`
	if out.String() != wantOut {
		t.Errorf("answered:\n%s\nwant:\n%s", out.String(), wantOut)
	}
	if p.open != 2 {
		t.Errorf("%d requests pending, want 2 (ids 1 and \"s\")", p.open)
	}
}

// words names each problem for the tests.
func words(p Problem) string {
	switch p.Kind {
	case NotJSON:
		return "not JSON"
	case BadID:
		return "bad id"
	case TooLong:
		return fmt.Sprintf("too long: %d", p.Max)
	}
	return fmt.Sprintf("kind %d: %v", p.Kind, p.Err)
}

// TestEndWaitsForAnswers: the end of input reaches the server only once
// every request it read has been answered (or Wait has passed), so that a
// piped session gets all its responses.
func TestEndWaitsForAnswers(t *testing.T) {
	var out bytes.Buffer
	r, w := New(strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n"), &out, Options{Max: 1000, Wait: 5 * time.Second, Log: slog.New(slog.DiscardHandler), Message: words})
	line := make([]byte, 100)
	if _, err := r.Read(line); err != nil {
		t.Fatal(err)
	}
	ended := make(chan time.Time, 1)
	go func() {
		io.ReadAll(r)
		ended <- time.Now()
	}()
	time.Sleep(50 * time.Millisecond)
	answered := time.Now()
	w.Write([]byte(`{"jsonrpc":"2.0","id":7,"result":{}}` + "\n"))
	select {
	case at := <-ended:
		if at.Before(answered) {
			t.Error("the input ended before the request was answered")
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the input did not end after the answer")
	}
	if out.String() != `{"jsonrpc":"2.0","id":7,"result":{}}`+"\n" {
		t.Errorf("out %q", out.String())
	}
}
