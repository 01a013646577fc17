// Package sessions finds agent session files, where the runtimes keep
// them and under the roots and globs a user names, and keeps bs watch's
// record of what each looked like after its last pass.
package sessions

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/inplace"
)

// GlobError is a root that is a bad pattern.
type GlobError struct {
	Pattern string
	Err     error
}

func (e *GlobError) Error() string { return fmt.Sprintf("pattern %q: %v", e.Pattern, e.Err) }
func (e *GlobError) Unwrap() error { return e.Err }

// NoMatchError is a root that names nothing.
type NoMatchError struct{ Root string }

func (e *NoMatchError) Error() string { return e.Root + " matches nothing" }

// DanglingError is a symbolic link among the sessions that leads nowhere:
// a file or a directory (an unmounted disk, a deleted target) whose
// transcripts cannot be read.
type DanglingError struct {
	Path string
	Err  error
}

func (e *DanglingError) Error() string { return fmt.Sprintf("%s leads nowhere: %v", e.Path, e.Err) }
func (e *DanglingError) Unwrap() error { return e.Err }

// DamagedStateError is a state file that cannot be read as one.
type DamagedStateError struct {
	Path string
	Err  error
}

func (e *DamagedStateError) Error() string { return fmt.Sprintf("%s is damaged: %v", e.Path, e.Err) }
func (e *DamagedStateError) Unwrap() error { return e.Err }

// DefaultDirs are where the runtimes keep their sessions, relative to the
// home directory and slash-separated: each registered dialect's
// SessionDirs, in the order the registry lists the dialects.
func DefaultDirs() []string {
	var dirs []string
	for _, d := range transcript.Dialects() {
		dirs = append(dirs, d.SessionDirs()...)
	}
	return dirs
}

// DefaultRoots are the DefaultDirs under the home directory that exist.
func DefaultRoots() []string {
	home, err := os.UserHomeDir()
	if err != nil {
		return nil
	}
	var roots []string
	for _, r := range DefaultDirs() {
		if info, err := os.Stat(filepath.Join(home, r)); err == nil && info.IsDir() {
			roots = append(roots, filepath.Join(home, r))
		}
	}
	return roots
}

// Find lists the *.jsonl files under each directory root and the files
// each glob root names, sorted, absolute, without duplicates. When strict,
// a directory that cannot be read, a root that names nothing (a
// *NoMatchError) and a link that leads nowhere (a *DanglingError: it may
// stand for transcripts that are only out of reach) are errors instead of
// being skipped; a bad pattern is a *GlobError.
// Symbolic links are followed: a linked root, linked directories inside
// it (each real directory walked once, so a loop ends) and linked *.jsonl
// files. A glob match that is a directory is walked like a root.
func Find(roots []string, strict bool) ([]string, error) {
	var files []string
	seen := map[string]bool{} // real directories walked
	var walk func(dir string) error
	walk = func(dir string) error {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil {
			if strict {
				return err
			}
			return nil
		}
		if seen[real] {
			return nil
		}
		seen[real] = true
		des, err := os.ReadDir(dir)
		if err != nil {
			if strict {
				return err
			}
			return nil // unreadable corners are skipped, not fatal
		}
		for _, d := range des {
			p := filepath.Join(dir, d.Name())
			mode := d.Type()
			if mode&fs.ModeSymlink != 0 {
				info, err := os.Stat(p)
				if err != nil && strict {
					return &DanglingError{p, err}
				}
				if err != nil {
					continue // a dangling link names nothing now
				}
				mode = info.Mode().Type()
			}
			switch {
			case mode.IsDir():
				if err := walk(p); err != nil {
					return err
				}
			case mode.IsRegular() && strings.HasSuffix(p, ".jsonl") && !strings.HasPrefix(d.Name(), "."):
				files = append(files, p)
			}
		}
		return nil
	}
	for _, r := range roots {
		info, err := os.Stat(r)
		if err == nil && info.IsDir() {
			if err := walk(r); err != nil {
				return nil, err
			}
			continue
		}
		matches, err := filepath.Glob(r)
		if err != nil {
			return nil, &GlobError{r, err}
		}
		if strict && len(matches) == 0 {
			return nil, &NoMatchError{r}
		}
		for _, m := range matches {
			info, err := os.Stat(m)
			switch {
			case err != nil && strict:
				return nil, &DanglingError{m, err}
			case err != nil:
			case info.IsDir():
				if err := walk(m); err != nil {
					return nil, err
				}
			case info.Mode().IsRegular():
				files = append(files, m)
			}
		}
	}
	for i, f := range files {
		if abs, err := filepath.Abs(f); err == nil {
			files[i] = abs
		}
	}
	slices.Sort(files)
	return slices.Compact(files), nil
}

// HasGlob reports whether a root is a pattern (filepath.Match's
// metacharacters) rather than a name.
func HasGlob(root string) bool { return strings.ContainsAny(root, `*?[\`) }

// State is bs watch's state file (watch.json): what each file looked
// like after its last pass, and when retention last ran.
type State struct {
	Files     map[string]Stamp `json:"files"`
	Retention time.Time        `json:"retention,omitzero"`
}

// Stamp identifies a version of a file without reading it.
type Stamp struct {
	Size  int64     `json:"size"`
	Mtime time.Time `json:"mtime"`
	Inode uint64    `json:"inode"`
}

// StampOf is the Stamp of the file info describes.
func StampOf(info os.FileInfo) Stamp {
	_, ino := inplace.FileID(info)
	return Stamp{Size: info.Size(), Mtime: info.ModTime().UTC(), Inode: ino}
}

// ReadState reads the state file at path; one that is not there is an
// empty state, one that is damaged a *DamagedStateError.
func ReadState(path string) (*State, error) {
	st := &State{Files: map[string]Stamp{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, st); err != nil {
		return nil, &DamagedStateError{path, err}
	}
	if st.Files == nil {
		st.Files = map[string]Stamp{}
	}
	return st, nil
}

// WriteState replaces the state file at path atomically.
func WriteState(path string, st *State) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".watch-*.json")
	if err != nil {
		return err
	}
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}
