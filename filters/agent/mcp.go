package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bstools/bs/internal/rpcguard"
)

// maxLine bounds a message ServeStdio reads.
const maxLine = mcp.DefaultMaxLineLength

// ServeStdio serves a's tools (NewMCPServer) over the JSON-RPC stream in
// and out, as bs mcp does on its standard input and output, until in ends,
// which ends it cleanly. Each message is checked first (internal/rpcguard,
// with guard's Wait, Log and Message; ServeStdio sets its Max), so that a
// bad frame is answered rather than ending the session.
func ServeStdio(ctx context.Context, a *Agent, many bool, in io.Reader, out io.Writer, guard rpcguard.Options) error {
	guard.Max = maxLine
	r, w := rpcguard.New(in, out, guard)
	// The guard passes on one checked line of at most maxLine bytes at a
	// time, so the SDK's own bound is never the one that trips.
	t := &mcp.IOTransport{Reader: r, Writer: w, MaxLineLength: 2*maxLine + 4096}
	err := NewMCPServer(a, many).Run(ctx, t)
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}

// NewMCPServer is an MCP server offering a's tools. Serving many sessions
// (a sessions directory), each tool takes a session argument; serving
// one, it has none.
func NewMCPServer(a *Agent, many bool) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "bs", Title: "bs: lean agent transcripts", Version: "1"},
		&mcp.ServerOptions{Instructions: instructions})
	addTool[PurgeControlArgs](s, a, toolPurgeControl, descPurgeControl, many, true)
	addTool[RestoreArgs](s, a, toolRestore, descRestore, many, true)
	addTool[SearchArgs](s, a, toolSearch, descSearch, many, true)
	addTool[CheckpointArgs](s, a, toolCheckpoint, descCheckpoint, many, false)
	return s
}

// addTool adds the tool name whose arguments are In. The handler passes
// the raw arguments to Agent.Call, the one dispatch bs tool uses too.
func addTool[In any](s *mcp.Server, a *Agent, name, desc string, many, sessionOptional bool) {
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
		for _, a := range actions {
			p.Enum = append(p.Enum, a)
		}
	}
	if p := schema.Properties["value"]; p != nil {
		p.Types = []string{"boolean", "integer"}
	}
	s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, isErr := a.Call(ctx, name, req.Params.Arguments)
			b, err := MarshalResult(res)
			if err != nil {
				return nil, err
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, IsError: isErr}, nil
		})
}

// Abs makes the served file absolute, so that results name it wherever
// the runtime started bs.
func (s Sessions) Abs() Sessions {
	if s.File != "" {
		if abs, err := filepath.Abs(s.File); err == nil {
			s.File = abs
		}
	}
	return s
}

// MarshalResult is the JSON of a tool result, with <, > and & as they
// are, as bs mcp and bs tool print it.
func MarshalResult(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
