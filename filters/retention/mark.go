// Package retention deletes what bs stored and nothing live needs any more:
// blobs no named transcript references that are older than the retention,
// checkpoints beyond the newest few per session key, and holder files of
// archived turns no transcript stands for.
//
// It is a mark and sweep. Mark reads every live transcript and records each
// blob it references (through restore.References: values in _extracted,
// chunks of rolled ranges, parts of archive holders), reading each
// referenced chunk and holder from the store to follow the references of
// the lines inside them, however deeply nested. Sweep then deletes the
// unmarked blobs whose last write (or re-Put) is before a cutoff taken
// before the mark began, so a blob written or re-used while the sweep runs
// is never deleted. Prune runs the whole of it (the mark, then the sweeps
// of blobs, checkpoints and holder files), as bs prune-retention does;
// Report is what a run did, as the command prints it.
package retention

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/transcript"
)

// maxDepth bounds how deeply chunks and holders are followed into one
// another (content addressing rules out a cycle; this rules out a forged
// chain that would never end).
const maxDepth = 64

// Marks is the set of what the live transcripts reference. It is safe for
// concurrent use: several transcripts may be marked at once.
type Marks struct {
	store blobstore.Store

	mu      sync.Mutex
	blobs   map[blobstore.Digest]struct{}
	holders map[string]struct{}
	scanned map[string]struct{} // chunk and holder groups already read
}

// NewMarks returns an empty mark set over store, from which referenced
// chunks and holders are read.
func NewMarks(store blobstore.Store) *Marks {
	return &Marks{store: store, blobs: map[blobstore.Digest]struct{}{},
		holders: map[string]struct{}{}, scanned: map[string]struct{}{}}
}

// Blob reports whether blob d is referenced.
func (m *Marks) Blob(d blobstore.Digest) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.blobs[d]
	return ok
}

// Holder reports whether the archive holder id is referenced.
func (m *Marks) Holder(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.holders[id]
	return ok
}

// Scan is what marking one transcript saw.
type Scan struct {
	Lines    int // lines of the transcript itself
	Refs     int // references, nested ones included
	BadLines int // lines of the transcript that are not valid JSON (skipped)
	Nested   int // chunks and holders read from the store
}

// UnreadableError is a referenced chunk or holder blob that could not be
// read: what it references cannot be known, so nothing may be swept.
type UnreadableError struct {
	Name string // the transcript
	Line int    // the line of the transcript that references it (at the top)
	Kind restore.RefKind
	Blob blobstore.Digest
	Err  error
}

func (e *UnreadableError) Error() string {
	return fmt.Sprintf("%s:%d: %s blob %s: %v", e.Name, e.Line, e.Kind, e.Blob, e.Err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

// DamagedError is a reference member that cannot be read: the blobs it
// names cannot be known, so nothing may be swept.
type DamagedError struct {
	Name string
	Line int
	Err  error
}

func (e *DamagedError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }

func (e *DamagedError) Unwrap() error { return e.Err }

// Transcript marks everything the transcript read from r references,
// following referenced chunks and holders into the store. A line that is
// not valid JSON is counted, and every blob it names kept (unparsed).
// A referenced chunk or holder that
// cannot be read is an *UnreadableError, a damaged reference a
// *DamagedError; either means the marks are incomplete and no sweep may
// follow.
func (m *Marks) Transcript(ctx context.Context, name string, r io.Reader) (Scan, error) {
	var sc Scan
	err := m.lines(ctx, name, r, 0, 0, &sc)
	return sc, err
}

// Files marks the transcript files in turn, calling done (if not nil)
// after each with its index and what it held. It stops at the first that cannot be read
// or marked, and returns its path with the error (Transcript's).
func (m *Marks) Files(ctx context.Context, files []string, done func(i int, path string, sc Scan)) (string, error) {
	for i, path := range files {
		sc, err := m.file(ctx, path)
		if err != nil {
			return path, err
		}
		if done != nil {
			done(i, path, sc)
		}
	}
	return "", nil
}

func (m *Marks) file(ctx context.Context, path string) (Scan, error) {
	f, err := os.Open(path)
	if err != nil {
		return Scan{}, err
	}
	defer f.Close()
	return m.Transcript(ctx, path, f)
}

// fields are the members a line that references blobs has; a line holding
// none of them is not parsed.
var (
	evictedField  = []byte(`"` + transcript.EvictedField + `"`)
	archivedField = []byte(`"` + transcript.ArchivedField + `"`)
	fields        = [][]byte{[]byte(`"_extracted"`), evictedField, archivedField}
)

// lines marks the references of each line of r. top is the line of the
// named transcript the lines come from (0: they are its own).
func (m *Marks) lines(ctx context.Context, name string, r io.Reader, top, depth int, sc *Scan) error {
	rd := transcript.NewReader(r)
	var p transcript.Parser
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := rd.NextView()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			var ue *UnreadableError
			if errors.As(err, &ue) {
				return err
			}
			return fmt.Errorf("%s: %w", name, err)
		}
		at := top
		if depth == 0 {
			sc.Lines++
			at = line.Num
		}
		if !mentions(line.Body) {
			continue
		}
		t, err := p.Parse(line.Body)
		if err != nil {
			if depth == 0 {
				sc.BadLines++
			}
			if err := m.unparsed(ctx, name, at, line.Body, depth, sc); err != nil {
				return err
			}
			continue
		}
		// A line's chunks (or a holder's parts) hold lines in turn, read
		// in order as one group.
		var chunks, parts []blobstore.Digest
		rerr := restore.References(t, func(ref restore.Ref) {
			sc.Refs++
			m.mu.Lock()
			m.blobs[ref.Blob] = struct{}{}
			if ref.Kind == restore.RefArchived {
				m.holders[ref.Holder] = struct{}{}
			}
			m.mu.Unlock()
			switch ref.Kind {
			case restore.RefEvicted:
				chunks = append(chunks, ref.Blob)
			case restore.RefArchived:
				parts = append(parts, ref.Blob)
			}
		})
		if rerr != nil {
			return &DamagedError{Name: name, Line: at, Err: rerr}
		}
		for _, g := range []struct {
			kind  restore.RefKind
			blobs []blobstore.Digest
		}{{restore.RefEvicted, chunks}, {restore.RefArchived, parts}} {
			if len(g.blobs) == 0 {
				continue
			}
			if err := m.nested(ctx, name, at, g.kind, g.blobs, depth, sc); err != nil {
				return err
			}
		}
	}
}

// digestText is how a reference names its blob.
var digestText = []byte("sha256:")

// unparsed marks every blob that body, a line that is not valid JSON (a
// write cut short, a damaged byte), names: what its references were cannot
// be read, but each digest in it may be one. Where it names chunks or
// holders, the blobs it names that the store has are read as a group of
// them, as its references would have been.
func (m *Marks) unparsed(ctx context.Context, name string, at int, body []byte, depth int, sc *Scan) error {
	var named []blobstore.Digest
	for rest := body; ; {
		i := bytes.Index(rest, digestText)
		if i < 0 {
			break
		}
		rest = rest[i:]
		if d, err := blobstore.ParseDigest(string(rest[:min(len(rest), len(digestText)+64)])); err == nil {
			named = append(named, d)
		}
		rest = rest[len(digestText):]
	}
	if len(named) == 0 {
		return nil
	}
	m.mu.Lock()
	for _, d := range named {
		m.blobs[d] = struct{}{}
	}
	m.mu.Unlock()
	sc.Refs += len(named)
	kind := restore.RefEvicted
	switch {
	case bytes.Contains(body, evictedField):
	case bytes.Contains(body, archivedField):
		kind = restore.RefArchived
	default:
		return nil // extracted values hold no references
	}
	var present []blobstore.Digest
	for _, d := range named {
		ok, err := m.store.Has(ctx, d)
		if err != nil {
			return &UnreadableError{Name: name, Line: at, Kind: kind, Blob: d, Err: err}
		}
		if ok {
			present = append(present, d)
		}
	}
	if len(present) == 0 {
		return nil
	}
	return m.nested(ctx, name, at, kind, present, depth, sc)
}

// nested marks the references of the lines held by a group of chunk or
// holder blobs, read in order, once per group.
func (m *Marks) nested(ctx context.Context, name string, at int, kind restore.RefKind, blobs []blobstore.Digest, depth int, sc *Scan) error {
	var key strings.Builder
	key.WriteByte(byte(kind))
	for _, d := range blobs {
		key.Write(d[:])
	}
	m.mu.Lock()
	_, done := m.scanned[key.String()]
	m.scanned[key.String()] = struct{}{}
	m.mu.Unlock()
	if done {
		return nil
	}
	if depth >= maxDepth {
		return &DamagedError{Name: name, Line: at, Err: fmt.Errorf("chunks and holders nested more than %d deep", maxDepth)}
	}
	sc.Nested += len(blobs)
	br := &blobsReader{ctx: ctx, store: m.store, blobs: blobs, name: name, line: at, kind: kind}
	err := m.lines(ctx, name, br, at, depth+1, sc)
	if err != nil {
		// Another transcript naming the group must not take it as read.
		m.mu.Lock()
		delete(m.scanned, key.String())
		m.mu.Unlock()
	}
	return err
}

// escape starts a \uXXXX escape: a member name written with one (say
// "\u005fextracted") is the same member to the tree and to restore, so a
// line holding one is parsed rather than skipped.
var escape = []byte(`\u`)

// mentions reports whether a line may hold a reference member.
func mentions(body []byte) bool {
	if bytes.Contains(body, escape) {
		return true
	}
	for _, f := range fields {
		if bytes.Contains(body, f) {
			return true
		}
	}
	return false
}

// blobsReader reads a group of blobs one after another, one in memory at a
// time (Get verifies each).
type blobsReader struct {
	ctx   context.Context
	store blobstore.Store
	blobs []blobstore.Digest
	cur   []byte
	name  string
	line  int
	kind  restore.RefKind
}

func (b *blobsReader) Read(p []byte) (int, error) {
	for len(b.cur) == 0 {
		if len(b.blobs) == 0 {
			return 0, io.EOF
		}
		d := b.blobs[0]
		data, err := b.store.Get(b.ctx, d)
		if err != nil {
			return 0, &UnreadableError{Name: b.name, Line: b.line, Kind: b.kind, Blob: d, Err: err}
		}
		b.cur, b.blobs = data, b.blobs[1:]
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}
