package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/agent"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/searchqueue"
)

func mcpCommand() *cli.Command {
	return &cli.Command{
		Name:  "mcp",
		Usage: "serve the agent tools (purge_control, restore, search, checkpoint) over MCP on stdio",
		Description: "A Model Context Protocol server on standard input and output, for Claude Code, Codex, " +
			"OpenClaw and other agent runtimes. With --session FILE the tools act on that transcript; with " +
			"--sessions-dir DIR each call names its session (an OpenClaw session key, a session id, or a path " +
			"inside DIR; anything resolving outside DIR is refused). Restores and set_extractable rewrite the " +
			"transcript as -i does (bs's lock and the runtime's, atomic rename, lines appended meanwhile kept), " +
			"waiting up to --lock-timeout for a file changed within --quiet-period. Standard output carries the " +
			"protocol only; logs go to standard error.",
		Flags:  agentFlags(),
		Action: runMCP,
	}
}

// agentFlags are the flags of bs mcp and bs tool.
func agentFlags() []cli.Flag {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "session", Usage: "act on this transcript `FILE`"},
		&cli.StringFlag{Name: "sessions-dir", Usage: "act on the transcripts inside `DIR`, named by each call's session argument"},
		&cli.BoolFlag{Name: "keep-restore-calls", Usage: "do not mark restore and purge_control tool calls _redacted"},
		&cli.StringFlag{Name: "checkpoint-dir", EnvVars: []string{"BS_CHECKPOINT_DIR"}, Usage: "the checkpoint directory (default: $XDG_STATE_HOME/bs/checkpoints)"},
	}
	flags = append(flags, indexFlags()...)
	return append(flags, commonFlagsWhere(func(name string) bool {
		return slices.Contains([]string{"store", "format", "now", "log-level", "lock-timeout", "quiet-period", "force"}, name)
	})...)
}

// newAgent builds the tools' environment from the flags.
func newAgent(c *cli.Context) (*agent.Agent, *common, error) {
	cm, err := parseCommon(c)
	if err != nil {
		return nil, nil, err
	}
	cm.files = nil
	if c.NArg() > 0 {
		return nil, nil, usagef(msgAgentArgs)
	}
	sessions := agent.Sessions{File: c.String("session"), Dir: c.String("sessions-dir")}
	if (sessions.File == "") == (sessions.Dir == "") {
		return nil, nil, usagef(msgAgentSession)
	}
	if sessions.File != "" {
		if info, err := os.Stat(sessions.File); err != nil || !info.Mode().IsRegular() {
			return nil, nil, usagef(msgAgentNoSession, sessions.File)
		}
	} else if info, err := os.Stat(sessions.Dir); err != nil || !info.IsDir() {
		return nil, nil, usagef(msgAgentNoDir, sessions.Dir)
	}
	store, err := cm.openStore()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now
	if c.String("now") != "" {
		fixed := cm.now
		now = func() time.Time { return fixed }
	}
	ip := cm.ip
	cpDir := checkpoint.Dir{Root: c.String("checkpoint-dir")}
	if cpDir.Root == "" {
		cpDir.Root = filepath.Join(stateDir(), "checkpoints")
	}
	ixPath := indexPath(c)
	env := agent.Env{
		Sessions:         absSessions(sessions),
		Store:            store,
		Format:           cm.format,
		Now:              now,
		Log:              cm.log,
		KeepRestoreCalls: c.Bool("keep-restore-calls"),
		Rewrite: func(ctx context.Context, path string, edit agent.EditFunc) error {
			return rewriteWhenQuiet(ctx, ip, path, edit)
		},
		Search: searchIndex(ixPath),
		Checkpoint: func(path string) (string, error) {
			key, err := checkpoint.KeyOfFile(path, cm.format)
			if err != nil {
				return "", err
			}
			cp, _, err := cpDir.Latest(key)
			if errors.Is(err, checkpoint.ErrNone) {
				return "", fmt.Errorf(msgAgentNoCheckpoint, key)
			}
			if err != nil {
				return "", err
			}
			return checkpoint.Render(cp), nil
		},
	}
	return agent.New(env), cm, nil
}

// searchIndex searches the index at ixPath, adding the rows the filters
// queued first; an index that is not there (nor queued rows) is an error,
// never a new empty one.
func searchIndex(ixPath string) func(ctx context.Context, q index.Query) ([]index.Hit, error) {
	return func(ctx context.Context, q index.Query) ([]index.Hit, error) {
		_, err := os.Stat(ixPath)
		if _, perr := os.Stat(searchqueue.PendingDir(ixPath)); err != nil && perr != nil {
			return nil, errors.New(msgAgentNoIndex)
		}
		ix, err := openIndex(ctx, ixPath, ui{io.Discard}, nil)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		return ix.Search(ctx, q)
	}
}

// rewriteWhenQuiet rewrites path with edit through the in-place code,
// retrying while the file is busy (changed within --quiet-period, or
// locked) until --lock-timeout: a tool call arrives just after the runtime
// wrote the call to the transcript.
func rewriteWhenQuiet(ctx context.Context, ip inplace.Options, path string, edit agent.EditFunc) error {
	deadline := time.Now().Add(ip.LockTimeout)
	for {
		err := rewriteFile(ctx, ip, path, func(src *os.File, n int64, w io.Writer) error { return edit(src, n, w) })
		var busy *busyError
		if !errors.As(err, &busy) || time.Now().After(deadline) {
			return err
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

func runMCP(c *cli.Context) error {
	a, cm, err := newAgent(c)
	if err != nil {
		return err
	}
	server := newMCPServer(a, c.String("sessions-dir") != "")
	p := &pendingCalls{}
	out := &mcpWriter{w: c.App.Writer, p: p}
	in := &mcpReader{br: bufio.NewReaderSize(c.App.Reader, 64<<10), out: out, p: p, max: mcpMaxLine, log: cm.log, wait: time.Minute}
	// mcpReader passes on one checked line of at most mcpMaxLine bytes at
	// a time, so the SDK's own bound is never the one that trips.
	t := &mcp.IOTransport{Reader: io.NopCloser(in), Writer: out, MaxLineLength: 2*mcpMaxLine + 4096}
	cm.log.Info("serving MCP on stdio", "session", c.String("session"), "sessions_dir", c.String("sessions-dir"))
	err = server.Run(c.Context, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// mcpMaxLine bounds a message read (a variable for tests).
var mcpMaxLine = mcp.DefaultMaxLineLength

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

// mcpReader stands between standard input and the SDK, whose connection
// ends on the first message it cannot decode. It reads a line at a time,
// passes on the JSON-RPC 2.0 messages, and answers any other line itself
// with a JSON-RPC error (-32700 for what is not JSON, -32600 for what is
// not a message bs serves: a batch, a null or object id, another version,
// a line over max bytes), so that one bad frame costs one error response.
type mcpReader struct {
	br   *bufio.Reader
	out  *mcpWriter
	p    *pendingCalls
	max  int
	log  *slog.Logger
	wait time.Duration // how long the end of input waits for the answers
	buf  []byte        // the checked line being read by the SDK
	err  error         // the error ending the input, once met
	long bool          // discarding the rest of an over-long line
}

func (r *mcpReader) Read(b []byte) (int, error) {
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
			r.reject(nil, -32600, fmt.Sprintf(msgMCPTooLong, r.max))
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
func (r *mcpReader) line() (line []byte, long bool, err error) {
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
func (r *mcpReader) check(line []byte) {
	if !json.Valid(line) {
		r.reject(nil, -32700, msgMCPParse)
		return
	}
	if line[0] == '[' {
		r.reject(nil, -32600, msgMCPBatch)
		return
	}
	var m map[string]json.RawMessage
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		r.reject(nil, -32600, msgMCPNotObject)
		return
	}
	id, hasID := m["id"]
	if hasID {
		switch id[0] {
		case '"':
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			if bytes.ContainsAny(id, ".eE") { // the SDK would answer 1.5 as 1
				r.reject(id, -32600, msgMCPBadID)
				return
			}
		default:
			r.reject(nil, -32600, msgMCPBadID)
			return
		}
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		r.reject(id, -32600, msgMCPVersion)
		return
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		r.reject(id, -32600, fmt.Sprintf(msgMCPInvalid, err))
		return
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.ID.IsValid() {
		r.p.add(1)
	}
	r.buf = append(append(r.buf[:0], line...), '\n')
}

// reject answers a bad message with a JSON-RPC error, with its id when it
// could be read (else null).
func (r *mcpReader) reject(id json.RawMessage, code int, message string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
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

// mcpWriter is standard output, shared by the SDK's responses and
// mcpReader's errors: one lock keeps their frames whole.
type mcpWriter struct {
	mu      sync.Mutex
	w       io.Writer
	p       *pendingCalls
	partial []byte
}

func (c *mcpWriter) Write(b []byte) (int, error) {
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

func (c *mcpWriter) Close() error { return nil }

// newMCPServer registers the agent's tools. With many sessions, each tool
// takes a session argument; with one, it has none.
func newMCPServer(a *agent.Agent, many bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bs", Title: "bs: lean agent transcripts", Version: "1"},
		&mcp.ServerOptions{Instructions: agent.Instructions})
	addTool[agent.PurgeControlArgs](s, a, agent.ToolPurgeControl, agent.DescPurgeControl, many, true)
	addTool[agent.RestoreArgs](s, a, agent.ToolRestore, agent.DescRestore, many, true)
	addTool[agent.SearchArgs](s, a, agent.ToolSearch, agent.DescSearch, many, true)
	addTool[agent.CheckpointArgs](s, a, agent.ToolCheckpoint, agent.DescCheckpoint, many, false)
	return s
}

// addTool adds the tool name whose arguments are In. The handler passes
// the raw arguments to agent.Call, the one dispatch bs tool uses too.
func addTool[In any](s *mcp.Server, a *agent.Agent, name, desc string, many, sessionOptional bool) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		panic(err)
	}
	if !many {
		delete(schema.Properties, "session")
		schema.PropertyOrder = slices.DeleteFunc(schema.PropertyOrder, func(p string) bool { return p == "session" })
	} else if !sessionOptional {
		schema.Required = append(schema.Required, "session")
	}
	if p := schema.Properties["action"]; p != nil {
		p.Enum = nil
		for _, a := range agent.Actions {
			p.Enum = append(p.Enum, a)
		}
	}
	if p := schema.Properties["value"]; p != nil {
		p.Types = []string{"boolean", "integer"}
	}
	s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, isErr := a.Call(ctx, name, req.Params.Arguments)
			b, err := marshalResult(res)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, IsError: isErr}, nil
		})
}

// absSessions makes the served file absolute, so results name it wherever
// the runtime started bs.
func absSessions(s agent.Sessions) agent.Sessions {
	if s.File != "" {
		if abs, err := filepath.Abs(s.File); err == nil {
			s.File = abs
		}
	}
	return s
}

// marshalResult is the JSON of a tool result, with <, > and & as they are.
func marshalResult(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
