// Package rpcguard stands between a JSON-RPC 2.0 stream on stdio and a
// server whose connection ends on the first message it cannot decode (the
// MCP SDK's): it passes on one checked message line at a time, answers any
// other line itself with a JSON-RPC error, so that one bad frame costs one
// error response, and holds back the end of input until every request
// read has had its response.
package rpcguard

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Kind is what is wrong with a line.
type Kind int

const (
	invalid    Kind = iota // the SDK cannot decode it (Problem.Err)
	NotJSON                // not JSON: -32700
	Batch                  // a batch, which is not served
	NotObject              // not an object
	BadID                  // an id that is not a string or an integer
	BadVersion             // not "jsonrpc":"2.0"
	TooLong                // over Options.Max bytes
)

// Problem is a line the guard answers instead of passing on.
type Problem struct {
	Kind Kind
	Max  int   // Options.Max, for TooLong
	Err  error // the SDK's error, for invalid
}

// Options configure a guard.
type Options struct {
	Max     int                  // the longest line passed on, in bytes
	Wait    time.Duration        // how long the end of input waits for the answers
	Log     *slog.Logger         // where bad messages are logged
	Message func(Problem) string // the error message that answers a problem
}

// New guards the stream in: the server reads the checked messages from r
// and writes its responses to w, which shares out with the guard's errors.
func New(in io.Reader, out io.Writer, opt Options) (r io.ReadCloser, w io.WriteCloser) {
	p := &pendingCalls{}
	wr := &writer{w: out, p: p}
	rd := &reader{br: bufio.NewReaderSize(in, 64<<10), out: wr, p: p, max: opt.Max, log: opt.Log, wait: opt.Wait, message: opt.Message}
	return io.NopCloser(rd), wr
}

// The end of standard input ends the session, and the SDK drops the calls
// still running. So that 'printf ... | bs mcp' answers every request, the
// end of input is held back until each request read has had its response.

// pendingCalls counts the requests read and not yet answered.
type pendingCalls struct {
	mu   sync.Mutex
	open int
}

func (p *pendingCalls) add(n int) {
	p.mu.Lock()
	p.open += n
	p.mu.Unlock()
}

// drain waits until every request has been answered, or for at most max.
func (p *pendingCalls) drain(max time.Duration) {
	deadline := time.Now().Add(max)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		open := p.open
		p.mu.Unlock()
		if open <= 0 {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// rpcHead is what tells JSON-RPC messages apart: a request has an id and
// a method, a response an id and none.
type rpcHead struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// countLines calls count for each whole line of the stream, keeping the
// unfinished rest in *partial.
func countLines(partial *[]byte, b []byte, count func(rpcHead)) {
	*partial = append(*partial, b...)
	for {
		i := bytes.IndexByte(*partial, '\n')
		if i < 0 {
			return
		}
		var h rpcHead
		if json.Unmarshal((*partial)[:i], &h) == nil && len(h.ID) > 0 {
			count(h)
		}
		*partial = (*partial)[i+1:]
	}
}

// reader stands between standard input and the server. It reads a line
// at a time, passes on the JSON-RPC 2.0 messages, and answers any other
// line itself with a JSON-RPC error (-32700 for what is not JSON, -32600
// for what is not a message the server takes: a batch, a null or object
// id, another version, a line over max bytes).
type reader struct {
	br   *bufio.Reader
	out  *writer
	p    *pendingCalls
	max  int
	log  *slog.Logger
	wait time.Duration // how long the end of input waits for the answers
	buf  []byte        // the checked line being read by the SDK
	err  error         // the error ending the input, once met
	long bool          // discarding the rest of an over-long line
	// message words the error answering a problem.
	message func(Problem) string
}

func (r *reader) Read(b []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			if r.err == io.EOF {
				r.p.drain(r.wait)
			}
			return 0, r.err
		}
		line, long, err := r.line()
		if err != nil {
			r.err = err
		}
		switch {
		case long:
			r.reject(nil, -32600, Problem{Kind: TooLong, Max: r.max})
		case len(line) > 0:
			r.check(line)
		}
	}
	n := copy(b, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// line reads the next line without its line feed (the last one may lack
// it). long says it was over max bytes; its bytes are then dropped.
func (r *reader) line() (line []byte, long bool, err error) {
	for {
		frag, err := r.br.ReadSlice('\n')
		if !long {
			if len(line)+len(frag) > r.max+1 {
				long, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSpace(line), long, err
	}
}

// check passes line on to the SDK if it is a JSON-RPC 2.0 message, and
// answers it with an error otherwise.
func (r *reader) check(line []byte) {
	if !json.Valid(line) {
		r.reject(nil, -32700, Problem{Kind: NotJSON})
		return
	}
	if line[0] == '[' {
		r.reject(nil, -32600, Problem{Kind: Batch})
		return
	}
	var m map[string]json.RawMessage
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		r.reject(nil, -32600, Problem{Kind: NotObject})
		return
	}
	id, hasID := m["id"]
	if hasID {
		switch id[0] {
		case '"':
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if bytes.ContainsAny(id, ".eE") { // the SDK would answer 1.5 as 1
				r.reject(id, -32600, Problem{Kind: BadID})
				return
			}
		default:
			r.reject(nil, -32600, Problem{Kind: BadID})
			return
		}
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		r.reject(id, -32600, Problem{Kind: BadVersion})
		return
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		r.reject(id, -32600, Problem{Kind: invalid, Err: err})
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		r.p.add(1)
	}
	r.buf = append(append(r.buf[:0], line...), '\n')
}

// reject answers a bad message with a JSON-RPC error, with its id when it
// could be read (else null).
func (r *reader) reject(id json.RawMessage, code int, p Problem) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	message := r.message(p)
	r.log.Warn("mcp: bad message", "code", code, "error", message)
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	b, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, message}})
	if err != nil {
		return
	}
	r.out.mu.Lock()
	defer r.out.mu.Unlock()
	r.out.w.Write(append(b, '\n'))
}

// writer is standard output, shared by the server's responses and the
// reader's errors: one lock keeps their frames whole.
type writer struct {
	mu      sync.Mutex
	w       io.Writer
	p       *pendingCalls
	partial []byte
}

func (c *writer) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.w.Write(b)
	countLines(&c.partial, b[:n], func(h rpcHead) {
		if h.Method == "" {
			c.p.add(-1)
		}
	})
	return n, err
}

func (c *writer) Close() error { return nil }
