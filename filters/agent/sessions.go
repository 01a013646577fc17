package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bstools/bs/filters/transcript"
)

// Sessions says which transcript a tool call acts on: the one File, or one
// inside Dir named by the call's session argument.
type Sessions struct {
	File string // serve this one session
	Dir  string // serve the sessions inside this directory
}

// resolve returns the file of the session argument. With Dir, the
// argument is an OpenClaw session key (from a sessions.json in Dir), a
// session id (a <id>.jsonl below Dir), or a path inside Dir; anything that
// resolves outside Dir, through "..", an absolute path or a symbolic link,
// is refused.
func (s Sessions) resolve(arg string) (string, error) {
	if s.Dir == "" {
		if arg != "" && arg != s.File && arg != SessionName(s.File) && arg != strings.TrimSuffix(filepath.Base(s.File), ".jsonl") {
			return "", errorf("this server serves one session (%s); leave out the session argument", SessionName(s.File))
		}
		return s.File, nil
	}
	if arg == "" {
		return "", errorf("missing argument session: %s", "an OpenClaw session key, a session id, or a path inside the sessions directory")
	}
	root, err := filepath.Abs(s.Dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return "", err
	}
	if p, ok := s.byKey(root, arg); ok {
		return inside(root, p, arg)
	}
	if isID(arg) {
		if p, ok := byID(root, arg); ok {
			return inside(root, p, arg)
		}
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return inside(root, p, arg)
}

// inside returns p's real path if it is a regular file inside root.
func inside(root, p, arg string) (string, error) {
	refused := errorf("session %q is not inside the sessions directory", arg)
	// root is a real path: so must p's directory be for the comparison, or
	// a path spelled through a link to root would look outside it.
	cand := filepath.Clean(p)
	if dir, err := filepath.EvalSymlinks(filepath.Dir(cand)); err == nil {
		cand = filepath.Join(dir, filepath.Base(cand))
	}
	// Lexically first: "../x" is refused even when it exists nowhere.
	if rel, err := filepath.Rel(root, cand); err != nil || !local(rel) {
		return "", refused
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", errorf("no session %q", arg)
	}
	if err != nil {
		return "", err
	}
	if rel, err := filepath.Rel(root, real); err != nil || !local(rel) {
		return "", refused
	}
	info, err := os.Stat(real)
	if err != nil {
		return "", err
	}
	if !info.Mode().IsRegular() {
		return "", errorf("session %q is not a transcript file", arg)
	}
	return real, nil
}

func local(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) && rel != "."
}

// isID reports whether arg can be a session id: a bare name.
func isID(arg string) bool {
	return arg != "." && arg != ".." && !strings.ContainsAny(arg, `/\`)
}

// byKey looks arg up as a session key in OpenClaw's sessions.json files:
// in root, in root/sessions, and in root/<agent>/sessions.
func (s Sessions) byKey(root, arg string) (string, bool) {
	var files []string
	for _, pat := range []string{"sessions.json", "sessions/sessions.json", "*/sessions/sessions.json"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		files = append(files, m...)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		var m map[string]struct {
			SessionID   string `json:"sessionId"`
			SessionFile string `json:"sessionFile"`
		}
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		e, ok := m[arg]
		if !ok {
			continue
		}
		if e.SessionFile != "" {
			if filepath.IsAbs(e.SessionFile) {
				return e.SessionFile, true
			}
			return filepath.Join(filepath.Dir(f), e.SessionFile), true
		}
		if isID(e.SessionID) && e.SessionID != "" {
			return filepath.Join(filepath.Dir(f), e.SessionID+".jsonl"), true
		}
	}
	return "", false
}

// byID finds <id>.jsonl below root (Claude Code: <project>/<id>.jsonl,
// OpenClaw: <agent>/sessions/<id>.jsonl), at most four levels down.
func byID(root, id string) (string, bool) {
	want := id
	if !strings.HasSuffix(want, ".jsonl") {
		want += ".jsonl"
	}
	var found string
	walkSessions(root, func(p string, d fs.DirEntry) error {
		if d.Name() == want {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	return found, found != ""
}

// walkSessions calls fn for every file below root, at most four levels
// down (OpenClaw keeps <agents>/<agent>/sessions/<id>.jsonl); fn may
// return fs.SkipAll. Unreadable directories are passed over.
func walkSessions(root string, fn func(p string, d fs.DirEntry) error) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() {
			if rel, _ := filepath.Rel(root, p); rel != "." && strings.Count(rel, string(filepath.Separator)) >= 3 {
				return fs.SkipDir
			}
			return nil
		}
		return fn(p, d)
	})
}

// byEntry finds, with Dir, the sessions that may hold entry id: the
// transcripts below Dir (four levels down at most) whose bytes hold its
// placeholder [[extracted-<id>]], first those where it is in the entry
// itself (a line of that id, or one with _extracted), then those that
// merely mention it (a user quoting it), each group newest first. An agent
// knows the id from the placeholder, not always its session's name.
func (s Sessions) byEntry(ctx context.Context, id string) ([]string, error) {
	root, err := filepath.Abs(s.Dir)
	if err == nil {
		root, err = filepath.EvalSymlinks(root)
	}
	if err != nil {
		return nil, err
	}
	type file struct {
		path string
		mod  int64
	}
	var files []file
	walkSessions(root, func(p string, d fs.DirEntry) error {
		if strings.HasSuffix(d.Name(), ".jsonl") && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				files = append(files, file{p, info.ModTime().UnixNano()})
			}
		}
		return nil
	})
	sort.SliceStable(files, func(i, j int) bool { return files[i].mod > files[j].mod })
	var holding, mentioning []string
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch holds(ctx, f.path, id) {
		case 2:
			holding = append(holding, f.path)
		case 1:
			mentioning = append(mentioning, f.path)
		}
	}
	if all := append(holding, mentioning...); len(all) > 0 {
		return all, nil
	}
	return nil, errorf("no session in the sessions directory holds [[extracted-%s]]; give the session argument", id)
}

// holds says how the file at path holds entry id's placeholder: 2 in the
// entry (a line whose id is id, or that has _extracted), 1 elsewhere, 0
// not at all.
func holds(ctx context.Context, path, id string) int {
	fh, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer fh.Close()
	info, err := fh.Stat()
	if err != nil {
		return 0
	}
	lines, err := candidates(ctx, fh, info.Size(), [][]byte{[]byte(transcript.Placeholder(id))})
	if err != nil || len(lines) == 0 {
		return 0
	}
	format := detect(fh, info.Size())
	var p transcript.Parser
	for _, l := range lines {
		body := make([]byte, l.end-l.start)
		if _, err := fh.ReadAt(body, l.start); err != nil {
			continue
		}
		t, err := p.Parse(body)
		if err != nil {
			continue
		}
		if e := transcript.View(t, format); e.ID == id || e.Extracted >= 0 {
			return 2
		}
	}
	return 1
}

// SessionName names a transcript the way bs's logs and search index do:
// "agent/session" for an OpenClaw layout (<agent>/sessions/<id>.jsonl),
// else the file's base name without .jsonl.
func SessionName(path string) string {
	base := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	dir := filepath.Dir(path)
	if filepath.Base(dir) == "sessions" {
		return filepath.Base(filepath.Dir(dir)) + "/" + base
	}
	return base
}
