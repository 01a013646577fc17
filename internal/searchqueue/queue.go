// Package searchqueue owns the queue between the filters and the search
// index: the pending row files a filter appends what it removes to (its
// text left in the store where ingestion can read it back), their
// ingestion into the index before a search (and the quiet search of the
// agent's tools and bs ui, Search, and prune-retention's Forget), and the
// rebuilding of rows from transcripts (bs index). Problems are handed to a Warn function as
// typed errors, for the command to word; the index is a convenience over
// the store, so none of them fails a filter.
package searchqueue

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rogpeppe/go-internal/lockedfile"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/progress"
)

// Writer queues the rows of what a filter removes for the search
// index. FTS5 takes text in at a few MB/s, far slower than extract moves
// it, so a filter only appends rows to a pending file beside the index
// (sequential writes, no FTS work); bs search and bs index add pending rows
// to the index before they read it. The index is a convenience over the
// store, so a failure here warns (once, a *WriteError) and never fails
// the filter. A nil *Writer queues nothing.
type Writer struct {
	warn func(error)
	path string // the index file
	// Store is the store every row's blob is in (index.Row.Store).
	Store string
	// Chunks is the store, a directory or a URL, when it does not
	// encrypt (InStore): ingestion can then read a row's text from the
	// blob that holds it (queued), a rolled entry's from its chunk and a
	// moved value's from the value itself, so the filter need not write
	// it all a second time. "" otherwise.
	Chunks string
	f      *os.File
	w      *bufio.Writer // nil once the queue failed
	line   []byte        // the row being written (appendQueued)
	failed bool
}

// queued is a row as the queue holds it. A row whose blob is in a store
// that does not encrypt leaves its text out, and From names the store
// (Writer.Chunks): for bs roll's, the entry's line is bytes [At,
// At+Len) of the row's blob (roll.EntryText reads its text); for a value
// extract or trim moved (Value), the blob is the value, whose text
// removedText reads, as bs index does. Carrying the text would double
// what a large extract or roll writes.
type queued struct {
	index.Row
	From  string `json:",omitempty"`
	At    int64  `json:",omitempty"`
	Len   int    `json:",omitempty"`
	Value bool   `json:",omitempty"`
}

// WriteError is a queue that could not be written: its rows are lost, the
// removed content is safe in the store.
type WriteError struct {
	Index string
	Err   error
}

func (e *WriteError) Error() string { return fmt.Sprintf("queue of %s: %v", e.Index, e.Err) }
func (e *WriteError) Unwrap() error { return e.Err }

// NewWriter queues rows for the index at path; warn is told of a failure.
func NewWriter(path string, warn func(error)) *Writer {
	w := &Writer{warn: warn, path: path}
	dir := pendingDir(w.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		w.fail(err)
		return w
	}
	f, err := os.CreateTemp(dir, "."+queuePrefix+"*")
	if err != nil {
		w.fail(err)
		return w
	}
	w.f, w.w = f, bufio.NewWriterSize(f, 1<<20)
	return w
}

// pendingDir holds row files not yet in the index at path.
func pendingDir(path string) string { return path + ".pending" }

// queuePrefix starts the name of the row files this bs writes.
const queuePrefix = "blobrows-"

// pendingFiles are the complete row files waiting for the index at path
// (close gives a file this name once it is whole), oldest first: rows go
// into the index in the order the filters made them, so that a later
// roll's row of a whole entry comes after the rows of values extracted
// from it before (index.Hit.Packed). Files named rows-* are from before
// rows could leave their text in the store, queue-* from before a moved
// value's row could (queued): a bs of either time (a long-running bs
// mcp) ingests only the files it knows, and cannot lose the text of the
// others.
func pendingFiles(path string) []string {
	var files []string
	for _, pattern := range []string{queuePrefix + "*.jsonl", "queue-*.jsonl", "rows-*.jsonl"} {
		f, _ := filepath.Glob(filepath.Join(pendingDir(path), pattern))
		files = append(files, f...)
	}
	mtime := make(map[string]time.Time, len(files))
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			mtime[f] = info.ModTime()
		}
	}
	slices.SortStableFunc(files, func(a, b string) int { return mtime[a].Compare(mtime[b]) })
	return files
}

// OK is whether the queue can take rows: it was created and has not
// failed.
func (w *Writer) OK() bool { return w != nil && w.w != nil }

// Failed is whether the queue failed and lost rows (warned about).
func (w *Writer) Failed() bool { return w != nil && w.failed }

// add queues r.
func (w *Writer) add(r index.Row) { w.write(&queued{Row: r}, nil) }

// write queues q, in the writer's store, with text as its Text when not
// nil (appendQueued).
func (w *Writer) write(q *queued, text []byte) {
	if !w.OK() {
		return
	}
	q.Store = w.Store
	w.line = appendQueued(w.line[:0], q, text)
	if _, err := w.w.Write(w.line); err != nil {
		w.abandon(err)
	}
}

// Moved queues the row of each value extract or trim moves to store,
// naming the blob that holds its text rather than carrying it where
// ingestion can read it back (see queued): a store that does not
// encrypt, and a blob not already stored encrypted by an earlier run
// (Sealer.SealedAfterPut).
func (w *Writer) Moved(session Session, store blobstore.Store) func(extract.Moved, []byte) {
	sealer, _ := store.(blobstore.Sealer)
	return func(m extract.Moved, rawText []byte) {
		if !w.OK() {
			return
		}
		r := session.row(index.Row{EntryID: m.EntryID, Pointer: m.Pointer, Blob: m.Blob, Kind: m.Kind, Tool: m.Tool, Time: m.Time})
		if w.Chunks != "" {
			if d, err := blobstore.ParseDigest(m.Blob); err == nil && !sealed(context.Background(), sealer, d) {
				w.write(&queued{Row: r, From: w.Chunks, Value: true}, nil)
				return
			}
		}
		w.addRaw(r, rawText)
	}
}

// sealed reports whether blob d will be stored encrypted, which only an
// identity reads (Sealer.SealedAfterPut); an error says so too, to be
// safe. A store that cannot tell (nil) does not encrypt what it keeps.
func sealed(ctx context.Context, s blobstore.Sealer, d blobstore.Digest) bool {
	if s == nil {
		return false
	}
	ok, err := s.SealedAfterPut(ctx, d)
	return ok || err != nil
}

// addRaw queues r with its text spliced in as the raw JSON string it was
// in the transcript (r.Text is left empty): no decode, no re-encode.
func (w *Writer) addRaw(r index.Row, rawText []byte) {
	if len(rawText) == 0 {
		rawText = []byte(`""`)
	}
	w.write(&queued{Row: r}, rawText)
}

// rollIndex is the roll.Index of one roll's rows in the queue.
type rollIndex struct {
	w       *Writer
	session Session
	store   blobstore.Store // the roll's
	mark    int64           // the queue's length before the roll's rows
}

// ForRoll is the roll.Index of one roll's rows of session, whose blobs go
// to store.
func (w *Writer) ForRoll(session Session, store blobstore.Store) roll.Index {
	return &rollIndex{w: w, session: session, store: store, mark: w.size()}
}

// WantsText is false when ingestion can read the rows' text back from
// the chunk: a store that does not encrypt (Writer.Chunks),
// unless an earlier, encrypting run stored the same chunk, which only an
// identity reads.
func (ix *rollIndex) WantsText(ctx context.Context, d blobstore.Digest) bool {
	if ix.w.Chunks == "" {
		return true
	}
	sealer, _ := ix.store.(blobstore.Sealer)
	return sealed(ctx, sealer, d)
}

func (ix *rollIndex) Add(e roll.Evicted) {
	w := ix.w
	r := ix.session.row(index.Row{EntryID: e.EntryID, Blob: e.Blob, Kind: "entry", Tool: e.Tool, Time: e.Time})
	if w.Chunks == "" || e.Text != nil {
		w.addRaw(r, e.Text)
		return
	}
	w.write(&queued{Row: r, From: w.Chunks, At: e.At, Len: e.Len}, nil)
}

func (ix *rollIndex) Discard() { ix.w.truncate(ix.mark) }

// size is the length of the queue file, with what is still buffered.
func (w *Writer) size() int64 {
	if w == nil || w.f == nil {
		return 0
	}
	off, err := w.f.Seek(0, io.SeekCurrent)
	if err != nil {
		w.abandon(err)
		return 0
	}
	return off + int64(w.w.Buffered())
}

// truncate takes back the rows written after the queue was n bytes long.
func (w *Writer) truncate(n int64) {
	if w == nil || w.f == nil {
		return
	}
	err := w.w.Flush()
	if err == nil {
		err = w.f.Truncate(n)
	}
	if err == nil {
		_, err = w.f.Seek(n, io.SeekStart)
	}
	if err != nil {
		w.abandon(err)
	}
}

// Close publishes the rows: a complete file gets its final name, which is
// what ingestion looks for.
func (w *Writer) Close() {
	if w == nil || w.f == nil {
		return
	}
	err := w.w.Flush()
	if err == nil {
		err = w.f.Sync() // a file under its final name is always whole
	}
	if err == nil {
		err = w.f.Close()
	}
	if err != nil {
		w.abandon(err)
		return
	}
	info, _ := os.Stat(w.f.Name())
	if info != nil && info.Size() == 0 {
		os.Remove(w.f.Name())
		return
	}
	final := filepath.Join(filepath.Dir(w.f.Name()), strings.TrimPrefix(filepath.Base(w.f.Name()), ".")+".jsonl")
	if err := os.Rename(w.f.Name(), final); err != nil {
		w.abandon(err)
	}
}

func (w *Writer) abandon(err error) {
	w.fail(err)
	w.f.Close()
	os.Remove(w.f.Name())
	w.f, w.w = nil, nil
}

func (w *Writer) fail(err error) {
	if !w.failed {
		w.failed = true
		w.warn(&WriteError{w.path, err})
	}
}

// Archived queues an index row for each entry of an archived turn of
// session.
func (w *Writer) Archived(session Session) func(archive.Indexed) {
	return func(e archive.Indexed) {
		w.addRaw(session.row(index.Row{EntryID: e.EntryID, Blob: e.Blob, Kind: "entry", Tool: e.Tool, Time: e.Time}), e.Text)
	}
}

// OpenOptions configure Open.
type OpenOptions struct {
	// Warn is told of a queue file that waits for its store
	// (*WaitingError), one set aside as damaged (*DamagedError) and a
	// chunk whose text cannot be read (*ChunkError).
	Warn func(error)
	// Progress shows the ingestion, labelled Label, on a terminal; nil
	// shows nothing.
	Progress io.Writer
	Label    string
	// Gone are the blobs prune-retention has just deleted: their rows
	// are left out.
	Gone map[string]bool
}

// Open opens the index and adds every pending row file to it. Files are
// taken under a lock, so concurrent readers do not ingest one file twice
// (add would keep one row anyway).
func Open(ctx context.Context, path string, opt OpenOptions) (*index.Index, error) {
	ix, err := index.Open(path)
	if err != nil {
		return nil, err
	}
	dir := pendingDir(path)
	files := pendingFiles(path)
	if len(files) == 0 {
		return ix, nil
	}
	// One process ingests at a time; another waits for it, then finds
	// the files gone.
	unlock, err := lockedfile.MutexAt(filepath.Join(dir, ".ingest.lock")).Lock()
	if err != nil {
		return ix, nil // cannot lock: search what is there
	}
	defer unlock()
	var total int64
	for _, f := range files {
		if info, err := os.Stat(f); err == nil {
			total += info.Size()
		}
	}
	var bar *progress.Bar
	if opt.Progress != nil {
		bar = progress.New(opt.Progress, opt.Label, total, true, "")
	}
	defer bar.Done()
	for _, f := range files {
		if err := ingest(ctx, ix, f, opt.Warn, opt.Gone, bar); err != nil {
			ix.Close()
			return nil, err
		}
	}
	return ix, nil
}

// ingest adds one pending file's rows. A damaged file (a crash, a full
// disk) gives up what it can and is set aside as .bad with a warning, so it
// never blocks search. The rows are read, and their text taken from the
// store where the queue left it out, on a second goroutine while FTS5
// takes in the rows before them.
func ingest(ctx context.Context, ix *index.Index, file string, warn func(error), gone map[string]bool, bar *progress.Bar) error {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // ingested meanwhile
	}
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	batches := make(chan []index.Row, 1)
	var stopped error // why the reading stopped before the end, if it did
	go func() {
		defer close(batches)
		stopped = readQueue(ctx, &progress.Reader{R: f, Bar: bar}, warn, gone, func(rows []index.Row) bool {
			select {
			case batches <- rows:
				return true
			case <-ctx.Done():
				return false
			}
		})
	}()
	for rows := range batches {
		if err := ix.Add(ctx, rows); err != nil {
			cancel()
			for range batches {
			}
			return err
		}
	}
	var away *storeAway
	switch {
	case ctx.Err() != nil:
		return ctx.Err() // interrupted: the file stays for the next search
	case errors.As(stopped, &away):
		warn(&WaitingError{file, away.store, away.err})
		return nil
	case stopped != nil:
		warn(&DamagedError{file, stopped})
		return os.Rename(file, file+".bad")
	}
	return os.Remove(file)
}

// readQueue hands the rows of a queue file to add in batches, until the
// file ends or add returns false (the context is done). It returns what
// stopped it before the end: the context's error, a *storeAway, or the
// damage in the file (after handing on the rows before it).
func readQueue(ctx context.Context, r io.Reader, warn func(error), gone map[string]bool, add func([]index.Row) bool) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	chunks := chunkTexts{ctx: ctx, warn: warn}
	var rows []index.Row
	text := 0
	for {
		var q queued
		err := dec.Decode(&q)
		if err == io.EOF {
			break
		}
		if err != nil {
			if !add(rows) {
				return ctx.Err()
			}
			return err
		}
		if gone[q.Blob] {
			continue
		}
		if q.From != "" {
			if q.Text, err = chunks.text(q); err != nil {
				return err
			}
		}
		rows = append(rows, q.Row)
		text += len(q.Text)
		if len(rows) >= 2000 || text >= 8<<20 {
			if !add(rows) {
				return ctx.Err()
			}
			rows, text = nil, 0
		}
	}
	if !add(rows) {
		return ctx.Err()
	}
	return nil
}

// storeAway is why a queue file waits: the store that holds its rows'
// text cannot be opened (a disk not mounted, a directory moved). Its rows
// go in once it can, rather than without their text for good.
type storeAway struct {
	store string
	err   error
}

func (e *storeAway) Error() string { return fmt.Sprintf("store %s: %v", e.store, e.err) }

// WaitingError is a queue File whose rows wait for the Store that holds
// their text: they go into the index once it can be read.
type WaitingError struct {
	File, Store string
	Err         error
}

func (e *WaitingError) Error() string {
	return fmt.Sprintf("%s waits for store %s: %v", e.File, e.Store, e.Err)
}
func (e *WaitingError) Unwrap() error { return e.Err }

// DamagedError is a queue File damaged at Err: the rows before the damage
// were added, the file is kept as .bad.
type DamagedError struct {
	File string
	Err  error
}

func (e *DamagedError) Error() string { return fmt.Sprintf("%s is damaged: %v", e.File, e.Err) }
func (e *DamagedError) Unwrap() error { return e.Err }

// ChunkError is a Blob of Store whose text cannot be read: its rows go
// into the index without it.
type ChunkError struct {
	Blob, Store string
	Err         error
}

func (e *ChunkError) Error() string {
	return fmt.Sprintf("chunk %s of store %s: %v", e.Blob, e.Store, e.Err)
}
func (e *ChunkError) Unwrap() error { return e.Err }

// chunkTexts reads queued rows' text from the chunks of the stores they
// name. It keeps the chunk it read last: a roll's rows come chunk by
// chunk.
type chunkTexts struct {
	ctx    context.Context
	warn   func(error)
	stores map[string]blobstore.Store
	from   string // the store and blob of data
	blob   string
	data   []byte
	failed map[string]bool // the chunks that could not be read, warned about
	p      transcript.Parser
}

// text is the row's text. When its chunk cannot be read (deleted, damaged,
// encrypted) it is "": the row still goes in, findable by its session,
// tool and kind, and a warning names the chunk. A store that cannot be
// opened, or whose chunk cannot be read for any other reason (a bucket out
// of reach: opening one asks it nothing), is a *storeAway: the rows wait,
// their text still in the store, rather than go in without it.
func (c *chunkTexts) text(q queued) (string, error) {
	if q.From != c.from || q.Blob != c.blob {
		c.from, c.blob, c.data = q.From, q.Blob, nil
		store, err := c.store(q.From)
		if err != nil {
			c.from = "" // not read: try again for the next row
			return "", &storeAway{q.From, err}
		}
		d, err := blobstore.ParseDigest(q.Blob)
		if err == nil {
			c.data, err = store.Get(c.ctx, d)
			if err != nil && c.ctx.Err() == nil && !chunkGone(err) {
				c.from = ""
				return "", &storeAway{q.From, err}
			}
		}
		if err != nil && c.ctx.Err() == nil && !c.failed[q.Blob] {
			if c.failed == nil {
				c.failed = map[string]bool{}
			}
			c.failed[q.Blob] = true
			c.warn(&ChunkError{q.Blob, q.From, err})
		}
	}
	if q.Value {
		return removedText(&c.p, c.data), nil
	}
	end := q.At + int64(q.Len)
	if q.At < 0 || q.Len < 0 || end > int64(len(c.data)) {
		return "", nil
	}
	return roll.EntryText(c.data[q.At:end]), nil
}

// chunkGone is whether err says a chunk cannot be read whatever the
// store's reach: deleted, damaged, or encrypted to keys not given.
func chunkGone(err error) bool {
	return errors.Is(err, blobstore.ErrNotFound) || errors.Is(err, blobstore.ErrCorrupt) || errors.Is(err, blobstore.ErrNoIdentity)
}

// store opens the store at dir, once. The filter wrote its chunks
// unencrypted: no identity is needed.
func (c *chunkTexts) store(dir string) (blobstore.Store, error) {
	if s, ok := c.stores[dir]; ok {
		return s, nil
	}
	s, err := blobstore.Open(c.ctx, dir, blobstore.OpenOptions{MustExist: true})
	if err != nil {
		return nil, err
	}
	if c.stores == nil {
		c.stores = map[string]blobstore.Store{}
	}
	c.stores[dir] = s
	return s, nil
}

// Session is the transcript a filter's rows name: the file that will hold
// its placeholders (Path), and the session it is (ID, as
// transcript.IdentityOf has it), which stays when the file is moved
// or the output goes through a pipe: agent search follows that.
type Session struct {
	Path string
	ID   func() string
}

// row is r, of this session.
func (s Session) row(r index.Row) index.Row {
	r.Session, r.SessionID = s.Path, s.ID()
	return r
}

// fileSession is the Session of the transcript file at path.
func fileSession(path string) Session {
	id := transcript.IdentityOfFile(path)
	return Session{Path: SessionFor(path), ID: func() string { return id }}
}

// SessionFor names a transcript in the index: its absolute path when it
// is a file, so a hit can say exactly how to restore it.
func SessionFor(name string) string {
	if name == "-" {
		return "-"
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return name
}
