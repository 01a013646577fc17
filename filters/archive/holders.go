package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/transcript"
)

// What bs archive list and show read: the live holders of a transcript.

// Markers calls fn for every archive marker in the transcript r, named
// name, with its line number; a damaged marker goes to onDamaged and is
// skipped.
func Markers(name string, r io.Reader, format transcript.Dialect, onBadLine func(*transcript.BadLineError) error,
	onDamaged func(line int, err error), fn func(line int, m Marker) error) error {
	src := transcript.NewSource(name, r, format, onBadLine)
	for {
		l, t, err := src.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if t == nil {
			continue
		}
		m, ok, err := ParseMarker(t)
		if !ok {
			continue
		}
		if err != nil {
			onDamaged(l.Num, err)
			continue
		}
		if err := fn(l.Num, m); err != nil {
			return err
		}
	}
}

// Holder is a live holder as bs archive list --json prints it.
type Holder struct {
	ID        string   `json:"id"`
	Task      string   `json:"task"`
	Entries   int      `json:"entries"`
	Tokens    int      `json:"tokens"`
	ToolCalls int      `json:"tool_calls"`
	Depth     int      `json:"depth"`
	Bytes     int64    `json:"bytes"`
	Blobs     []string `json:"blobs"`
	File      string   `json:"file"`
	Line      int      `json:"line"`
}

// HolderOf is the holder marker m at line of file stands for.
func HolderOf(file string, line int, m Marker) Holder {
	h := Holder{ID: m.ID, Task: m.Task, Entries: m.Entries, Tokens: m.Tokens, ToolCalls: m.ToolCalls, Depth: m.Depth, Bytes: m.Bytes, File: file, Line: line, Blobs: []string{}}
	for _, d := range m.Blobs {
		h.Blobs = append(h.Blobs, d.String())
	}
	return h
}

// WriteHolders prints holders as bs archive list does: one JSON object a
// line, or the "Live Subagents" block of a system prompt (nothing for no
// holders).
func WriteHolders(w io.Writer, holders []Holder, asJSON bool) error {
	if asJSON {
		for _, h := range holders {
			b, _ := json.Marshal(h)
			if _, err := fmt.Fprintf(w, "%s\n", b); err != nil {
				return err
			}
		}
		return nil
	}
	if len(holders) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString(liveSubagentsHeader)
	for _, h := range holders {
		task := h.Task
		if task == "" {
			task = "(no text)"
		}
		fmt.Fprintf(&b, "- id: %s | task: %s | entries: %d | tokens: %d\n", h.ID, task, h.Entries, h.Tokens)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// liveSubagentsHeader opens the block bs archive list prints (seed 002's
// "Live Subagents" section of the system prompt).
const liveSubagentsHeader = "# Live Subagents\n\n" +
	"These subagents hold archived prior turns of this conversation: each replaced turn's full transcript, " +
	"kept byte for byte. Retrieve one by its id ('bs archive show ID') only when you actually need its detail.\n\n"

// ErrBadHolderID is an id that names no file of a holders directory: one
// holding a path separator, or . or ..
var ErrBadHolderID = errors.New("not a holder id")

// HolderFile is the file of holder id in the directory bs archive
// --holders DIR writes holders to: DIR/<id>.jsonl, never a file outside
// DIR (ErrBadHolderID).
func HolderFile(dir, id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", ErrBadHolderID
	}
	return filepath.Join(dir, id+".jsonl"), nil
}

// FindHolder writes holder id to w if m is it or holds it (nested holders
// are read from the store), and reports whether it did.
func FindHolder(ctx context.Context, store blobstore.Store, m Marker, id string, w io.Writer) (bool, error) {
	return findHolder(ctx, store, m, id, w, 0)
}

func findHolder(ctx context.Context, store blobstore.Store, m Marker, id string, w io.Writer, level int) (bool, error) {
	if m.ID == id {
		return true, m.WriteHolder(ctx, store, w, 0)
	}
	if m.Depth <= 1 || level > 64 {
		return false, nil
	}
	var buf bytes.Buffer
	if err := m.WriteHolder(ctx, store, &buf, m.From); err != nil {
		return false, err
	}
	var p transcript.Parser
	for _, line := range bytes.Split(buf.Bytes(), []byte("\n")) {
		t, err := p.Parse(line)
		if err != nil {
			continue
		}
		inner, ok, err := ParseMarker(t)
		if !ok || err != nil {
			continue
		}
		if ok, err := findHolder(ctx, store, inner, id, w, level+1); ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}
