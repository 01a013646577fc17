package webui

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/transcript"
)

// pageSize is how many entries a page of a session holds at most.
const pageSize = 200

// foldChars is how much of a value an entry view carries; the rest comes
// with /api/value.
const foldChars = 1500

// entryView is one line as the app shows it.
type entryView struct {
	Line        int      `json:"line"` // from 1
	Bytes       int      `json:"bytes"`
	ID          string   `json:"id,omitempty"`
	Type        string   `json:"type,omitempty"` // the line's type, as its dialect names it
	Role        string   `json:"role,omitempty"`
	Time        string   `json:"time,omitempty"`
	Message     bool     `json:"message,omitempty"`
	Tools       []string `json:"tools,omitempty"`
	CallIDs     []string `json:"call_ids,omitempty"`
	ToolName    string   `json:"tool_name,omitempty"`
	Answers     string   `json:"answers,omitempty"` // the call a result answers
	Restored    string   `json:"restored,omitempty"`
	Extractable string   `json:"extractable,omitempty"` // as written: true, false or N
	Redacted    bool     `json:"redacted,omitempty"`
	Blocks      []block  `json:"blocks"`
	Raw         string   `json:"raw,omitempty"` // the start of a line with no blocks
	Bad         string   `json:"bad,omitempty"` // why the line is not a JSON entry
}

// block is one value of an entry: text, thinking, a tool call's argument,
// a tool's result, an image, or a placeholder for what moved to the store.
type block struct {
	Kind      string        `json:"kind"`
	Pointer   string        `json:"pointer"`
	Text      string        `json:"text"`
	Chars     int           `json:"chars"` // the whole value's characters
	Cut       bool          `json:"cut,omitempty"`
	Call      string        `json:"call,omitempty"`
	Extracted *extractedRef `json:"extracted,omitempty"`
}

// extractedRef is where a placeholder's value is: _extracted's record.
type extractedRef struct {
	Pointer string `json:"pointer"`
	Blob    string `json:"blob"`
	Bytes   int64  `json:"bytes"`
}

func (s *Server) entries(w http.ResponseWriter, r *http.Request, fi *fileInfo, f *os.File) {
	q := r.URL.Query()
	from, ok := atoi(q.Get("from"))
	if !ok || from < 1 {
		failErr(w, badRequest("from: want a line number from 1"))
		return
	}
	count := 50
	if c := q.Get("count"); c != "" {
		if count, ok = atoi(c); !ok || count < 1 || count > pageSize {
			failErr(w, badRequest("count: want 1 to "+strconv.Itoa(pageSize)))
			return
		}
	}
	var p transcript.Parser
	out := []entryView{}
	for i := from - 1; i < len(fi.lines) && i < from-1+count; i++ {
		body, err := fi.line(f, i)
		if err != nil {
			failErr(w, err)
			return
		}
		out = append(out, view(&p, body, i+1, fi.dialect))
	}
	reply(w, map[string]any{"from": from, "lines": len(fi.lines), "entries": out, "dialect": fi.dialect.String()})
}

// view builds the entry view of one line.
func view(p *transcript.Parser, body []byte, num int, d transcript.Dialect) entryView {
	ev := entryView{Line: num, Bytes: len(body), Blocks: []block{}}
	t, err := p.Parse(body)
	if err != nil {
		ev.Bad = err.Error()
		ev.Raw = prefix(string(body), 400)
		return ev
	}
	e := transcript.View(t, d)
	ev.ID, ev.Role, ev.Time, ev.Message = e.ID, e.Role, e.Time, e.Message
	ev.Tools, ev.CallIDs, ev.ToolName = e.Tools, e.CallIDs, e.ToolName
	ev.Type = d.LineType(t)
	if e.Restored >= 0 {
		ev.Restored = t.Str(e.Restored)
	}
	if e.Extractable >= 0 {
		ev.Extractable = string(t.Raw(e.Extractable))
	}
	ev.Redacted = e.Redacted >= 0 && string(t.Raw(e.Redacted)) == "true"
	ev.Answers = answers(&e)
	moved := extractedOf(t, e.Extracted)
	used := map[string]bool{}
	for _, v := range e.Values {
		b := block{Kind: v.Kind.String(), Pointer: v.Pointer, Call: v.Call}
		if v.Kind == transcript.Image {
			b.Text = "[image]"
			b.Chars = t.StringChars(v.Measure)
		} else {
			b.Chars = t.StringChars(v.Measure)
			b.Text = prefix(t.StrPrefix(v.Measure, 4*foldChars), foldChars)
			b.Cut = b.Chars > utf8.RuneCountInString(b.Text)
		}
		if ref, ok := refFor(moved, v.Pointer); ok && transcript.IsRawPlaceholder(t.Raw(v.Measure)) {
			b.Extracted = ref
			used[ref.Pointer] = true
		}
		ev.Blocks = append(ev.Blocks, b)
	}
	for _, ref := range moved {
		if !used[ref.Pointer] {
			ev.Blocks = append(ev.Blocks, block{Kind: "extracted", Pointer: ref.Pointer, Extracted: ref})
		}
	}
	if len(ev.Blocks) == 0 {
		ev.Raw = prefix(string(body), 400)
	}
	return ev
}

// refFor finds the _extracted record of a value: its own pointer, or its
// block's (a thinking or image block replaced by a text block).
func refFor(moved []*extractedRef, ptr string) (*extractedRef, bool) {
	for _, ref := range moved {
		if ref.Pointer == ptr || ref.Pointer+"/text" == ptr {
			return ref, true
		}
	}
	return nil, false
}

// extractedOf lists _extracted's records.
func extractedOf(t *transcript.Tree, node int) []*extractedRef {
	var refs []*extractedRef
	if node < 0 || t.Nodes[node].Kind != '{' {
		return nil
	}
	t.Children(node, func(c, _ int) {
		ref := &extractedRef{Pointer: t.Key(c), Blob: t.Str(t.Get(c, "blob"))}
		if n := t.Get(c, "bytes"); n >= 0 {
			ref.Bytes, _ = strconv.ParseInt(string(t.Raw(n)), 10, 64)
		}
		refs = append(refs, ref)
	})
	return refs
}

// answers is the id of the call a tool result answers: the call of its
// first value that belongs to one, else the first call the entry view
// says it answers (Entry.Answers).
func answers(e *transcript.Entry) string {
	for _, v := range e.Values {
		if v.Call != "" {
			return v.Call
		}
	}
	if len(e.Answers) > 0 {
		return e.Answers[0]
	}
	return ""
}

// prefix cuts s to at most n characters.
func prefix(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// validEntryID reports whether s may be an entry or call id: printable,
// short, and nothing that would need escaping in JSON.
func validEntryID(s string) bool {
	if s == "" || len(s) > 256 {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == '"' || r == '\\' || r == 0x7f || r == utf8.RuneError {
			return false
		}
	}
	return true
}

// valueLimit bounds the bytes of one value the app sends.
const valueLimit = 8 << 20

// value answers one value of an entry in full: read from the line, or,
// for a placeholder, from the store (verified against its digest).
func (s *Server) value(w http.ResponseWriter, r *http.Request, fi *fileInfo, f *os.File) {
	q := r.URL.Query()
	num, ok := atoi(q.Get("line"))
	id, ptr := q.Get("id"), q.Get("ptr")
	if !ok || num < 1 {
		failErr(w, badRequest("line: want a line number from 1"))
		return
	}
	if id != "" && !validEntryID(id) {
		failErr(w, badRequest("malformed entry id"))
		return
	}
	if ptr != "" && !strings.HasPrefix(ptr, "/") {
		failErr(w, badRequest("ptr: want a JSON Pointer"))
		return
	}
	t, e, err := fi.entryAt(f, num, id)
	if err != nil {
		failErr(w, err)
		return
	}
	for _, ref := range extractedOf(t, e.Extracted) {
		if ref.Pointer != ptr && ref.Pointer+"/text" != ptr {
			continue
		}
		d, err := blobstore.ParseDigest(ref.Blob)
		if err != nil {
			failErr(w, badRequest("the entry names a malformed blob"))
			return
		}
		data, err := s.opt.Store.Get(r.Context(), d)
		if err != nil {
			failErr(w, err)
			return
		}
		replyValue(w, "store", ref.Blob, data)
		return
	}
	n, err := t.Resolve(ptr)
	if err != nil {
		failErr(w, notFound("no value at "+ptr))
		return
	}
	replyValue(w, "line", "", t.Raw(n))
}

// replyValue sends a raw JSON value: a string decoded, anything else as
// indented JSON.
func replyValue(w http.ResponseWriter, source, blob string, raw []byte) {
	out := map[string]any{"source": source, "bytes": len(raw)}
	if blob != "" {
		out["blob"] = blob
	}
	cut := len(raw) > valueLimit
	if cut {
		raw = raw[:valueLimit]
		out["cut"] = true
	}
	var str string
	var buf bytes.Buffer
	switch {
	case !cut && len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &str) == nil:
		out["text"] = str
	case !cut && json.Indent(&buf, raw, "", "  ") == nil:
		out["text"], out["json"] = buf.String(), true
	default:
		out["text"] = strings.ToValidUTF8(string(raw), "\uFFFD")
	}
	reply(w, out)
}

// entryAt parses line num of path and checks that it is entry id (when id
// is given): the file may have changed since the page was read.
func (fi *fileInfo) entryAt(f *os.File, num int, id string) (*transcript.Tree, transcript.Entry, error) {
	if num > len(fi.lines) {
		return nil, transcript.Entry{}, notFound("no line " + strconv.Itoa(num))
	}
	body, err := fi.line(f, num-1)
	if err != nil {
		return nil, transcript.Entry{}, err
	}
	var p transcript.Parser
	t, err := p.Parse(body)
	if err != nil {
		return nil, transcript.Entry{}, notFound("line " + strconv.Itoa(num) + " is not a JSON entry")
	}
	e := transcript.View(t, fi.dialect)
	if id != "" && e.ID != id {
		return nil, transcript.Entry{}, &httpError{http.StatusConflict, "the session changed: line " + strconv.Itoa(num) + " is no longer entry " + id + " (reload)"}
	}
	return t, e, nil
}

// located is where an id occurs: the entry itself, a call it makes, or a
// result answering it.
type located struct {
	Line  int    `json:"line"`
	Match string `json:"match"` // entry, call or result
}

// locateLimit bounds the places /api/locate reports.
const locateLimit = 20

// locate finds the lines where an entry or call id occurs, by its bytes,
// parsing only the lines that hold them.
func (s *Server) locate(w http.ResponseWriter, r *http.Request, fi *fileInfo, f *os.File) {
	id := r.URL.Query().Get("id")
	if !validEntryID(id) {
		failErr(w, badRequest("malformed entry id"))
		return
	}
	needle, _ := json.Marshal(id)
	needle = bytes.ReplaceAll(needle, []byte(`\u0026`), []byte("&"))
	found := []located{}
	seen := map[int]bool{}
	var p transcript.Parser
	err := scanFor(f, fi.size, needle, func(off int64) bool {
		i := fi.lineAt(off)
		if i < 0 || seen[i] {
			return true
		}
		seen[i] = true
		body, err := fi.line(f, i)
		if err != nil {
			return false
		}
		t, err := p.Parse(body)
		if err != nil {
			return true
		}
		e := transcript.View(t, fi.dialect)
		switch {
		case e.ID == id:
			found = append(found, located{i + 1, "entry"})
		case containsStr(e.CallIDs, id):
			found = append(found, located{i + 1, "call"})
		case answers(&e) == id:
			found = append(found, located{i + 1, "result"})
		}
		return len(found) < locateLimit
	})
	if err != nil {
		failErr(w, err)
		return
	}
	reply(w, map[string]any{"id": id, "found": found})
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scanFor calls fn with the offset of each occurrence of needle in f's
// first size bytes, until fn returns false.
func scanFor(f *os.File, size int64, needle []byte, fn func(int64) bool) error {
	const chunk = 4 << 20
	buf := make([]byte, chunk+len(needle))
	for off := int64(0); off < size; off += chunk {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 && err != nil {
			return err
		}
		b := buf[:n]
		for i := 0; ; {
			j := bytes.Index(b[i:], needle)
			if j < 0 || i+j >= chunk {
				break // one in the overlap is found by the next chunk
			}
			if !fn(off + int64(i+j)) {
				return nil
			}
			i += j + 1
		}
	}
	return nil
}
