package agent

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/transcript"
)

var now = time.Date(2026, 2, 20, 17, 30, 0, 0, time.UTC)

// k1Session is an OpenClaw session whose tool result k1, holding big,
// is old enough to extract.
func k1Session(big string) string {
	return `{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/tmp"}` + "\n" +
		`{"type":"message","id":"k1","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"message","id":"m1","timestamp":"t","message":{"role":"user","content":"a"}}` + "\n" +
		`{"type":"message","id":"m2","timestamp":"t","message":{"role":"user","content":"b"}}` + "\n" +
		`{"type":"message","id":"m3","timestamp":"t","message":{"role":"user","content":"c"}}` + "\n"
}

// memRewrite is an Env.Rewrite over a file held in *file.
func memRewrite(file *[]byte) func(context.Context, string, EditFunc) error {
	return func(_ context.Context, _ string, edit EditFunc) error {
		var out bytes.Buffer
		if err := edit(bytes.NewReader(*file), int64(len(*file)), &out); err != nil {
			return err
		}
		*file = out.Bytes()
		return nil
	}
}

// lean extracts everything eligible from in.
func lean(t testing.TB, in []byte, store blobstore.Store) []byte {
	t.Helper()
	opt := extract.Defaults()
	opt.Types = transcript.AllKinds
	opt.Store, opt.Now = store, now
	var out bytes.Buffer
	if _, err := extract.Run(context.Background(), "t", bytes.NewReader(in), &out, opt); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// extractedIDs lists the ids of the entries with _extracted.
func extractedIDs(data []byte) []string {
	var ids []string
	src := transcript.NewSource("t", bytes.NewReader(data), transcript.Unknown, func(*transcript.BadLineError) error { return nil })
	for {
		_, tr, err := src.Next()
		if err != nil {
			return ids
		}
		if tr == nil {
			continue
		}
		if e := transcript.View(tr, src.Dialect()); e.Extracted >= 0 && e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
}

// viaSplice runs the fast path over data.
func viaSplice(t *testing.T, data []byte, opt restore.Options) ([]byte, *restore.Result, error) {
	t.Helper()
	var sp splice
	var out bytes.Buffer
	err := sp.run(context.Background(), bytes.NewReader(data), int64(len(data)), &out, opt)
	if errors.Is(err, errUnchanged) {
		return data, sp.res, sp.err
	}
	if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), sp.res, sp.err
}

// viaRestore runs bs restore's whole-file path over data.
func viaRestore(t *testing.T, data []byte, opt restore.Options) ([]byte, *restore.Result, error) {
	t.Helper()
	var out bytes.Buffer
	res, _, err := restore.Run(context.Background(), "t", bytes.NewReader(data), &out, opt)
	return out.Bytes(), res, err
}

func sameResult(a, b *restore.Result) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Restored == b.Restored && a.EntryID == b.EntryID && strings.Join(a.KeysRestored, ",") == strings.Join(b.KeysRestored, ",") &&
		strings.Join(a.PointersRestored, ",") == strings.Join(b.PointersRestored, ",") &&
		a.PreviousRestoredAt == b.PreviousRestoredAt && a.Suggestion == b.Suggestion
}

// The fast path gives what restoring the whole file gives, on every corpus
// transcript, for the first and last extracted entries, all keys or one.
func TestSpliceMatchesRestore(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/corpus/*/*.jsonl")
	files = append(files, "../../testdata/sample/session.jsonl")
	tested := 0
	defer func() {
		if tested < len(files)/2 {
			t.Errorf("only %d of %d transcripts had extracted entries to restore", tested, len(files))
		}
	}()
	for _, f := range files {
		in, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		store := new(blobstore.Mem)
		l := lean(t, in, store)
		ids := extractedIDs(l)
		if len(ids) == 0 {
			continue
		}
		tested++
		for _, id := range []string{ids[0], ids[len(ids)-1], "no-such-entry"} {
			for _, keys := range [][]string{nil, {"text"}} {
				opt := restore.Options{ID: id, Keys: keys, Store: store, Now: now}
				want, wantRes, _ := viaRestore(t, l, opt)
				got, gotRes, gotErr := viaSplice(t, l, opt)
				if gotErr != nil {
					// A failed call changes nothing.
					if !bytes.Equal(got, l) {
						t.Errorf("%s: %s %v: failed (%v) but changed the file", f, id, keys, gotErr)
					}
					continue
				}
				if !bytes.Equal(got, want) || !sameResult(gotRes, wantRes) {
					t.Errorf("%s: restore %s %v: the fast path differs from restore (%+v vs %+v)", f, id, keys, gotRes, wantRes)
				}
			}
		}
		opt := restore.Options{SetExtractable: map[string][]byte{ids[0]: []byte("false")}, Now: now}
		want, _, _ := viaRestore(t, l, opt)
		if got, _, _ := viaSplice(t, l, opt); !bytes.Equal(got, want) {
			t.Errorf("%s: set_extractable %s: the fast path differs from restore", f, ids[0])
		}
	}
}

// Lines that only mention the id (a parentId), restore calls under MCP
// names, a last line without a line feed, and an id spelled with escapes.
func TestSpliceEdges(t *testing.T) {
	big := strings.Repeat("x", 600)
	in := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}` + "\n" +
		`{"type":"message","id":"a\/b","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"message","id":"k1","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"message","id":"m1","parentId":"k1","timestamp":"t","message":{"role":"user","content":"see k1 and \"k1\""}}` + "\n" +
		`{"type":"message","id":"m2","parentId":"m1","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c9","name":"mcp__bs__purge_control","arguments":{"action":"restore","entry_id":"k1"}}]}}` + "\n" +
		`{"type":"message","id":"m3","parentId":"m2","timestamp":"t","message":{"role":"assistant","content":[{"type":"toolCall","id":"c8","name":"restore","arguments":{"entry_id":"zz"}}]}}` + "\n" +
		`{"type":"message","id":"m4","parentId":"m3","timestamp":"t","message":{"role":"user","content":"u"}}`
	store := new(blobstore.Mem)
	l := lean(t, []byte(in), store)
	if ids := extractedIDs(l); strings.Join(ids, " ") != "a/b k1" {
		t.Fatalf("extracted %v", ids)
	}
	defer func(n int64) { scanChunk = n }(scanChunk)
	for _, chunk := range []int64{4 << 20, 5, 7, 64, 333} {
		scanChunk = chunk
		spliceEdges(t, l, store)
	}
}

func spliceEdges(t *testing.T, l []byte, store blobstore.Store) {
	for _, id := range []string{"k1", "a/b"} {
		opt := restore.Options{ID: id, Store: store, Now: now}
		want, wantRes, _ := viaRestore(t, l, opt)
		got, gotRes, err := viaSplice(t, l, opt)
		if err != nil || !bytes.Equal(got, want) || !sameResult(gotRes, wantRes) || !gotRes.Restored {
			t.Errorf("restore %s: err %v, result %+v vs %+v\n got: %s\nwant: %s", id, err, gotRes, wantRes, got, want)
		}
		if bytes.Count(got, []byte(`"_redacted":true`)) != 2 {
			t.Errorf("restore %s: the two restore calls are not both redacted:\n%s", id, got)
		}
	}
}

func TestSessionsResolve(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string) {
		must(os.MkdirAll(filepath.Dir(p), 0o700))
		must(os.WriteFile(p, []byte(s), 0o600))
	}
	write(filepath.Join(dir, "main", "sessions", "abc.jsonl"), "{}\n")
	write(filepath.Join(dir, "main", "sessions", "sessions.json"), `{"agent:main:main":{"sessionId":"abc"},"agent:main:evil":{"sessionFile":"../../../outside.jsonl"},"agent:main:abs":{"sessionFile":"`+filepath.Join(root, "outside.jsonl")+`"}}`)
	write(filepath.Join(dir, "proj", "def.jsonl"), "{}\n")
	write(filepath.Join(root, "outside.jsonl"), "{}\n")
	must(os.Symlink(filepath.Join(root, "outside.jsonl"), filepath.Join(dir, "link.jsonl")))
	must(os.Symlink(root, filepath.Join(dir, "up")))
	must(os.Symlink(filepath.Join(dir, "proj", "def.jsonl"), filepath.Join(dir, "inner.jsonl")))

	s := Sessions{Dir: dir}
	real, _ := filepath.EvalSymlinks(dir)
	for arg, want := range map[string]string{
		"agent:main:main":                      "main/sessions/abc.jsonl",
		"abc":                                  "main/sessions/abc.jsonl",
		"def":                                  "proj/def.jsonl",
		"proj/def.jsonl":                       "proj/def.jsonl",
		"inner.jsonl":                          "proj/def.jsonl", // a link that stays inside
		filepath.Join(dir, "proj/def.jsonl"):   "proj/def.jsonl", // absolute, inside
		"proj/../main/sessions/abc.jsonl":      "main/sessions/abc.jsonl",
		"./main/sessions/../../proj/def.jsonl": "proj/def.jsonl",
	} {
		got, err := s.resolve(arg)
		if err != nil || got != filepath.Join(real, want) {
			t.Errorf("Resolve(%q) = %q, %v; want %s", arg, got, err, want)
		}
	}
	for _, arg := range []string{
		"../outside.jsonl", "proj/../../outside.jsonl", "link.jsonl", "up/outside.jsonl",
		filepath.Join(root, "outside.jsonl"), "/etc/passwd", "agent:main:evil", "agent:main:abs", "..", ".",
	} {
		if got, err := s.resolve(arg); err == nil || !strings.Contains(err.Error(), "not inside the sessions directory") {
			t.Errorf("Resolve(%q) = %q, %v; want it refused", arg, got, err)
		}
	}
	if _, err := s.resolve(""); err == nil || !strings.Contains(err.Error(), "missing argument session") {
		t.Errorf("Resolve(\"\") = %v", err)
	}
	if _, err := s.resolve("nosuch"); err == nil || err.Error() != `no session "nosuch"` {
		t.Errorf("Resolve(nosuch) = %v", err)
	}
	if _, err := s.resolve("proj"); err == nil || !strings.Contains(err.Error(), "not a transcript file") {
		t.Errorf("Resolve(proj) = %v", err)
	}

	one := Sessions{File: filepath.Join(dir, "proj", "def.jsonl")}
	for _, arg := range []string{"", "def", one.File} {
		if got, err := one.resolve(arg); err != nil || got != one.File {
			t.Errorf("one session: Resolve(%q) = %q, %v", arg, got, err)
		}
	}
	if _, err := one.resolve("abc"); err == nil {
		t.Errorf("one session: Resolve(abc) accepted another session")
	}
}

// A sessions directory named through a symbolic link: paths spelled
// through the link are inside it, links leading out are still refused.
func TestSessionsResolveLinkedDir(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "real")
	if err := os.MkdirAll(filepath.Join(dir, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(dir, "proj", "def.jsonl"), filepath.Join(root, "outside.jsonl")} {
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "rootlink")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(root, filepath.Join(dir, "up")); err != nil {
		t.Fatal(err)
	}
	real, _ := filepath.EvalSymlinks(filepath.Join(dir, "proj", "def.jsonl"))
	for _, s := range []Sessions{{Dir: link}, {Dir: dir}} {
		for _, arg := range []string{filepath.Join(link, "proj", "def.jsonl"), filepath.Join(dir, "proj", "def.jsonl"), "proj/def.jsonl", "def"} {
			if got, err := s.resolve(arg); err != nil || got != real {
				t.Errorf("Dir %s: Resolve(%q) = %q, %v; want %s", s.Dir, arg, got, err, real)
			}
		}
		for _, arg := range []string{filepath.Join(link, "up", "outside.jsonl"), filepath.Join(link, "..", "outside.jsonl"), "up/outside.jsonl"} {
			if got, err := s.resolve(arg); err == nil || !strings.Contains(err.Error(), "not inside the sessions directory") {
				t.Errorf("Dir %s: Resolve(%q) = %q, %v; want it refused", s.Dir, arg, got, err)
			}
		}
		if _, err := s.resolve(filepath.Join(link, "nosuch.jsonl")); err == nil || !strings.Contains(err.Error(), "no session") {
			t.Errorf("Dir %s: Resolve(nosuch through the link) = %v", s.Dir, err)
		}
	}
}

// A tool call through Call: decoding, dispatch and errors, with a
// rewrite that works on a file in memory.
func TestCall(t *testing.T) {
	big := strings.Repeat("y", 600)
	in := k1Session(big)
	store := new(blobstore.Mem)
	file := lean(t, []byte(in), store)
	rewrites := 0
	a := New(Env{
		Sessions: Sessions{File: "/s/k.jsonl"},
		Store:    store,
		Now:      func() time.Time { return now },
		Rewrite: func(_ context.Context, path string, edit EditFunc) error {
			var out bytes.Buffer
			if err := edit(bytes.NewReader(file), int64(len(file)), &out); err != nil {
				return err
			}
			rewrites++
			file = out.Bytes()
			return nil
		},
	})
	ctx := context.Background()
	res, isErr := a.Call(ctx, "restore", []byte(`{"entry_id":"k1","keys":["text"]}`))
	r, ok := res.(*RestoreResult)
	if isErr || !ok || !r.Restored || len(r.Values) != 1 || string(r.Values["/message/content/0/text"]) != `"`+big+`"` {
		t.Fatalf("restore = %#v, %v", res, isErr)
	}
	if !bytes.Contains(file, []byte(`"text":"`+big+`"}]},"_restored":"2026-02-20T17:30:00Z"}`)) || rewrites != 1 {
		t.Errorf("after restore (%d rewrites):\n%s", rewrites, file)
	}
	// A second restore has nothing left to restore: an error, no rewrite.
	res, isErr = a.Call(ctx, "purge_control", []byte(`{"action":"restore","entry_id":"k1"}`))
	if r, ok := res.(*RestoreResult); !isErr || !ok || r.Error != "entry k1 has no extracted values" || rewrites != 1 {
		t.Errorf("second restore = %#v, %v, %d rewrites", res, isErr, rewrites)
	}
	for _, c := range []struct{ name, args, err string }{
		{"nope", `{}`, `unknown tool "nope": want purge_control, restore, search, checkpoint`},
		{"purge_control", `{"action":"x"}`, `unknown action "x": want get_context, restore, set_extractable`},
		{"purge_control", ``, `missing argument action: want get_context, restore, set_extractable`},
		{"purge_control", `{"action":"set_extractable","entry_id":"k1","value":1.5}`, `bad or missing argument value: want true, false or a number of messages (an integer >= 0)`},
		{"restore", `[1]`, `bad arguments: want an object, got array`},
		{"restore", `{"entry_id":"k1"} {}`, `bad arguments: more than one JSON value`},
		{"search", `{"query":"q"}`, `no search index`},
		{"checkpoint", `{}`, `no checkpoint directory`},
	} {
		res, isErr := a.Call(ctx, c.name, []byte(c.args))
		if e, ok := res.(ErrorResult); !isErr || !ok || e.Error != c.err {
			t.Errorf("%s %s = %#v, %v; want error %q", c.name, c.args, res, isErr, c.err)
		}
	}
	res, isErr = a.Call(ctx, "purge_control", []byte(`{"action":"set_extractable","entry_id":"k1","value":"7"}`))
	if s, ok := res.(*SetExtractableResult); isErr || !ok || string(s.Extractable) != "7" || !bytes.Contains(file, []byte(`,"_extractable":7}`)) {
		t.Errorf("set_extractable 7 = %#v, %v:\n%s", res, isErr, file)
	}
}

// A restore whose rewrite fails restores nothing, though restore itself
// succeeded on the lines in memory.
func TestRestoreRewriteFails(t *testing.T) {
	big := strings.Repeat("y", 600)
	in := k1Session(big)
	store := new(blobstore.Mem)
	file := lean(t, []byte(in), store)
	a := New(Env{
		Sessions: Sessions{File: "/s/k.jsonl"},
		Store:    store,
		Now:      func() time.Time { return now },
		Rewrite: func(_ context.Context, path string, edit EditFunc) error {
			if err := edit(bytes.NewReader(file), int64(len(file)), new(bytes.Buffer)); err != nil {
				return err
			}
			return errors.New("the file is held open for writing")
		},
	})
	res, isErr := a.Call(context.Background(), "restore", []byte(`{"entry_id":"k1"}`))
	r, ok := res.(*RestoreResult)
	if !isErr || !ok || r.Restored || len(r.KeysRestored) != 0 || r.KeysRestored == nil || r.Values != nil || r.Error != "the file is held open for writing" {
		t.Errorf("restore with a failing rewrite = %#v, %v", res, isErr)
	}
}

// An id spelled with escapes in the file ("\u0065sc" for esc) is found
// as bs restore finds it.
func TestSpliceEscapedID(t *testing.T) {
	big := strings.Repeat("x", 600)
	in := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}` + "\n" +
		`{"type":"message","id":"\u0065sc","parentId":null,"timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"message","id":"m1","parentId":"esc","timestamp":"t","message":{"role":"user","content":"a"}}` + "\n" +
		`{"type":"message","id":"m2","parentId":"m1","timestamp":"t","message":{"role":"user","content":"b"}}` + "\n" +
		`{"type":"message","id":"m3","parentId":"m2","timestamp":"t","message":{"role":"user","content":"c"}}` + "\n"
	store := new(blobstore.Mem)
	l := lean(t, []byte(in), store)
	if ids := extractedIDs(l); strings.Join(ids, " ") != "esc" {
		t.Fatalf("extracted %v", ids)
	}
	opt := restore.Options{ID: "esc", Store: store, Now: now}
	want, wantRes, _ := viaRestore(t, l, opt)
	got, gotRes, err := viaSplice(t, l, opt)
	if err != nil || !bytes.Equal(got, want) || !sameResult(gotRes, wantRes) || !gotRes.Restored {
		t.Errorf("restore esc: err %v, result %+v vs %+v\n got: %s\nwant: %s", err, gotRes, wantRes, got, want)
	}
}

// A restore without a session argument, in a sessions directory, finds
// the session holding the entry, not the newest one that quotes its
// placeholder, and tries the next when the first has no such entry.
func TestRestoreByEntry(t *testing.T) {
	big := strings.Repeat("y", 600)
	in := k1Session(big)
	store := new(blobstore.Mem)
	dir := t.TempDir()
	real := filepath.Join(dir, "real.jsonl")
	quote := filepath.Join(dir, "quote.jsonl")
	odd := filepath.Join(dir, "odd.jsonl")
	head := `{"type":"session","version":3,"id":"s2","timestamp":"t","cwd":"/tmp"}` + "\n"
	files := map[string]string{
		real:  string(lean(t, []byte(in), store)),
		quote: head + `{"type":"message","id":"q1","timestamp":"t","message":{"role":"user","content":"what was [[extracted-k1]]?"}}` + "\n",
		// A line with _extracted of its own that quotes k1's placeholder.
		odd: head + `{"type":"message","id":"q2","timestamp":"t","message":{"role":"user","content":"and [[extracted-k1]]"},"_extracted":{}}` + "\n",
	}
	for i, p := range []string{real, quote, odd} {
		if err := os.WriteFile(p, []byte(files[p]), 0o600); err != nil {
			t.Fatal(err)
		}
		// real is the oldest, odd the newest.
		mt := now.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	a := New(Env{
		Sessions: Sessions{Dir: dir},
		Store:    store,
		Now:      func() time.Time { return now },
		Rewrite: func(_ context.Context, path string, edit EditFunc) error {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			var out bytes.Buffer
			if err := edit(bytes.NewReader(data), int64(len(data)), &out); err != nil {
				return err
			}
			return os.WriteFile(path, out.Bytes(), 0o600)
		},
	})
	res, isErr := a.Call(context.Background(), "restore", []byte(`{"entry_id":"k1"}`))
	if r, ok := res.(*RestoreResult); isErr || !ok || !r.Restored {
		t.Fatalf("restore k1 = %#v, %v", res, isErr)
	}
	if data, _ := os.ReadFile(real); !bytes.Contains(data, []byte(big)) {
		t.Errorf("k1 not restored in real.jsonl:\n%s", data)
	}
	for _, p := range []string{quote, odd} {
		if data, _ := os.ReadFile(p); string(data) != files[p] {
			t.Errorf("%s changed:\n%s", p, data)
		}
	}
	// Only quotes left: the error names the session tried last.
	res, isErr = a.Call(context.Background(), "restore", []byte(`{"entry_id":"k1"}`))
	if r, ok := res.(*RestoreResult); !isErr || !ok || r.Restored || !strings.Contains(r.Error, "(in session ") {
		t.Errorf("second restore k1 = %#v, %v", res, isErr)
	}
}

// The debug record of a restore names the entry's line in the file, not
// in the excerpt restore saw.
func TestSpliceLogLine(t *testing.T) {
	big := strings.Repeat("x", 600)
	in := `{"type":"session","version":3,"id":"s1","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}` + "\n" +
		`{"type":"message","id":"m1","parentId":null,"timestamp":"t","message":{"role":"user","content":"a"}}` + "\n" +
		`{"type":"message","id":"m2","parentId":"m1","timestamp":"t","message":{"role":"user","content":"b"}}` + "\n" +
		`{"type":"message","id":"k1","parentId":"m2","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"` + big + `"}]}}` + "\n" +
		`{"type":"message","id":"m3","parentId":"k1","timestamp":"t","message":{"role":"user","content":"c"}}` + "\n" +
		`{"type":"message","id":"m4","parentId":"m3","timestamp":"t","message":{"role":"user","content":"d"}}` + "\n" +
		`{"type":"message","id":"m5","parentId":"m4","timestamp":"t","message":{"role":"user","content":"e"}}` + "\n"
	store := new(blobstore.Mem)
	l := lean(t, []byte(in), store)
	var log bytes.Buffer
	opt := restore.Options{ID: "k1", Store: store, Now: now, Log: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	defer func(n int64) { scanChunk = n }(scanChunk)
	scanChunk = 100
	if _, res, err := viaSplice(t, l, opt); err != nil || !res.Restored {
		t.Fatalf("restore k1: %+v, %v", res, err)
	}
	if !strings.Contains(log.String(), " line=4") {
		t.Errorf("the log does not name line 4:\n%s", log.String())
	}
}

// A key names a pointer by any of its tokens ("content" as the skill
// suggests, on OpenClaw's /message/content/0/text); a key naming nothing
// is an error, and nothing is restored.
func TestRestoreKeys(t *testing.T) {
	big := strings.Repeat("y", 600)
	in := k1Session(big)
	store := new(blobstore.Mem)
	lean := lean(t, []byte(in), store)
	file := lean
	a := New(Env{
		Sessions: Sessions{File: "/s/k.jsonl"},
		Store:    store,
		Now:      func() time.Time { return now },
		Rewrite:  memRewrite(&file),
	})
	ctx := context.Background()
	res, isErr := a.Call(ctx, "restore", []byte(`{"entry_id":"k1","keys":["text","nope"]}`))
	if r, ok := res.(*RestoreResult); !isErr || !ok || r.Restored || r.Error != `entry k1 has no extracted key "nope": its keys are /message/content/0/text` || !bytes.Equal(file, lean) {
		t.Errorf("restore with an unknown key = %#v, %v", res, isErr)
	}
	res, isErr = a.Call(ctx, "restore", []byte(`{"entry_id":"k1","keys":["content"]}`))
	if r, ok := res.(*RestoreResult); isErr || !ok || !r.Restored || strings.Join(r.KeysRestored, ",") != "content" || strings.Join(r.PointersRestored, ",") != "/message/content/0/text" {
		t.Errorf("restore content = %#v, %v", res, isErr)
	}
}
