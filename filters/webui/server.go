// Package webui serves bs ui: a local web app over the sessions bs works
// on, to see where the tokens go, browse a session entry by entry, and
// restore or thin it with a click.
//
// It reads transcripts, the blob store, the search index and the
// checkpoints itself; everything that changes a transcript goes through
// [Commands], which the bs command implements with the very code its
// filters run with -i (the same locks, quiet period and refusals).
//
// Every request must carry the per-run token (in the URL the command
// prints, then in a cookie), name a Host the server answers to (DNS
// rebinding), and, when it changes anything, be a POST whose Origin is
// the server's own. Sessions are named by an opaque id of the files the
// listing found; a path is never taken from a request. Serve serves the
// app until the command is stopped.
package webui

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/index"
	"github.com/bstools/bs/filters/transcript"
)

//go:embed assets
var assets embed.FS

// Commands changes and measures transcripts through bs's own commands, as
// the command line runs them. An error that refuses the change (a live
// file, a lock held) is a *CommandError carrying the command's message.
type Commands interface {
	// Stats is 'bs stats --json FILE'.
	Stats(ctx context.Context, path string) (json.RawMessage, error)
	// Preview writes to the file out what 'bs FILTER FILE' would write,
	// storing the values it moves in a scratch store, and changes
	// nothing else: not the file, the store or the search index.
	Preview(ctx context.Context, filter, path, out string) error
	// Apply is 'bs FILTER -i FILE'.
	Apply(ctx context.Context, filter, path string) error
	// Restore is 'bs restore --id ID -i FILE'; it returns seed 000's
	// result object.
	Restore(ctx context.Context, path, id string) (json.RawMessage, error)
	// SetExtractable is 'bs restore --set-extractable ID=VALUE -i FILE'.
	SetExtractable(ctx context.Context, path, id, value string) error
}

// filters are the filters the app previews and applies.
var filters = []string{"extract", "trim", "roll"}

// CommandError is a command's refusal or failure, with the message bs
// shows on the command line.
type CommandError struct {
	Message string
	Busy    bool // the file is busy (changed lately, locked, held open): try later
}

func (e *CommandError) Error() string { return e.Message }

// Options configure a server.
type Options struct {
	// List returns the session files the app shows (absolute paths).
	List func() ([]string, error)
	// Store is where placeholders' values are read from.
	Store blobstore.Store
	// Search searches the index of bs search; nil when there is none.
	Search      func(ctx context.Context, q index.Query) ([]index.Hit, error)
	Checkpoints checkpoint.Dir
	Format      transcript.Dialect
	Window      int // --context-window, 0 for the transcript's
	// Commands runs bs's commands: stats, and the actions unless
	// ReadOnly. Without it the app serves neither.
	Commands Commands
	ReadOnly bool // serve no action: nothing is changed
	// Token is the per-run secret every request must carry; Hosts are
	// the Host header values the server answers to (host:port).
	Token string
	Hosts []string
	Log   *slog.Logger
}

// NewToken returns a fresh random token.
func NewToken() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// loopbackHosts are the Host values a server listening on addr (a bound
// host:port) answers to: the address itself, and localhost for a
// loopback address.
func loopbackHosts(addr string) []string {
	hosts := []string{addr}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return hosts
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		hosts = append(hosts, net.JoinHostPort("localhost", port))
	}
	return hosts
}

// Server is the app's HTTP handler.
type Server struct {
	opt        Options
	mux        *http.ServeMux
	files      *fileCache
	ids        *sessionIDs
	statsCache statsCache
}

// New builds a server.
func New(opt Options) *Server {
	if opt.Log == nil {
		opt.Log = slog.New(slog.DiscardHandler)
	}
	if opt.Commands == nil {
		opt.ReadOnly = true
	}
	s := &Server{opt: opt, mux: http.NewServeMux(), files: newFileCache(), ids: &sessionIDs{}}
	static, _ := fs.Sub(assets, "assets")
	s.mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.HandleFunc("GET /api/config", s.config)
	s.mux.HandleFunc("GET /api/sessions", s.sessions)
	s.mux.HandleFunc("GET /api/session", s.onPath(s.session))
	s.mux.HandleFunc("GET /api/entries", s.onFile(s.entries))
	s.mux.HandleFunc("GET /api/value", s.onFile(s.value))
	s.mux.HandleFunc("GET /api/locate", s.onFile(s.locate))
	s.mux.HandleFunc("GET /api/timeline", s.onFile(s.timeline))
	s.mux.HandleFunc("GET /api/stats", s.onPath(s.stats))
	s.mux.HandleFunc("GET /api/checkpoint", s.onPath(s.checkpoint))
	s.mux.HandleFunc("GET /api/search", s.search)
	s.mux.HandleFunc("GET /api/blob", s.blob)
	if !opt.ReadOnly {
		s.mux.HandleFunc("POST /api/preview", s.change(false))
		s.mux.HandleFunc("POST /api/apply", s.change(true))
		s.mux.HandleFunc("POST /api/restore", s.restore)
		s.mux.HandleFunc("POST /api/extractable", s.extractable)
	}
	return s
}

// onPath serves an endpoint on the request's session (parameter s).
func (s *Server) onPath(h func(w http.ResponseWriter, r *http.Request, path string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		path, err := s.path(r)
		if err != nil {
			failErr(w, err)
			return
		}
		h(w, r, path)
	}
}

// onFile serves an endpoint on the request's session file, opened
// through the cache of what is known of it.
func (s *Server) onFile(h func(w http.ResponseWriter, r *http.Request, fi *fileInfo, f *os.File)) http.HandlerFunc {
	return s.onPath(func(w http.ResponseWriter, r *http.Request, path string) {
		fi, f, err := s.files.get(path, s.opt.Format)
		if err != nil {
			failErr(w, err)
			return
		}
		defer f.Close()
		h(w, r, fi, f)
	})
}

// CookieName is the name of the cookie that carries token after the
// first page. It differs from server to server: cookies do not tell
// ports apart, and two bs ui on one host must not overwrite each
// other's.
func CookieName(token string) string {
	sum := sha256.Sum256([]byte("bs ui cookie " + token))
	return "bs_ui_" + hex.EncodeToString(sum[:6])
}

// ServeHTTP checks every request before it reaches a handler: the Host,
// the token, and for a request that is not a GET, its Origin.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-store")
	if !s.hostAllowed(r.Host) {
		fail(w, http.StatusMisdirectedRequest, "this server does not answer to host "+r.Host)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		if o := r.Header.Get("Origin"); o == "" || !s.hostAllowed(strings.TrimPrefix(o, "http://")) || !strings.HasPrefix(o, "http://") {
			fail(w, http.StatusForbidden, "a request that changes anything must come from this app (Origin)")
			return
		}
	}
	if q := r.URL.Query().Get("token"); q != "" && r.Method == http.MethodGet && r.URL.Path == "/" {
		if !s.tokenOK(q) {
			fail(w, http.StatusForbidden, "wrong token: open the URL bs ui printed")
			return
		}
		// Trade the token in the URL for a cookie, and take it out of the
		// address bar and the history.
		http.SetCookie(w, &http.Cookie{Name: CookieName(s.opt.Token), Value: q, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	c, err := r.Cookie(CookieName(s.opt.Token))
	if err != nil || !s.tokenOK(c.Value) {
		fail(w, http.StatusForbidden, "no valid token: open the URL bs ui printed")
		return
	}
	s.mux.ServeHTTP(w, r)
}

func (s *Server) tokenOK(t string) bool {
	return s.opt.Token != "" && subtle.ConstantTimeCompare([]byte(t), []byte(s.opt.Token)) == 1
}

func (s *Server) hostAllowed(host string) bool {
	for _, h := range s.opt.Hosts {
		if strings.EqualFold(host, h) {
			return true
		}
	}
	return false
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	page, err := assets.ReadFile("assets/index.html")
	if err != nil {
		fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(page)
}

func (s *Server) config(w http.ResponseWriter, r *http.Request) {
	reply(w, map[string]any{"read_only": s.opt.ReadOnly, "search": s.opt.Search != nil, "stats": s.opt.Commands != nil, "filters": filters})
}

// reply writes v as JSON.
func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// apiError is the body of every refusal: {"error": "..."}.
type apiError struct {
	Error string `json:"error"`
}

func fail(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(apiError{msg})
}

// failErr answers err: a command's refusal as the conflict it is, a
// missing thing as not found, anything else as a failure.
func failErr(w http.ResponseWriter, err error) {
	var ce *CommandError
	var he *httpError
	switch {
	case errors.As(err, &he):
		fail(w, he.code, he.msg)
	case errors.As(err, &ce) && ce.Busy:
		fail(w, http.StatusConflict, ce.Message)
	case errors.As(err, &ce):
		fail(w, http.StatusUnprocessableEntity, ce.Message)
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, blobstore.ErrNotFound):
		fail(w, http.StatusNotFound, err.Error())
	default:
		fail(w, http.StatusInternalServerError, err.Error())
	}
}

// httpError is a refusal with its status.
type httpError struct {
	code int
	msg  string
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error { return &httpError{http.StatusBadRequest, msg} }
func notFound(msg string) error   { return &httpError{http.StatusNotFound, msg} }

// gaugeOptions are the gauge's options for a session.
func (s *Server) gaugeOptions() gauge.Options {
	return gauge.Options{Window: s.opt.Window, Estimator: gauge.CharsPer4{}, Format: s.opt.Format,
		OnBadLine: func(*transcript.BadLineError) error { return nil }}
}
