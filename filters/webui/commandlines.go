package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
)

// CommandLines are the Commands as the bs command lines the interface
// names, run by Run.
type CommandLines struct {
	// Run runs 'bs CMD ARGS... -- FILE' with the flags of the server's
	// own command that CMD takes too (but those named in skip), its
	// standard output going to stdout. A failure is a *CommandError.
	Run func(ctx context.Context, cmd string, args []string, file string, stdout *bytes.Buffer, skip ...string) error
}

// Stats is 'bs stats --json FILE'.
func (c CommandLines) Stats(ctx context.Context, path string) (json.RawMessage, error) {
	var out bytes.Buffer
	if err := c.Run(ctx, "stats", []string{"--json"}, path, &out); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(out.Bytes())), nil
}

// Preview runs 'bs FILTER FILE' into out with a scratch store beside it.
func (c CommandLines) Preview(ctx context.Context, filter, path, out string) error {
	scratch := filepath.Join(filepath.Dir(out), "store")
	var buf bytes.Buffer
	// The values go to a scratch store, unencrypted and private like any
	// store, which goes with the preview; nothing is indexed.
	if err := c.Run(ctx, filter, []string{"--store=" + scratch, "--no-index"}, path, &buf, "store", "cache", "cache-size", "encrypt-to", "index"); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o600)
}

// Apply is 'bs FILTER -i FILE'.
func (c CommandLines) Apply(ctx context.Context, filter, path string) error {
	return c.Run(ctx, filter, []string{"-i"}, path, &bytes.Buffer{})
}

// Restore is 'bs restore --id ID --result RESULT -i FILE', and returns
// RESULT.
func (c CommandLines) Restore(ctx context.Context, path, id string) (json.RawMessage, error) {
	dir, err := os.MkdirTemp("", "bs-ui-restore-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	result := filepath.Join(dir, "result.json")
	if err := c.Run(ctx, "restore", []string{"--id", id, "--result", result, "-i"}, path, &bytes.Buffer{}); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(result)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimSpace(b)), nil
}

// SetExtractable is 'bs restore --set-extractable ID=VALUE -i FILE'.
func (c CommandLines) SetExtractable(ctx context.Context, path, id, value string) error {
	return c.Run(ctx, "restore", []string{"--set-extractable", id + "=" + value, "-i"}, path, &bytes.Buffer{})
}
