package webui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/transcript"
)

const (
	testToken = "0123456789abcdef0123456789abcdef"
	testHost  = "127.0.0.1:4242"
	origin    = "http://" + testHost
)

// fakeCommands records the calls the app makes and answers as told.
type fakeCommands struct {
	calls   []string
	err     error
	preview func(path, out string) error
}

func (f *fakeCommands) Stats(ctx context.Context, path string) (json.RawMessage, error) {
	f.calls = append(f.calls, "stats "+path)
	return json.RawMessage(`{"file":"` + filepath.Base(path) + `","tokens":42}`), f.err
}

func (f *fakeCommands) Preview(ctx context.Context, filter, path, out string) error {
	f.calls = append(f.calls, "preview "+filter)
	if f.err != nil {
		return f.err
	}
	return f.preview(path, out)
}

func (f *fakeCommands) Apply(ctx context.Context, filter, path string) error {
	f.calls = append(f.calls, "apply "+filter)
	return f.err
}

func (f *fakeCommands) Restore(ctx context.Context, path, id string) (json.RawMessage, error) {
	f.calls = append(f.calls, "restore "+id)
	return json.RawMessage(`{"restored":true,"entry_id":"` + id + `"}`), f.err
}

func (f *fakeCommands) SetExtractable(ctx context.Context, path, id, value string) error {
	f.calls = append(f.calls, "extractable "+id+"="+value)
	return f.err
}

// fixture is a server over one extracted session (the sample session
// of testdata, its values in an in-memory store) and a file outside its
// roots.
type fixture struct {
	srv      *Server
	cmds     *fakeCommands
	store    *blobstore.Mem
	session  string // the listed file
	outside  string // a transcript the listing does not give
	original []byte
	cpDir    checkpoint.Dir
}

func newFixture(t *testing.T, readOnly bool) *fixture {
	t.Helper()
	dir := t.TempDir()
	orig, err := os.ReadFile(filepath.Join("..", "..", "testdata", "sample", "session.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	store := &blobstore.Mem{}
	opt := extract.Defaults()
	opt.Store, opt.KeepRecent, opt.MinLength = store, 1, 100
	var lean bytes.Buffer
	if _, err := extract.Run(context.Background(), "sample", bytes.NewReader(orig), &lean, opt); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(lean.Bytes(), []byte("[[extracted-")) {
		t.Fatal("the fixture extracted nothing")
	}
	fx := &fixture{store: store, session: filepath.Join(dir, "roots", "s.jsonl"), outside: filepath.Join(dir, "outside.jsonl"),
		original: orig, cmds: &fakeCommands{}, cpDir: checkpoint.Dir{Root: filepath.Join(dir, "cp")}}
	os.MkdirAll(filepath.Dir(fx.session), 0o700)
	os.WriteFile(fx.session, lean.Bytes(), 0o600)
	os.WriteFile(fx.outside, orig, 0o600)
	fx.cmds.preview = func(path, out string) error { return os.WriteFile(out, orig, 0o600) }
	fx.srv = New(Options{
		List:        func() ([]string, error) { return []string{fx.session}, nil },
		Store:       store,
		Checkpoints: fx.cpDir,
		Commands:    fx.cmds,
		ReadOnly:    readOnly,
		Token:       testToken,
		Hosts:       loopbackHosts(testHost),
		Search: func(ctx context.Context, q index.Query) ([]index.Hit, error) {
			return []index.Hit{{Row: index.Row{Session: fx.session, EntryID: "10005ccd", Blob: "sha256:" + strings.Repeat("ab", 32), Kind: "tool_result"}, Snippet: "a [tiny] CLI"},
				{Row: index.Row{Session: "/elsewhere/x.jsonl", EntryID: "e2", Kind: "entry"}, Snippet: "x"}}, nil
		},
	})
	return fx
}

// do sends a request as the app would, with the cookie and Host;
// change adjusts it first.
func (fx *fixture) do(t *testing.T, method, target string, body any, change ...func(*http.Request)) (*http.Response, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	r := httptest.NewRequest(method, target, rd)
	r.Host = testHost
	r.AddCookie(&http.Cookie{Name: CookieName(testToken), Value: testToken})
	if method == http.MethodPost {
		r.Header.Set("Origin", origin)
	}
	for _, c := range change {
		c(r)
	}
	w := httptest.NewRecorder()
	fx.srv.ServeHTTP(w, r)
	res := w.Result()
	var out map[string]any
	data, _ := io.ReadAll(res.Body)
	res.Body = io.NopCloser(bytes.NewReader(data))
	json.Unmarshal(data, &out)
	return res, out
}

func (fx *fixture) id() string { return SessionID(fx.session) }

func wantStatus(t *testing.T, res *http.Response, out map[string]any, code int) {
	t.Helper()
	if res.StatusCode != code {
		t.Fatalf("%s %s: status %d (%v), want %d", res.Request.Method, res.Request.URL, res.StatusCode, out, code)
	}
}

func TestToken(t *testing.T) {
	fx := newFixture(t, false)
	noCookie := func(r *http.Request) { r.Header.Del("Cookie") }
	for _, target := range []string{"/api/sessions", "/", "/assets/app.js", "/api/entries?s=" + fx.id() + "&from=1"} {
		res, _ := fx.do(t, "GET", target, nil, noCookie)
		wantStatus(t, res, nil, http.StatusForbidden)
		res, _ = fx.do(t, "GET", target, nil, func(r *http.Request) {
			r.Header.Del("Cookie")
			r.AddCookie(&http.Cookie{Name: CookieName(testToken), Value: strings.Repeat("0", len(testToken))})
		})
		wantStatus(t, res, nil, http.StatusForbidden)
	}
	res, _ := fx.do(t, "GET", "/?token=wrong", nil, noCookie)
	wantStatus(t, res, nil, http.StatusForbidden)
	res, _ = fx.do(t, "GET", "/?token="+testToken, nil, noCookie)
	wantStatus(t, res, nil, http.StatusSeeOther)
	c := res.Cookies()
	if len(c) != 1 || c[0].Value != testToken || !c[0].HttpOnly || c[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %+v: want the token, HttpOnly, SameSite=Strict", c)
	}
	if loc := res.Header.Get("Location"); loc != "/" {
		t.Errorf("redirect to %q: want / (the token out of the address bar)", loc)
	}
	// A POST without the token is refused even from the right Origin.
	res, _ = fx.do(t, "POST", "/api/restore", map[string]string{"s": fx.id(), "id": "10005ccd"}, noCookie)
	wantStatus(t, res, nil, http.StatusForbidden)
	if len(fx.cmds.calls) != 0 {
		t.Errorf("refused requests ran %v", fx.cmds.calls)
	}
	res, _ = fx.do(t, "GET", "/", nil)
	wantStatus(t, res, nil, http.StatusOK)
}

func TestHostAndHeaders(t *testing.T) {
	fx := newFixture(t, false)
	for _, host := range []string{"evil.example", "evil.example:4242", "127.0.0.1:9999", ""} {
		res, out := fx.do(t, "GET", "/api/sessions", nil, func(r *http.Request) { r.Host = host })
		wantStatus(t, res, out, http.StatusMisdirectedRequest)
	}
	res, out := fx.do(t, "GET", "/api/sessions", nil, func(r *http.Request) { r.Host = "localhost:4242" })
	wantStatus(t, res, out, http.StatusOK)
	if csp := res.Header.Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	res, _ = fx.do(t, "GET", "/api/sessions", nil, func(r *http.Request) { r.Host = "evil.example" })
	if res.Header.Get("Content-Security-Policy") == "" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Error("a refusal lacks the security headers")
	}
}

func TestOrigin(t *testing.T) {
	fx := newFixture(t, false)
	body := map[string]string{"s": fx.id(), "id": "10005ccd"}
	for _, o := range []string{"", "http://evil.example", "https://" + testHost, "http://127.0.0.1:9999", "null"} {
		res, out := fx.do(t, "POST", "/api/restore", body, func(r *http.Request) { r.Header.Set("Origin", o) })
		wantStatus(t, res, out, http.StatusForbidden)
	}
	if len(fx.cmds.calls) != 0 {
		t.Fatalf("refused requests ran %v", fx.cmds.calls)
	}
	// State changes are POST only.
	res, out := fx.do(t, "GET", "/api/restore?s="+fx.id()+"&id=10005ccd", nil)
	wantStatus(t, res, out, http.StatusMethodNotAllowed)
	res, out = fx.do(t, "POST", "/api/restore", body)
	wantStatus(t, res, out, http.StatusOK)
	if got := out["result"].(map[string]any)["entry_id"]; got != "10005ccd" || len(fx.cmds.calls) != 1 {
		t.Errorf("restore: result %v, calls %v", out, fx.cmds.calls)
	}
	res, out = fx.do(t, "POST", "/api/restore", body, func(r *http.Request) { r.Header.Set("Origin", "http://localhost:4242") })
	wantStatus(t, res, out, http.StatusOK)
}

func TestReadOnly(t *testing.T) {
	fx := newFixture(t, true)
	for _, p := range []string{"/api/preview", "/api/apply", "/api/restore", "/api/extractable"} {
		res, out := fx.do(t, "POST", p, map[string]string{"s": fx.id(), "filter": "extract", "id": "10005ccd", "value": "true"})
		wantStatus(t, res, out, http.StatusNotFound)
	}
	if len(fx.cmds.calls) != 0 {
		t.Errorf("read-only ran %v", fx.cmds.calls)
	}
	res, out := fx.do(t, "GET", "/api/config", nil)
	wantStatus(t, res, out, http.StatusOK)
	if out["read_only"] != true {
		t.Errorf("config %v: want read_only", out)
	}
	// Reading still works, stats included.
	res, out = fx.do(t, "GET", "/api/stats?s="+fx.id(), nil)
	wantStatus(t, res, out, http.StatusOK)
}

func TestSessionRefusals(t *testing.T) {
	fx := newFixture(t, false)
	cases := map[string]int{
		"":                         http.StatusBadRequest,
		"zz":                       http.StatusBadRequest,
		"../../../etc/passwd":      http.StatusBadRequest,
		"/etc/passwd":              http.StatusBadRequest,
		fx.outside:                 http.StatusBadRequest,
		"0123456789abcdef":         http.StatusNotFound,
		"0123456789ABCDEFG":        http.StatusBadRequest,
		SessionID(fx.outside):      http.StatusNotFound, // a real transcript outside the roots
		SessionID("/etc/passwd"):   http.StatusNotFound,
		"0123456789abcde%00":       http.StatusBadRequest,
		"0123456789abcdef&s=other": http.StatusNotFound,
	}
	for _, ep := range []string{"/api/session?s=%s", "/api/entries?from=1&s=%s", "/api/timeline?s=%s", "/api/stats?s=%s",
		"/api/checkpoint?s=%s", "/api/locate?id=x&s=%s", "/api/value?line=1&ptr=/id&s=%s"} {
		for s, code := range cases {
			res, out := fx.do(t, "GET", strings.Replace(ep, "%s", strings.ReplaceAll(s, "/", "%2F"), 1), nil)
			wantStatus(t, res, out, code)
		}
	}
	for _, p := range []string{"/api/preview", "/api/apply", "/api/restore", "/api/extractable"} {
		res, out := fx.do(t, "POST", p, map[string]string{"s": SessionID(fx.outside), "filter": "extract", "id": "10005ccd", "value": "true"})
		wantStatus(t, res, out, http.StatusNotFound)
		res, out = fx.do(t, "POST", p, map[string]string{"s": fx.outside, "filter": "extract", "id": "10005ccd", "value": "true"})
		wantStatus(t, res, out, http.StatusBadRequest)
	}
	// The file outside the roots was never opened: nothing of it was
	// read into the cache, and no command ran on anything.
	fx.srv.files.mu.Lock()
	_, read := fx.srv.files.files[fx.outside]
	fx.srv.files.mu.Unlock()
	if read || len(fx.cmds.calls) != 0 {
		t.Errorf("outside file read %v, commands %v", read, fx.cmds.calls)
	}
	// A listed session that has gone is not found.
	os.Rename(fx.session, fx.session+".gone")
	res, out := fx.do(t, "GET", "/api/entries?from=1&s="+fx.id(), nil)
	wantStatus(t, res, out, http.StatusNotFound)
}

func TestSessionsAndEntries(t *testing.T) {
	fx := newFixture(t, false)
	res, out := fx.do(t, "GET", "/api/sessions", nil)
	wantStatus(t, res, out, http.StatusOK)
	rows := out["sessions"].([]any)
	if len(rows) != 1 {
		t.Fatalf("sessions %v", out)
	}
	row := rows[0].(map[string]any)
	if row["id"] != fx.id() || row["runtime"] != "OpenClaw/pi" || row["gauge"] == nil || row["moved_values"].(float64) == 0 ||
		row["lines"].(float64) != 12 || row["project"] != "/home/user/projects/weather" {
		t.Errorf("row %v", row)
	}

	for _, bad := range []string{"from=0", "from=x", "from=1&count=0", "from=1&count=201", "from=-1"} {
		res, out := fx.do(t, "GET", "/api/entries?s="+fx.id()+"&"+bad, nil)
		wantStatus(t, res, out, http.StatusBadRequest)
	}
	res, out = fx.do(t, "GET", "/api/entries?s="+fx.id()+"&from=3&count=100", nil)
	wantStatus(t, res, out, http.StatusOK)
	entries := out["entries"].([]any)
	if len(entries) != 10 || out["lines"].(float64) != 12 {
		t.Fatalf("entries from 3: %d of %v lines", len(entries), out["lines"])
	}
	first := entries[0].(map[string]any)
	if first["line"].(float64) != 3 || first["id"] != "10001eef" || first["role"] != "user" {
		t.Errorf("line 3: %v", first)
	}
	// Every placeholder names its blob and size; the call and its result
	// are linked by the call's id.
	var placeholders int
	var calls, answers []string
	for _, e := range entries {
		e := e.(map[string]any)
		cs, _ := e["call_ids"].([]any)
		for _, c := range cs {
			calls = append(calls, c.(string))
		}
		if a, ok := e["answers"].(string); ok {
			answers = append(answers, a)
		}
		for _, b := range e["blocks"].([]any) {
			b := b.(map[string]any)
			if ref, ok := b["extracted"].(map[string]any); ok {
				placeholders++
				if !strings.HasPrefix(ref["blob"].(string), "sha256:") || ref["bytes"].(float64) <= 0 {
					t.Errorf("placeholder %v", ref)
				}
			}
		}
	}
	if placeholders == 0 || len(calls) == 0 || !strings.Contains(strings.Join(answers, " "), calls[0]) {
		t.Errorf("placeholders %d, calls %v, answers %v", placeholders, calls, answers)
	}
	res, out = fx.do(t, "GET", "/api/entries?s="+fx.id()+"&from=13", nil)
	wantStatus(t, res, out, http.StatusOK)
	if len(out["entries"].([]any)) != 0 {
		t.Errorf("past the end: %v", out)
	}
}

// placeholderOf finds a placeholder of the fixture's session: its line,
// entry id and pointer.
func (fx *fixture) placeholderOf(t *testing.T) (int, string, string) {
	t.Helper()
	_, out := fx.do(t, "GET", "/api/entries?s="+fx.id()+"&from=1&count=200", nil)
	for _, e := range out["entries"].([]any) {
		e := e.(map[string]any)
		for _, b := range e["blocks"].([]any) {
			b := b.(map[string]any)
			if b["extracted"] != nil && b["kind"] == "tool_result" {
				return int(e["line"].(float64)), e["id"].(string), b["pointer"].(string)
			}
		}
	}
	t.Fatal("no placeholder")
	return 0, "", ""
}

func TestValue(t *testing.T) {
	fx := newFixture(t, false)
	line, id, ptr := fx.placeholderOf(t)
	q := func(line int, id, ptr string) string {
		return "/api/value?s=" + fx.id() + "&line=" + itoa(line) + "&id=" + id + "&ptr=" + ptr
	}
	res, out := fx.do(t, "GET", q(line, id, ptr), nil)
	wantStatus(t, res, out, http.StatusOK)
	// The stored value is the original's, byte for byte.
	want := originalString(t, fx.original, line, ptr)
	if out["source"] != "store" || out["text"] != want {
		t.Errorf("value from the store %.80v, want %.80q", out, want)
	}
	res, out = fx.do(t, "GET", q(3, "10001eef", "/message/content/0/text"), nil)
	wantStatus(t, res, out, http.StatusOK)
	if out["source"] != "line" || !strings.Contains(out["text"].(string), "README.md") {
		t.Errorf("value from the line: %v", out)
	}
	cases := []struct {
		target string
		code   int
	}{
		{q(0, id, ptr), http.StatusBadRequest},
		{q(99, id, ptr), http.StatusNotFound},
		{q(line, "other", ptr), http.StatusConflict}, // the file changed under the page
		{q(line, `a"b`, ptr), http.StatusBadRequest},
		{q(line, id, "message"), http.StatusBadRequest},
		{q(line, id, "/no/such/thing"), http.StatusNotFound},
	}
	for _, c := range cases {
		res, out := fx.do(t, "GET", c.target, nil)
		wantStatus(t, res, out, c.code)
	}
	// A blob missing from the store is an error, never other bytes.
	fx.store.List(context.Background(), func(d blobstore.Digest) error { return fx.store.Delete(context.Background(), d) })
	res, out = fx.do(t, "GET", q(line, id, ptr), nil)
	wantStatus(t, res, out, http.StatusNotFound)
}

func originalString(t *testing.T, data []byte, line int, ptr string) string {
	t.Helper()
	var p transcript.Parser
	tree, err := p.Parse(bytes.Split(data, []byte("\n"))[line-1])
	if err != nil {
		t.Fatal(err)
	}
	n, err := tree.Resolve(ptr)
	if err != nil {
		t.Fatal(err)
	}
	return tree.Str(n)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestLocate(t *testing.T) {
	fx := newFixture(t, false)
	res, out := fx.do(t, "GET", "/api/locate?s="+fx.id()+"&id=10005ccd", nil)
	wantStatus(t, res, out, http.StatusOK)
	found := out["found"].([]any)
	if len(found) != 1 || found[0].(map[string]any)["match"] != "entry" || found[0].(map[string]any)["line"].(float64) != 5 {
		t.Errorf("locate 10005ccd: %v", out)
	}
	res, out = fx.do(t, "GET", "/api/locate?s="+fx.id()+"&id=call_1", nil)
	wantStatus(t, res, out, http.StatusOK)
	var matches []string
	for _, f := range out["found"].([]any) {
		matches = append(matches, f.(map[string]any)["match"].(string))
	}
	if strings.Join(matches, ",") != "call,result" {
		t.Errorf("locate call_1: %v", out)
	}
	for _, bad := range []string{"", `x"y`, `x\y`, strings.Repeat("x", 300), "%0a"} {
		res, out := fx.do(t, "GET", "/api/locate?s="+fx.id()+"&id="+bad, nil)
		wantStatus(t, res, out, http.StatusBadRequest)
	}
}

func TestTimelineStatsCheckpoint(t *testing.T) {
	fx := newFixture(t, false)
	res, out := fx.do(t, "GET", "/api/timeline?s="+fx.id(), nil)
	wantStatus(t, res, out, http.StatusOK)
	if len(out["points"].([]any)) == 0 || out["window"].(float64) <= 0 {
		t.Errorf("timeline %v", out)
	}
	// The usage records after what extract moved carry what it took out
	// of their context: the timeline shows what they hold now.
	last := out["points"].([]any)[len(out["points"].([]any))-1].(map[string]any)
	if now, ok := last["now"].(float64); !ok || now >= last["tokens"].(float64) {
		t.Errorf("last usage record %v: want what it holds now, less than it recorded", last)
	}
	for range 2 {
		res, out = fx.do(t, "GET", "/api/stats?s="+fx.id(), nil)
		wantStatus(t, res, out, http.StatusOK)
	}
	if out["tokens"].(float64) != 42 || len(fx.cmds.calls) != 1 {
		t.Errorf("stats %v, calls %v: want one run, then the cached report", out, fx.cmds.calls)
	}
	// A changed file is counted again.
	time.Sleep(10 * time.Millisecond)
	f, _ := os.OpenFile(fx.session, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"custom","customType":"x","data":{},"id":"ffff0001","parentId":null,"timestamp":"2026-03-08T13:00:00Z"}` + "\n")
	f.Close()
	fx.do(t, "GET", "/api/stats?s="+fx.id(), nil)
	if len(fx.cmds.calls) != 2 {
		t.Errorf("calls %v: a changed file must be counted again", fx.cmds.calls)
	}
	fx.cmds.err = &CommandError{Message: "bs: stats: boom"}
	os.Chtimes(fx.session, time.Now(), time.Now().Add(time.Second))
	res, out = fx.do(t, "GET", "/api/stats?s="+fx.id(), nil)
	wantStatus(t, res, out, http.StatusUnprocessableEntity)
	fx.cmds.err = nil

	res, out = fx.do(t, "GET", "/api/checkpoint?s="+fx.id(), nil)
	wantStatus(t, res, out, http.StatusOK)
	if out["found"] != false || out["key"] == "" {
		t.Errorf("checkpoint before any: %v", out)
	}
	src, _ := os.Open(fx.session)
	defer src.Close()
	opt := checkpoint.Defaults()
	opt.Dir, opt.Force, opt.Now = fx.cpDir, true, time.Date(2026, 3, 8, 13, 0, 0, 0, time.UTC)
	if _, err := checkpoint.Run(fx.session, src, io.Discard, opt); err != nil {
		t.Fatal(err)
	}
	res, out = fx.do(t, "GET", "/api/checkpoint?s="+fx.id(), nil)
	wantStatus(t, res, out, http.StatusOK)
	if out["found"] != true || !strings.Contains(out["yaml"].(string), "meta:") || out["text"] == "" {
		t.Errorf("checkpoint: %v", out)
	}
}

func TestSearchAndBlob(t *testing.T) {
	fx := newFixture(t, false)
	res, out := fx.do(t, "GET", "/api/search?q=tiny", nil)
	wantStatus(t, res, out, http.StatusOK)
	hits := out["hits"].([]any)
	if len(hits) != 2 || hits[0].(map[string]any)["session_id"] != fx.id() || hits[1].(map[string]any)["session_id"] != nil {
		t.Errorf("hits %v: the first opens the listed session, the second none", hits)
	}
	for _, bad := range []string{"", "q=", "q=x&limit=0", "q=x&limit=999", "q=" + strings.Repeat("x", 1001)} {
		res, out := fx.do(t, "GET", "/api/search?"+bad, nil)
		wantStatus(t, res, out, http.StatusBadRequest)
	}
	fx.srv.opt.Search = func(context.Context, index.Query) ([]index.Hit, error) { return nil, errors.New("no search index yet") }
	res, out = fx.do(t, "GET", "/api/search?q=x", nil)
	wantStatus(t, res, out, http.StatusInternalServerError)

	d, _ := fx.store.Put(context.Background(), []byte("evicted lines"))
	res, out = fx.do(t, "GET", "/api/blob?b="+d.String(), nil)
	wantStatus(t, res, out, http.StatusOK)
	if out["text"] != "evicted lines" {
		t.Errorf("blob %v", out)
	}
	for b, code := range map[string]int{"": 400, "sha256:xyz": 400, "../x": 400, "sha256:" + strings.Repeat("cd", 32): 404} {
		res, out := fx.do(t, "GET", "/api/blob?b="+b, nil)
		wantStatus(t, res, out, code)
	}
}

func TestActions(t *testing.T) {
	fx := newFixture(t, false)
	// Preview measures the file and what the filter would write.
	res, out := fx.do(t, "POST", "/api/preview", map[string]string{"s": fx.id(), "filter": "extract"})
	wantStatus(t, res, out, http.StatusOK)
	lean, _ := os.ReadFile(fx.session)
	if out["applied"] != false || out["bytes_before"].(float64) != float64(len(lean)) || out["bytes_after"].(float64) != float64(len(fx.original)) ||
		out["moved_values"].(float64) >= 0 || out["changed"] != true || out["estimate_after"].(float64) <= out["estimate_before"].(float64) {
		t.Errorf("preview %v", out)
	}
	if after, _ := os.ReadFile(fx.session); !bytes.Equal(after, lean) {
		t.Error("preview changed the file")
	}
	res, out = fx.do(t, "POST", "/api/apply", map[string]string{"s": fx.id(), "filter": "trim"})
	wantStatus(t, res, out, http.StatusOK)
	if out["applied"] != true {
		t.Errorf("apply %v", out)
	}
	// A refusal reaches the page with the command's own message.
	fx.cmds.err = &CommandError{Message: "bs: extract: s.jsonl: changed 1s ago, within --quiet-period 2s", Busy: true}
	res, out = fx.do(t, "POST", "/api/apply", map[string]string{"s": fx.id(), "filter": "extract"})
	wantStatus(t, res, out, http.StatusConflict)
	if out["error"] != fx.cmds.err.(*CommandError).Message {
		t.Errorf("refusal %v", out)
	}
	res, out = fx.do(t, "POST", "/api/preview", map[string]string{"s": fx.id(), "filter": "roll"})
	wantStatus(t, res, out, http.StatusConflict)
	fx.cmds.err = nil

	bad := []any{
		map[string]string{"s": fx.id(), "filter": "archive"},
		map[string]string{"s": fx.id()},
		map[string]string{"s": fx.id(), "filter": "extract", "path": "/etc/passwd"},
		"not an object",
	}
	for _, b := range bad {
		for _, p := range []string{"/api/preview", "/api/apply"} {
			res, out := fx.do(t, "POST", p, b)
			wantStatus(t, res, out, http.StatusBadRequest)
		}
	}
	res, out = fx.do(t, "POST", "/api/restore", map[string]string{"s": fx.id()})
	wantStatus(t, res, out, http.StatusBadRequest)
	res, out = fx.do(t, "POST", "/api/restore", map[string]string{"s": fx.id(), "id": "a\"b"})
	wantStatus(t, res, out, http.StatusBadRequest)
	for _, v := range []string{"maybe", "", "-1", "1e3", "true;rm"} {
		res, out := fx.do(t, "POST", "/api/extractable", map[string]string{"s": fx.id(), "id": "10005ccd", "value": v})
		wantStatus(t, res, out, http.StatusBadRequest)
	}
	for _, v := range []string{"true", "false", "5"} {
		res, out := fx.do(t, "POST", "/api/extractable", map[string]string{"s": fx.id(), "id": "10005ccd", "value": v})
		wantStatus(t, res, out, http.StatusOK)
	}
	want := "preview extract,apply trim,apply extract,preview roll,extractable 10005ccd=true,extractable 10005ccd=false,extractable 10005ccd=5"
	if got := strings.Join(fx.cmds.calls, ","); got != want {
		t.Errorf("calls %s\nwant  %s", got, want)
	}
}

func TestAssets(t *testing.T) {
	fx := newFixture(t, false)
	res, _ := fx.do(t, "GET", "/", nil)
	page, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("index: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	// Everything the page loads is served from the binary.
	refs := regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllSubmatch(page, -1)
	if len(refs) < 4 {
		t.Fatalf("the page loads %d assets", len(refs))
	}
	for _, m := range refs {
		ref := string(m[1])
		if !strings.HasPrefix(ref, "/assets/") && !strings.HasPrefix(ref, "#") {
			t.Errorf("the page loads %q from outside the binary", ref)
			continue
		}
		if strings.HasPrefix(ref, "/assets/") {
			res, _ := fx.do(t, "GET", ref, nil)
			if res.StatusCode != 200 {
				t.Errorf("%s: %d", ref, res.StatusCode)
			}
		}
	}
	if bytes.Contains(page, []byte("<script>")) || bytes.Contains(page, []byte("style=")) {
		t.Error("inline script or style, which the Content-Security-Policy forbids")
	}
	res, _ = fx.do(t, "GET", "/assets/nope.js", nil)
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("missing asset: %d", res.StatusCode)
	}
}

func TestLoopbackHosts(t *testing.T) {
	if got := strings.Join(loopbackHosts("127.0.0.1:8080"), " "); got != "127.0.0.1:8080 localhost:8080" {
		t.Errorf("loopback: %s", got)
	}
	if got := strings.Join(loopbackHosts("192.0.2.1:8080"), " "); got != "192.0.2.1:8080" {
		t.Errorf("not loopback: %s", got)
	}
	a, b := NewToken(), NewToken()
	if len(a) != 48 || a == b {
		t.Errorf("tokens %q %q", a, b)
	}
	// Two servers on one host keep their cookies apart (cookies ignore
	// the port).
	if CookieName(a) == CookieName(b) || CookieName(a) != CookieName(a) || strings.Contains(CookieName(a), a[:8]) {
		t.Errorf("cookie names %q %q", CookieName(a), CookieName(b))
	}
}

// TestTimelineCompactedFrom: a compaction on the timeline carries the
// context size it records it compacted from, as each runtime spells it.
func TestTimelineCompactedFrom(t *testing.T) {
	dir := t.TempDir()
	files := map[string]struct {
		data   string
		before float64
	}{
		"pi.jsonl": {`{"type":"session","version":3,"id":"s1","timestamp":"2026-03-08T12:00:00Z","cwd":"/w"}` + "\n" +
			`{"type":"message","id":"m1","parentId":null,"timestamp":"2026-03-08T12:00:01Z","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"type":"compaction","id":"c1","parentId":"m1","timestamp":"2026-03-08T12:00:02Z","summary":"s","firstKeptEntryId":"m1","tokensBefore":182034}` + "\n", 182034},
		"cc.jsonl": {`{"parentUuid":null,"type":"user","uuid":"u1","sessionId":"cs","timestamp":"2026-03-08T12:00:00Z","message":{"role":"user","content":"hi"}}` + "\n" +
			`{"parentUuid":null,"logicalParentUuid":"u1","type":"system","subtype":"compact_boundary","content":"Conversation compacted","uuid":"u2","sessionId":"cs","timestamp":"2026-03-08T12:00:01Z","compactMetadata":{"trigger":"auto","preTokens":155313}}` + "\n", 155313},
	}
	var paths []string
	for name, f := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(f.data), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	fx := &fixture{cmds: &fakeCommands{}}
	fx.srv = New(Options{
		List:        func() ([]string, error) { return paths, nil },
		Store:       &blobstore.Mem{},
		Checkpoints: checkpoint.Dir{Root: filepath.Join(dir, "cp")},
		Commands:    fx.cmds,
		Token:       testToken,
		Hosts:       loopbackHosts(testHost),
	})
	for _, p := range paths {
		res, out := fx.do(t, "GET", "/api/timeline?s="+SessionID(p), nil)
		wantStatus(t, res, out, http.StatusOK)
		marks, _ := out["marks"].([]any)
		want := files[filepath.Base(p)].before
		if len(marks) != 1 || marks[0].(map[string]any)["tokens_before"] != want {
			t.Errorf("%s: marks %v, want one compacted from %v tokens", filepath.Base(p), marks, want)
		}
	}
}
