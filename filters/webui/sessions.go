package webui

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/bstools/bs/filters/agent"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/filters/transcript"
)

// SessionID is the opaque name of a session file in URLs: the start of
// the SHA-256 of its absolute path.
func SessionID(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:8])
}

// validID reports whether s has the shape of a SessionID.
func validID(s string) bool {
	if len(s) != 16 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// sessionIDs maps the ids of the last listing to their files.
type sessionIDs struct {
	mu    sync.Mutex
	paths map[string]string
}

// list lists the sessions and remembers their ids.
func (s *Server) list() ([]string, error) {
	files, err := s.opt.List()
	if err != nil {
		return nil, err
	}
	m := make(map[string]string, len(files))
	for _, f := range files {
		m[SessionID(f)] = f
	}
	s.ids.mu.Lock()
	s.ids.paths = m
	s.ids.mu.Unlock()
	return files, nil
}

// path returns the file of the request's session (parameter s): only a
// file the listing gives is ever opened.
func (s *Server) path(r *http.Request) (string, error) {
	return s.pathOf(r.URL.Query().Get("s"))
}

// pathOf is path for a session id however the request gives it.
func (s *Server) pathOf(id string) (string, error) {
	if !validID(id) {
		return "", badRequest("malformed session id")
	}
	s.ids.mu.Lock()
	p, ok := s.ids.paths[id]
	s.ids.mu.Unlock()
	if !ok {
		// Listed since? A session the listing does not give is refused.
		if _, err := s.list(); err != nil {
			return "", err
		}
		s.ids.mu.Lock()
		p, ok = s.ids.paths[id]
		s.ids.mu.Unlock()
	}
	if !ok {
		return "", notFound("no such session")
	}
	return p, nil
}

// stamp tells whether a file changed since it was read.
type stamp struct {
	size  int64
	mtime time.Time
}

func stampOf(info os.FileInfo) stamp { return stamp{info.Size(), info.ModTime()} }

// fileCache keeps what was learnt of each file while it stays unchanged:
// where its lines start, its dialect, its summary.
type fileCache struct {
	mu    sync.Mutex
	files map[string]*fileInfo
}

func newFileCache() *fileCache { return &fileCache{files: map[string]*fileInfo{}} }

type fileInfo struct {
	stamp   stamp
	once    sync.Once
	lines   []int64 // where each line starts; len(lines) is the line count
	size    int64
	dialect transcript.Dialect
	err     error

	sumOnce sync.Once
	sum     *summary
	sumErr  error
}

// get returns the cache record of path as the file is now, building the
// line index on first use.
func (c *fileCache) get(path string, format transcript.Dialect) (*fileInfo, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	st := stampOf(info)
	c.mu.Lock()
	fi := c.files[path]
	if fi == nil || fi.stamp != st {
		fi = &fileInfo{stamp: st}
		c.files[path] = fi
	}
	c.mu.Unlock()
	fi.once.Do(func() { fi.err = fi.index(f, st.size, format) })
	if fi.err != nil {
		f.Close()
		return nil, nil, fi.err
	}
	return fi, f, nil
}

// index finds where every line of f's first size bytes starts, and the
// dialect from the first lines.
func (fi *fileInfo) index(f *os.File, size int64, format transcript.Dialect) error {
	fi.size = size
	buf := make([]byte, 1<<20)
	var off int64
	if size > 0 {
		fi.lines = append(fi.lines, 0)
	}
	for off < size {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		for i := 0; i < n; {
			j := bytes.IndexByte(buf[i:n], '\n')
			if j < 0 {
				break
			}
			i += j + 1
			if start := off + int64(i); start < size {
				fi.lines = append(fi.lines, start)
			}
		}
		off += int64(n)
		if err != nil && err != io.EOF {
			return err
		}
		if n == 0 {
			break
		}
	}
	fi.dialect = format
	if format == nil { // auto
		fi.dialect = fi.detect(f)
	}
	return nil
}

// detect classifies the first lines that say their dialect.
func (fi *fileInfo) detect(f *os.File) transcript.Dialect {
	var p transcript.Parser
	for i := 0; i < min(len(fi.lines), transcript.DetectLines); i++ {
		body, err := fi.line(f, i)
		if err != nil || len(body) > 4<<20 {
			continue
		}
		if t, err := p.Parse(body); err == nil {
			if d := transcript.Classify(t); d != nil {
				return d
			}
		}
	}
	return transcript.Fallback()
}

// line reads line i (from 0) without its line feed.
func (fi *fileInfo) line(f *os.File, i int) ([]byte, error) {
	start := fi.lines[i]
	end := fi.size
	if i+1 < len(fi.lines) {
		end = fi.lines[i+1]
	}
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, start); err != nil && err != io.EOF {
		return nil, err
	}
	return bytes.TrimSuffix(b, []byte{'\n'}), nil
}

// lineAt is the line (from 0) holding byte offset off.
func (fi *fileInfo) lineAt(off int64) int {
	return sort.Search(len(fi.lines), func(i int) bool { return fi.lines[i] > off }) - 1
}

// sessionRow is one row of the sessions table.
type sessionRow struct {
	ID       string    `json:"id"`
	Path     string    `json:"path"`
	Name     string    `json:"name"`
	Runtime  string    `json:"runtime"`
	Project  string    `json:"project"`
	Title    string    `json:"title,omitempty"`
	Modified time.Time `json:"modified"`
	Bytes    int64     `json:"bytes"`
	Lines    int       `json:"lines"`
	Gauge    *gaugeRow `json:"gauge,omitempty"`
	Moved    int64     `json:"moved_bytes"`  // bytes _extracted says went to the store
	MovedN   int       `json:"moved_values"` // values that did
	Spark    []int     `json:"spark"`        // context tokens at each usage record, thinned
	Error    string    `json:"error,omitempty"`
}

type gaugeRow struct {
	Tokens int     `json:"tokens"`
	Window int     `json:"window"`
	Ratio  float64 `json:"ratio"`
	Source string  `json:"source"`
	Model  string  `json:"model,omitempty"`
	Text   string  `json:"text"`
}

func (s *Server) sessions(w http.ResponseWriter, r *http.Request) {
	files, err := s.list()
	if err != nil {
		failErr(w, err)
		return
	}
	rows := make([]sessionRow, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for i, f := range files {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			rows[i] = s.row(f, true)
		}()
	}
	wg.Wait()
	reply(w, map[string]any{"sessions": rows})
}

// row describes one session; with spark, from a read of the whole file
// (cached while the file is unchanged).
func (s *Server) row(path string, spark bool) sessionRow {
	row := sessionRow{ID: SessionID(path), Path: path, Name: agent.SessionName(path), Project: project(path)}
	fi, f, err := s.files.get(path, s.opt.Format)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	defer f.Close()
	row.Bytes, row.Lines, row.Modified = fi.size, len(fi.lines), fi.stamp.mtime
	row.Runtime = fi.dialect.Title()
	if g, err := gauge.MeasureFile(f, s.gaugeOptions()); err == nil {
		row.Gauge = &gaugeRow{Tokens: g.Tokens, Window: g.Window, Ratio: g.Ratio, Source: g.Source, Model: g.Model, Text: g.String()}
	} else {
		row.Error = err.Error()
	}
	if !spark {
		return row
	}
	sum, err := fi.summary(f)
	if err != nil {
		row.Error = err.Error()
		return row
	}
	row.Moved, row.MovedN, row.Title = sum.moved, sum.movedValues, sum.title
	if sum.workDir != "" {
		row.Project = sum.workDir
	}
	row.Spark = thin(sum.points, 48)
	return row
}

// thin keeps at most n of the points' tokens, evenly spread, the last
// always.
func thin(points []point, n int) []int {
	out := make([]int, 0, min(n, len(points)))
	for i := range min(n, len(points)) {
		j := i * len(points) / min(n, len(points))
		if i == min(n, len(points))-1 {
			j = len(points) - 1
		}
		out = append(out, points[j].Tokens)
	}
	return out
}

func (s *Server) session(w http.ResponseWriter, r *http.Request, path string) {
	reply(w, s.row(path, false))
}

// project names what a session belongs to from where it lies: the agent
// of an OpenClaw layout, the project directory of Claude Code's, else
// the folder.
func project(path string) string {
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "sessions" {
		return filepath.Base(filepath.Dir(dir))
	}
	return filepath.Base(dir)
}

func atoi(s string) (int, bool) {
	n, err := strconv.Atoi(s)
	return n, err == nil && n >= 0
}
