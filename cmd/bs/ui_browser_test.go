package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/filters/webui"
	"github.com/bstools/bs/internal/corpustest"
)

// The end-to-end test of bs ui in a real browser: headless Chromium (the
// Debian chromium package) driven through the DevTools protocol. Without
// a browser it skips, unless BS_REQUIRE_BROWSER is set (CI sets it), and
// then it fails. BS_UI_SCREENSHOTS=DIR keeps its screenshots there (the
// README's are docs/ui); BS_UI_BENCH=FILE also measures how long the
// first page of FILE (a 256 MiB session from scripts/benchgen) takes to
// show, and logs it.

// chromiumPath finds the browser: BS_CHROMIUM, else chromium on PATH.
func chromiumPath(t *testing.T) string {
	if p := os.Getenv("BS_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BS_REQUIRE_BROWSER") != "" {
		t.Fatal("BS_REQUIRE_BROWSER is set but no chromium was found (apt-get install chromium, or set BS_CHROMIUM)")
	}
	t.Skip("no chromium: the browser test needs Debian's chromium package (BS_REQUIRE_BROWSER=1 makes this a failure)")
	return ""
}

// startUI runs 'bs ui ARGS...' in this process and returns its URL; the
// server stops with the test.
func startUI(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	done := make(chan struct{})
	var stderr bytes.Buffer
	go func() {
		defer close(done)
		line := append([]string{"bs", "ui"}, args...)
		app := newApp(strings.NewReader(""), pw, &stderr)
		app.Metadata = map[string]any{argsKey: line}
		if err := app.RunContext(ctx, line); err != nil {
			pw.CloseWithError(err)
		}
		pw.Close()
	}()
	t.Cleanup(func() { cancel(); <-done })
	url, err := bufio.NewReader(pr).ReadString('\n')
	go io.Copy(io.Discard, pr)
	if err != nil {
		t.Fatalf("bs ui did not print its URL: %v (stderr: %s)", err, stderr.String())
	}
	return strings.TrimSpace(url)
}

// newBrowser starts headless Chromium with the flags this machine needs
// (its closed network refuses the connections Chromium makes on its own).
func newBrowser(t *testing.T, chrome string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 900),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	// Every page records what its Content-Security-Policy blocked (an
	// inline style, a script or a font from elsewhere), for shoot to check.
	watch := chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
			Source: `window.__blocked = []; document.addEventListener("securitypolicyviolation",
				e => window.__blocked.push(e.violatedDirective + " " + (e.blockedURI || e.sample)));`,
		})
		return err
	})
	if err := chromedp.Do(ctx, watch); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// step runs browser actions with a deadline, failing the test with what
// it was doing.
func step(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs one browser action that answers a value.
func get[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// eval evaluates a JavaScript expression in the page (awaiting a promise).
func eval[T any](t *testing.T, ctx context.Context, what, expr string) T {
	t.Helper()
	return get(t, ctx, what, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
}

// css is a CSS selector (a plain string would be a DOM search).
func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// shoot checks that the page's Content-Security-Policy blocked nothing,
// and saves a screenshot of it to BS_UI_SCREENSHOTS/name.png.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if blocked := eval[[]string](t, ctx, "blocked", `window.__blocked || ["no watch"]`); len(blocked) > 0 {
		t.Errorf("page %s: the Content-Security-Policy blocked %q", name, blocked)
	}
	dir := os.Getenv("BS_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	step(t, ctx, "settle", chromedp.Sleep(300*time.Millisecond))
	png := get(t, ctx, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// canvasInk counts the painted pixels of the first canvas under sel.
func canvasInk(sel string) string {
	return fmt.Sprintf(`(() => { const c = document.querySelector(%q); if (!c) return -1;
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`, sel+" canvas")
}

func TestUIBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	pi := corpustest.Files(t, "openclaw/pi-mono__compact.jsonl")[0]
	others := []string{corpustest.Files(t, "claude-code/spotter__tool_heavy.jsonl")[0], corpustest.Files(t, "codex/codemie__rollout-2026-05-11T11-26-55-*.jsonl")[0]}

	work := t.TempDir()
	sessions := filepath.Join(work, "copies")
	store := filepath.Join(work, "store")
	ix := filepath.Join(work, "index.db")
	os.MkdirAll(sessions, 0o700)
	t.Setenv("XDG_STATE_HOME", filepath.Join(work, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "config"))
	t.Setenv("BS_CHECKPOINT_DIR", filepath.Join(work, "checkpoints"))
	original, err := os.ReadFile(pi)
	if err != nil {
		t.Fatal(err)
	}
	session := filepath.Join(sessions, "pi-compact.jsonl")
	copyTo(t, pi, session)
	for _, f := range others {
		copyTo(t, f, filepath.Join(sessions, filepath.Base(f)))
	}
	// Extract the pi session in place, filling the store and the search
	// index's queue, and take a checkpoint of it.
	if out, code := bsRun(t, "extract", "--store", store, "--index", ix, "-i", "--force", session); code != 0 {
		t.Fatalf("extract: %s", out)
	}
	if out, code := bsRun(t, "checkpoint", "--force", session); code != 0 {
		t.Fatalf("checkpoint: %s", out)
	}
	extracted, _ := os.ReadFile(session)

	url := startUI(t, "--store", store, "--index", ix, "--quiet-period", "0s", sessions)
	base := url[:strings.Index(url, "/?token=")]
	ctx := newBrowser(t, chrome)

	// The sessions table lists the three sessions with their gauge.
	step(t, ctx, "sessions table", chromedp.Navigate(url), chromedp.WaitVisible(css(`#sessions tbody tr[data-id]`)))
	gauges := eval[[]string](t, ctx, "gauges", `[...document.querySelectorAll("#sessions tbody tr[data-id] .gauge .lbl")].map(e => e.textContent)`)
	if len(gauges) != 3 {
		t.Fatalf("sessions table: gauges %q; want 3 rows with a gauge", gauges)
	}
	for _, g := range gauges {
		if !strings.Contains(g, "%") || !strings.Contains(g, "/") {
			t.Errorf("gauge %q: want percent and tokens/window", g)
		}
	}
	shoot(t, ctx, "sessions")
	// Filtered by runtime, then by text.
	eval[int](t, ctx, "filter by runtime", `(() => { const s = document.getElementById("filter-runtime");
		s.value = "Codex"; s.dispatchEvent(new Event("change")); return 1; })()`)
	if n := eval[int](t, ctx, "rows", `document.querySelectorAll("#sessions tbody tr[data-id]").length`); n != 1 {
		t.Errorf("filtered by runtime Codex: %d rows, want 1", n)
	}
	eval[int](t, ctx, "filter by text", `(() => { const s = document.getElementById("filter-runtime"); s.value = "";
		s.dispatchEvent(new Event("change")); const i = document.getElementById("filter-text"); i.value = "pi-comp";
		i.dispatchEvent(new Event("input")); return 1; })()`)
	if n := eval[int](t, ctx, "rows", `document.querySelectorAll("#sessions tbody tr[data-id]").length`); n != 1 {
		t.Errorf("filtered by text: %d rows, want 1", n)
	}

	// A session opens.
	id := webui.SessionID(session)
	step(t, ctx, "open the session",
		chromedp.Click(css(`#sessions tr[data-id="`+id+`"]`)),
		chromedp.WaitVisible(css(`#entries article.entry`)))
	if name := get(t, ctx, "session name", chromedp.Text(css(`#session-name`))); name != "pi-compact" {
		t.Errorf("session name %q, want pi-compact", name)
	}
	shoot(t, ctx, "session")

	// A placeholder expands to the stored value: the value the original
	// file holds at that place.
	step(t, ctx, "placeholder", chromedp.WaitVisible(css(`.ph button.expand`)))
	where := eval[[]string](t, ctx, "placeholder's place", `(() => { const b = document.querySelector(".ph button.expand").closest(".block");
		const a = b.closest("article"); return [a.dataset.line, b.dataset.pointer, a.dataset.id]; })()`)
	line, ptr, entryID := where[0], where[1], where[2]
	step(t, ctx, "expand the placeholder", chromedp.Click(css(`.ph button.expand`)), chromedp.WaitVisible(css(`pre.stored`)))
	shown := eval[string](t, ctx, "stored value", `document.querySelector("pre.stored").textContent`)
	want := stringAt(t, original, line, ptr)
	if shown != want {
		t.Errorf("stored value of line %s %s: got %d chars %.80q, want %d chars %.80q", line, ptr, len(shown), shown, len(want), want)
	}
	eval[int](t, ctx, "scroll", `(window.scrollBy(0, -120), 1)`)
	shoot(t, ctx, "placeholder")

	// A restore click changes the file on disk, and the file round-trips
	// through bs restore --all.
	step(t, ctx, "restore",
		chromedp.Click(css(`article[data-id="`+entryID+`"] button.restore`)),
		chromedp.WaitVisible(css(`article[data-id="`+entryID+`"] .badge.restored`)))
	restored, _ := os.ReadFile(session)
	if bytes.Equal(restored, extracted) {
		t.Fatal("the restore click left the file unchanged")
	}
	checkRestoredLine(t, restored, line, ptr, want)
	all, code := bsRunOut(t, "restore", "--all", "--store", store, session)
	if code != 0 {
		t.Fatalf("restore --all after the click: exit %d", code)
	}
	compareAllButLine(t, all, original, line)

	// An entry is found by its id, on whatever page it is.
	lastID := lastEntryID(t, restored)
	step(t, ctx, "jump to an entry by id",
		chromedp.SetValue(css(`.pager input.goto`), lastID),
		chromedp.Click(css(`.pager button[type="submit"]`)),
		chromedp.WaitVisible(css(`article.entry.hl[data-id="`+lastID+`"]`)))

	// A preview says what extract would do to the Codex session, and
	// changes nothing.
	codex := filepath.Join(sessions, filepath.Base(others[1]))
	before, _ := os.ReadFile(codex)
	step(t, ctx, "preview",
		chromedp.Navigate(base+"/#/s/"+webui.SessionID(codex)+"/actions"),
		chromedp.Click(css(`#preview-extract`)),
		chromedp.WaitVisible(css(`#action-result h2`)))
	if got := get(t, ctx, "preview result", chromedp.Text(css(`#action-result h2`))); got != "Preview: bs extract" {
		t.Errorf("preview result %q, want a change previewed", got)
	}
	if after, _ := os.ReadFile(codex); !bytes.Equal(before, after) {
		t.Error("a preview changed the file")
	}
	shoot(t, ctx, "actions")

	// The charts are drawn.
	step(t, ctx, "tokens chart", chromedp.Navigate(base+"/#/s/"+id+"/tokens"), chromedp.WaitVisible(css(`#kinds-chart canvas`)))
	if ink := eval[int](t, ctx, "kinds chart", canvasInk("#kinds-chart")); ink <= 0 {
		t.Errorf("the kinds chart has %d painted pixels", ink)
	}
	shoot(t, ctx, "tokens")
	step(t, ctx, "timeline chart", chromedp.Navigate(base+"/#/s/"+id+"/timeline"), chromedp.WaitVisible(css(`#timeline-chart canvas`)))
	if ink := eval[int](t, ctx, "timeline chart", canvasInk("#timeline-chart")); ink <= 0 {
		t.Errorf("the timeline chart has %d painted pixels", ink)
	}
	shoot(t, ctx, "timeline")
	step(t, ctx, "checkpoint", chromedp.Navigate(base+"/#/s/"+id+"/checkpoint"), chromedp.WaitVisible(css(`#cp-yaml`)))
	if cp := get(t, ctx, "checkpoint text", chromedp.Text(css(`#cp-text`))); !strings.Contains(cp, "pi-compact") && cp == "" {
		t.Errorf("the checkpoint's rendered text is %q", cp)
	}

	// A search hit opens its entry.
	step(t, ctx, "search", chromedp.Navigate(base+"/#/search?q=saeedesmaili"), chromedp.WaitVisible(css(`#hits .hit`)))
	hitEntry := get(t, ctx, "hit", chromedp.AttributeValue(css(`#hits .hit`), "data-entry")).Value
	shoot(t, ctx, "search")
	step(t, ctx, "open the hit", chromedp.Click(css(`#hits .hit`)), chromedp.WaitVisible(css(`article.entry.hl`)))
	opened := get(t, ctx, "opened entry", chromedp.AttributeValue(css(`article.entry.hl`), "data-id")).Value
	if hitEntry == "" || opened != hitEntry {
		t.Errorf("the hit for entry %q opened entry %q", hitEntry, opened)
	}

	// A request without the token is refused, from the page and from
	// outside it.
	if status := eval[int](t, ctx, "no token", `fetch("/api/sessions", {credentials: "omit"}).then(r => r.status)`); status != http.StatusForbidden {
		t.Errorf("fetch without the cookie: status %d, want 403", status)
	}
	resp, err := http.Get(base + "/api/sessions")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("request without the token: status %d, want 403", resp.StatusCode)
	}

	if big := os.Getenv("BS_UI_BENCH"); big != "" {
		measureFirstPage(t, ctx, big)
	}
}

func copyTo(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// bsRun runs a bs command line in process and returns its stderr.
func bsRun(t *testing.T, args ...string) (string, int) {
	var stderr bytes.Buffer
	code := run(append([]string{"bs"}, args...), strings.NewReader(""), io.Discard, &stderr)
	return stderr.String(), code
}

// bsRunOut runs a bs command line in process and returns its stdout.
func bsRunOut(t *testing.T, args ...string) ([]byte, int) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"bs"}, args...), strings.NewReader(""), &stdout, &stderr)
	if code != 0 {
		t.Logf("bs %s: %s", strings.Join(args, " "), stderr.String())
	}
	return stdout.Bytes(), code
}

// lineOf returns line n (from 1, as a decimal string) of data.
func lineOf(t *testing.T, data []byte, n string) []byte {
	t.Helper()
	var i int
	fmt.Sscan(n, &i)
	lines := bytes.Split(data, []byte("\n"))
	if i < 1 || i > len(lines) {
		t.Fatalf("no line %s", n)
	}
	return lines[i-1]
}

// stringAt decodes the string at ptr in line n of data.
func stringAt(t *testing.T, data []byte, n, ptr string) string {
	t.Helper()
	var p transcript.Parser
	tree, err := p.Parse(lineOf(t, data, n))
	if err != nil {
		t.Fatal(err)
	}
	node, err := tree.Resolve(ptr)
	if err != nil {
		t.Fatalf("line %s: %v", n, err)
	}
	return tree.Str(node)
}

// checkRestoredLine checks that line n holds the original value again,
// stamped _restored.
func checkRestoredLine(t *testing.T, data []byte, n, ptr, want string) {
	t.Helper()
	if got := stringAt(t, data, n, ptr); got != want {
		t.Errorf("line %s after the restore click holds %.80q, want the original %.80q", n, got, want)
	}
	if !bytes.Contains(lineOf(t, data, n), []byte(`"_restored"`)) {
		t.Errorf("line %s after the restore click has no _restored stamp", n)
	}
}

// compareAllButLine checks that restore --all gave back every line of
// the original byte for byte except line n, which a restore by id keeps
// stamped (README: bs restore).
func compareAllButLine(t *testing.T, got, want []byte, n string) {
	t.Helper()
	g, w := bytes.Split(got, []byte("\n")), bytes.Split(want, []byte("\n"))
	if len(g) != len(w) {
		t.Fatalf("restore --all: %d lines, want %d", len(g), len(w))
	}
	var skip int
	fmt.Sscan(n, &skip)
	for i := range g {
		if i+1 != skip && !bytes.Equal(g[i], w[i]) {
			t.Fatalf("restore --all: line %d differs from the original", i+1)
		}
	}
	if bytes.Contains(got, []byte("[[extracted-")) && !bytes.Contains(want, []byte("[[extracted-")) {
		t.Error("restore --all left a placeholder")
	}
}

// measureFirstPage serves the session big (a 256 MiB one from
// scripts/benchgen) and logs how long its first page takes to show in
// the browser: on first open, when the server reads the whole file for
// where its lines start, and again.
func measureFirstPage(t *testing.T, ctx context.Context, big string) {
	dir := t.TempDir()
	link := filepath.Join(dir, "big.jsonl")
	abs, err := filepath.Abs(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(abs, link); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		t.Fatal(err)
	}
	url := startUI(t, "--read-only", dir)
	base, token, _ := strings.Cut(url, "/?token=")
	// Give the browser the token without loading the sessions table,
	// which would read the file first: the first page is measured on a
	// server that has not read it yet.
	step(t, ctx, "the token", chromedp.Navigate(base+"/api/config"))
	eval[string](t, ctx, "cookie", `document.cookie = "`+webui.CookieName(token)+`=`+token+`; path=/"`)
	for _, run := range []string{"first open, the server reading where its lines start", "again"} {
		start := time.Now()
		step(t, ctx, "first page of the big session",
			chromedp.Navigate(base+"/#/s/"+webui.SessionID(link)+"/entries"),
			chromedp.WaitVisible(css(`#entries article.entry`)))
		t.Logf("first page of a %d MiB session in the browser (%s): %v", info.Size()>>20, run, time.Since(start).Round(time.Millisecond))
		step(t, ctx, "leave", chromedp.Navigate("about:blank"))
	}
	start := time.Now()
	step(t, ctx, "sessions table with the big session", chromedp.Navigate(base+"/#/"), chromedp.WaitVisible(css(`#sessions tbody tr[data-id]`)))
	t.Logf("sessions table with the %d MiB session (its usage records read): %v", info.Size()>>20, time.Since(start).Round(time.Millisecond))
}

// lastEntryID is the id of the last line of data that has one.
func lastEntryID(t *testing.T, data []byte) string {
	t.Helper()
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	var p transcript.Parser
	for i := len(lines) - 1; i >= 0; i-- {
		if tree, err := p.Parse(lines[i]); err == nil {
			if e := transcript.View(tree, transcript.OpenClaw); e.ID != "" {
				return e.ID
			}
		}
	}
	t.Fatal("no entry with an id")
	return ""
}
