package main

import (
	"bufio"
	"bytes"
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

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/progress"
)

// indexWriter queues the rows of what a filter removes for the search
// index. FTS5 takes text in at a few MB/s, far slower than extract moves
// it, so a filter only appends rows to a pending file beside the index
// (sequential writes, no FTS work); bs search and bs index add pending rows
// to the index before they read it. The index is a convenience over the
// store, so a failure here warns (once) and never fails the filter.
type indexWriter struct {
	ui    ui
	path  string // the index file
	store string // the store every row's blob is in (index.Row.Store)
	// chunks is the directory of the store, when it is a local one that
	// does not encrypt: ingestion can then read a row's text from the
	// blob that holds it (queued), a rolled entry's from its chunk and a
	// moved value's from the value itself, so the filter need not write
	// it all a second time. "" otherwise.
	chunks string
	f      *os.File
	w      *bufio.Writer
	enc    *json.Encoder
	failed bool
}

func openIndexWriter(c *cli.Context, cm *common) *indexWriter {
	w := newIndexWriter(indexPath(c), cm.ui)
	w.store = rowStore(cm.storeDir)
	if !blobstore.IsURL(cm.storeDir) && len(cm.storeOpt.Recipients) == 0 {
		if abs, err := filepath.Abs(cm.storeDir); err == nil {
			w.chunks = abs
		}
	}
	return w
}

// queued is a row as the queue holds it. A row whose blob is in a local
// store that does not encrypt leaves its text out, and From names the
// store's directory: for bs roll's, the entry's line is bytes [At,
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

// rowStore is the store a row names, so that a search hit's restore
// command finds its blob: "" for the default store, else the one the
// filter was given, a directory made absolute (the command may run
// elsewhere). A spec is a URL as the store opener reads it
// (blobstore.IsURL), so that a directory whose name holds "://" is still
// made absolute.
func rowStore(dir string) string {
	if !blobstore.IsURL(dir) {
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
	}
	if dir == defaultStoreDir() {
		return ""
	}
	return dir
}

// newIndexWriter queues rows for the index at path.
func newIndexWriter(path string, u ui) *indexWriter {
	w := &indexWriter{ui: u, path: path}
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
	w.enc = json.NewEncoder(w.w)
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

func (w *indexWriter) add(r index.Row) {
	if w == nil || w.enc == nil {
		return
	}
	r.Store = w.store
	if err := w.enc.Encode(r); err != nil {
		w.abandon(err)
	}
}

// moved queues the row of each value extract or trim moves to store,
// naming the blob that holds its text rather than carrying it where
// ingestion can read it back (see queued): a local store that does not
// encrypt, and a blob not already stored encrypted by an earlier run.
func (w *indexWriter) moved(session rowSession, store blobstore.Store) func(extract.Moved, []byte) {
	sealer, _ := store.(blobstore.Sealer)
	return func(m extract.Moved, rawText []byte) {
		if w == nil || w.enc == nil {
			return
		}
		r := session.row(index.Row{EntryID: m.EntryID, Pointer: m.Pointer, Blob: m.Blob, Kind: m.Kind, Tool: m.Tool, Time: m.Time})
		if w.chunks == "" || sealed(sealer, m.Blob) {
			w.addRaw(r, rawText)
			return
		}
		r.Store = w.store
		if err := w.enc.Encode(queued{Row: r, From: w.chunks, Value: true}); err != nil {
			w.abandon(err)
		}
	}
}

// sealed reports whether blob (its digest's string) is stored encrypted,
// which only an identity reads; an error says so too, to be safe.
func sealed(s blobstore.Sealer, blob string) bool {
	if s == nil {
		return false
	}
	d, err := blobstore.ParseDigest(blob)
	if err != nil {
		return true
	}
	ok, err := s.Sealed(context.Background(), d)
	return ok || err != nil
}

// addRaw queues r with its text spliced in as the raw JSON string it was
// in the transcript (r.Text is left empty): no decode, no re-encode.
func (w *indexWriter) addRaw(r index.Row, rawText []byte) {
	if w == nil || w.enc == nil {
		return
	}
	r.Store = w.store
	head, err := json.Marshal(r)
	if err != nil {
		w.abandon(err)
		return
	}
	if len(rawText) == 0 {
		rawText = []byte(`""`)
	}
	w.w.Write(head[:len(head)-len(`"Text":""}`)])
	w.w.WriteString(`"Text":`)
	w.w.Write(rawText)
	if _, err := w.w.WriteString("}\n"); err != nil {
		w.abandon(err)
	}
}

// rollIndex is the roll.Index of one roll's rows in the queue.
type rollIndex struct {
	w       *indexWriter
	session rowSession
	store   blobstore.Store // the roll's
	mark    int64           // the queue's length before the roll's rows
}

func (w *indexWriter) forRoll(session rowSession, store blobstore.Store) roll.Index {
	return &rollIndex{w: w, session: session, store: store, mark: w.size()}
}

// WantsText is false when ingestion can read the rows' text back from
// the chunk: a local store that does not encrypt (indexWriter.chunks),
// unless an earlier, encrypting run stored the same chunk, which only an
// identity reads.
func (ix *rollIndex) WantsText(ctx context.Context, d blobstore.Digest) bool {
	if ix.w.chunks == "" {
		return true
	}
	sealer, ok := ix.store.(blobstore.Sealer)
	if !ok {
		return false
	}
	sealed, err := sealer.Sealed(ctx, d)
	return sealed || err != nil
}

func (ix *rollIndex) Add(e roll.Evicted) {
	w := ix.w
	r := ix.session.row(index.Row{EntryID: e.EntryID, Blob: e.Blob, Kind: "entry", Tool: e.Tool, Time: e.Time})
	if w.chunks == "" || e.Text != nil {
		w.addRaw(r, e.Text)
		return
	}
	if w.enc == nil {
		return
	}
	r.Store = w.store
	if err := w.enc.Encode(queued{Row: r, From: w.chunks, At: e.At, Len: e.Len}); err != nil {
		w.abandon(err)
	}
}

func (ix *rollIndex) Discard() { ix.w.truncate(ix.mark) }

// size is the length of the queue file, with what is still buffered.
func (w *indexWriter) size() int64 {
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
func (w *indexWriter) truncate(n int64) {
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

// close publishes the rows: a complete file gets its final name, which is
// what ingestion looks for.
func (w *indexWriter) close() {
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

func (w *indexWriter) abandon(err error) {
	w.fail(err)
	w.f.Close()
	os.Remove(w.f.Name())
	w.f, w.w, w.enc = nil, nil, nil
}

func (w *indexWriter) fail(err error) {
	if !w.failed {
		w.failed = true
		w.ui.warnf(msgIndexWrite, w.path, err)
		w.ui.hintf(hintIndex)
	}
}

// openIndex opens the index and adds every pending row file to it. Files
// are taken under a lock, so concurrent readers do not ingest one file
// twice (Add would keep one row anyway). Rows of the blobs in gone, which
// prune-retention has just deleted, are left out.
func openIndex(ctx context.Context, path string, u ui, gone map[string]bool) (*index.Index, error) {
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
	bar := progress.New(u.w, prgIngest, total, true, "")
	defer bar.Done()
	for _, f := range files {
		if err := ingest(ctx, ix, f, u, gone, bar); err != nil {
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
func ingest(ctx context.Context, ix *index.Index, file string, u ui, gone map[string]bool, bar *progress.Bar) error {
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
		stopped = readQueue(ctx, &progress.Reader{R: f, Bar: bar}, u, gone, func(rows []index.Row) bool {
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
		u.warnf(msgPendingWaits, file, away.store, away.err)
		return nil
	case stopped != nil:
		u.warnf(msgPendingBad, file, stopped)
		return os.Rename(file, file+".bad")
	}
	return os.Remove(file)
}

// readQueue hands the rows of a queue file to add in batches, until the
// file ends or add returns false (the context is done). It returns what
// stopped it before the end: the context's error, a *storeAway, or the
// damage in the file (after handing on the rows before it).
func readQueue(ctx context.Context, r io.Reader, u ui, gone map[string]bool, add func([]index.Row) bool) error {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	chunks := chunkTexts{ctx: ctx, u: u}
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

// chunkTexts reads queued rows' text from the chunks of the stores they
// name. It keeps the chunk it read last: a roll's rows come chunk by
// chunk.
type chunkTexts struct {
	ctx    context.Context
	u      ui
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
// opened is a *storeAway.
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
		}
		if err != nil && c.ctx.Err() == nil && !c.failed[q.Blob] {
			if c.failed == nil {
				c.failed = map[string]bool{}
			}
			c.failed[q.Blob] = true
			c.u.warnf(msgIndexChunk, q.Blob, q.From, err)
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

// rowSession is the transcript a filter's rows name: the file that will
// hold its placeholders (indexSession), and the session it is
// (transcript.SessionIdentity), which stays when the file is moved or the
// output goes through a pipe: agent search follows that.
type rowSession struct {
	path string
	id   func() string
}

// row is r, of this session.
func (s rowSession) row(r index.Row) index.Row {
	r.Session, r.SessionID = s.path, s.id()
	return r
}

// fileSession is the rowSession of the transcript file at path.
func fileSession(path string) rowSession {
	id := transcript.IdentityOfFile(path)
	return rowSession{path: sessionFor(path), id: func() string { return id }}
}

// indexSession names, for the search index, the transcript that will hold
// the placeholders of a filter's run over input name: the file itself
// when it is rewritten in place, the file standard output goes to when
// that is one, and otherwise "-" (unknown: a hit then says TRANSCRIPT).
// The input file of a run to standard output never holds them. The
// session's identity is the input's: read from the file's first lines, or,
// from standard input, learnt as the filter reads r, which the filter
// must read instead of r.
func (cm *common) indexSession(name string, r io.Reader) (rowSession, io.Reader) {
	var s rowSession
	switch {
	case cm.inPlace:
		s.path = sessionFor(name)
	case outputPath(cm.stdout) != "":
		s.path = outputPath(cm.stdout)
	default:
		s.path = "-"
	}
	if name != "-" {
		id := transcript.IdentityOfFile(name)
		s.id = func() string { return id }
		return s, r
	}
	tap := transcript.NewIdentityTap(r)
	s.id = tap.ID
	return s, tap
}

// sessionFor names a transcript in the index: its absolute path when it
// is a file, so a hit can say exactly how to restore it.
func sessionFor(name string) string {
	if name == "-" {
		return "-"
	}
	if abs, err := filepath.Abs(name); err == nil {
		return abs
	}
	return name
}

func indexCommand() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "(re)build search index rows from transcripts and the blob store",
		ArgsUsage: "FILE...",
		Description: "Reads each transcript's _extracted metadata and roll markers, fetches the removed values " +
			"from the store and adds their rows to the search index (adding a row twice keeps one).",
		// It reads transcripts and the store: no -i, and a store that is
		// not there is an error, not a new empty one.
		Flags: append(append(append([]cli.Flag{}, indexFlags()...), storeFlags()...), readFlags()...),
		Action: func(c *cli.Context) error {
			cm, err := parseCommon(c)
			if err != nil {
				return err
			}
			if len(cm.files) == 0 {
				return usagef(msgIndexArgs)
			}
			store, err := openExisting(cm, msgNoStore)
			if err != nil {
				return err
			}
			w := openIndexWriter(c, cm)
			if w.enc == nil {
				return &reported{code: exitFailure}
			}
			total, done, read := 0, 0, 0
			bar := progress.New(c.App.ErrWriter, prgIndex, int64(len(cm.files)), false, unitFiles)
			// A file that cannot be read is an error of its own; the
			// others are indexed.
			ferr := eachFile(cm.files, func(path string) error {
				n, err := indexFile(c.Context, path, store, cm, w)
				total += n
				done++
				if err == nil {
					read++
				}
				bar.Set(int64(done))
				return err
			})
			bar.Done()
			w.close()
			if w.failed {
				return &reported{code: exitFailure}
			}
			if stopsRun(ferr) {
				return ferr
			}
			ix, err := openIndex(c.Context, indexPath(c), cm.ui, nil)
			if err != nil {
				cm.ui.hintf(hintIndex)
				return err
			}
			ix.Close()
			fmt.Fprintf(c.App.Writer, "indexed %d values from %d transcripts\n", total, read)
			return ferr
		},
	}
}

// indexFile adds the rows of one transcript.
func indexFile(ctx context.Context, path string, store blobstore.Store, cm *common, w *indexWriter) (int, error) {
	f, err := openInput(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	session := fileSession(path)
	src := transcript.NewSource(path, f, cm.format, cm.onBadLine)
	n := 0
	var p transcript.Parser
	var tools transcript.ToolNamer
	for {
		_, t, err := src.Next()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if t == nil {
			continue
		}
		if m, ok, err := archive.ParseMarker(t); ok && err == nil {
			n += indexArchived(ctx, path, session, m, store, src.Dialect(), cm, w)
			continue
		}
		// What the line references, read as retention reads it.
		var extracted, chunks []restore.Ref
		rerr := restore.References(t, func(r restore.Ref) {
			switch r.Kind {
			case restore.RefExtracted:
				extracted = append(extracted, r)
			case restore.RefEvicted:
				chunks = append(chunks, r)
			}
		})
		if t.Get(0, transcript.EvictedField) >= 0 {
			if rerr != nil {
				cm.ui.warnf(msgIndexRolled, path, rerr)
			}
			n += indexEvicted(ctx, path, session, chunks, store, src.Dialect(), &tools, cm, w)
			continue
		}
		if rerr != nil {
			cm.ui.warnf(msgIndexDamagedRef, path, rerr)
		}
		e := transcript.View(t, src.Dialect())
		tools.Name(&e) // as extract named them
		for _, r := range extracted {
			data, err := store.Get(ctx, r.Blob)
			if err != nil {
				cm.ui.warnf("%v", fmt.Errorf("%s: entry %s: %s: %w", path, e.ID, r.Pointer, err))
				continue
			}
			w.add(session.row(index.Row{EntryID: e.ID, Pointer: r.Pointer, Blob: r.Blob.String(), Kind: kindAt(&e, r.Pointer), Tool: transcript.ToolOf(&e, valueAt(&e, r.Pointer)), Time: e.Time, Text: removedText(&p, data)}))
			n++
		}
	}
}

// indexEvicted adds a row for each message in a range bs roll evicted,
// naming the tools of its results as roll named them, with the calls
// before them (tools).
func indexEvicted(ctx context.Context, path string, session rowSession, chunks []restore.Ref, store blobstore.Store, d transcript.Dialect, tools *transcript.ToolNamer, cm *common, w *indexWriter) int {
	n := 0
	var p transcript.Parser
	for _, c := range chunks {
		blob := c.Blob.String()
		data, err := store.Get(ctx, c.Blob)
		if err != nil {
			cm.ui.warnf(msgIndexRolled, path, err)
			continue
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			lt, err := p.Parse(line)
			if err != nil {
				continue
			}
			e := transcript.View(lt, d)
			tools.Name(&e)
			if !roll.Evictable(lt, e) {
				continue // it stayed: roll gave it no row
			}
			if e.ID == "" {
				e.ID = transcript.DeriveID(line) // as roll named it
			}
			w.add(session.row(index.Row{EntryID: e.ID, Blob: blob, Kind: "entry", Tool: transcript.EntryTool(&e), Time: e.Time, Text: roll.EntryText(line)}))
			n++
		}
	}
	return n
}

// kindAt finds the kind extract gave the value at ptr.
func kindAt(e *transcript.Entry, ptr string) string {
	if v := valueAt(e, ptr); v.Pointer != "" {
		return v.Kind.String()
	}
	return "text"
}

// valueAt is the value of e at ptr, or the zero Value.
func valueAt(e *transcript.Entry, ptr string) transcript.Value {
	for _, v := range e.Values {
		if v.Pointer == ptr {
			return v
		}
	}
	return transcript.Value{}
}

// removedText decodes a removed value for the index: a string's text; a
// block's text or thinking; the texts of an array of blocks (what bs trim
// moves), one a line; nothing for an image.
func removedText(p *transcript.Parser, raw []byte) string {
	t, err := p.Parse(raw)
	if err != nil {
		return ""
	}
	switch t.Nodes[0].Kind {
	case '"':
		return t.Str(0)
	case '[':
		var texts []string
		t.Children(0, func(b, _ int) {
			switch t.Str(t.Get(b, "type")) {
			case "text", "input_text", "output_text":
				if x := t.Get(b, "text"); x >= 0 && t.Nodes[x].Kind == '"' {
					texts = append(texts, t.Str(x))
				}
			}
		})
		return strings.Join(texts, "\n")
	}
	for _, k := range []string{"thinking", "text"} {
		if s := t.Str(t.Get(0, k)); s != "" {
			return s
		}
	}
	return ""
}
