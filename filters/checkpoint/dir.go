package checkpoint

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/lockedfile"
)

// Dir is a checkpoint directory: one subdirectory per session key, holding
// write-once cp_NNN.yaml files and _latest.json, the pointer to the newest.
type Dir struct {
	Root string
}

// latestFile names the pointer file of a key directory.
const latestFile = "_latest.json"

// latestPointer is the content of _latest.json.
type latestPointer struct {
	CheckpointID string `json:"checkpoint_id"`
	Path         string `json:"path"`
}

var unsafeKeyChars = regexp.MustCompile(`[^a-zA-Z0-9._-]`)

// sanitizeKey makes a session key a directory name (seed 003 §5.2).
func sanitizeKey(key string) string {
	s := unsafeKeyChars.ReplaceAllString(key, "_")
	if s == "." || s == ".." {
		s = strings.Repeat("_", len(s))
	}
	return s
}

// KeyDir is the directory of a session key.
func (d Dir) KeyDir(key string) string { return filepath.Join(d.Root, sanitizeKey(key)) }

var cpName = regexp.MustCompile(`^cp_([0-9]{3,})\.yaml$`)

// Entry is one checkpoint file of a key.
type Entry struct {
	ID   string // cp_NNN
	N    int
	Path string
}

// List returns the checkpoints of a key, oldest first.
func (d Dir) List(key string) ([]Entry, error) {
	dir := d.KeyDir(key)
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		m := cpName.FindStringSubmatch(de.Name())
		if m == nil {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		out = append(out, Entry{ID: strings.TrimSuffix(de.Name(), ".yaml"), N: n, Path: filepath.Join(dir, de.Name())})
	}
	slices.SortFunc(out, func(a, b Entry) int { return a.N - b.N })
	return out, nil
}

// Keys lists the key directories.
func (d Dir) Keys() ([]string, error) {
	des, err := os.ReadDir(d.Root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, de := range des {
		if de.IsDir() {
			out = append(out, de.Name())
		}
	}
	return out, nil
}

// ErrNone is returned when a key has no checkpoint.
var ErrNone = errors.New("no checkpoint")

// Latest reads the newest checkpoint of a key through _latest.json.
func (d Dir) Latest(key string) (*Checkpoint, string, error) {
	data, err := os.ReadFile(filepath.Join(d.KeyDir(key), latestFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", ErrNone
	}
	if err != nil {
		return nil, "", err
	}
	var l latestPointer
	if err := json.Unmarshal(data, &l); err != nil || cpName.FindString(l.CheckpointID+".yaml") == "" {
		return nil, "", fmt.Errorf("%s: damaged pointer file", filepath.Join(d.KeyDir(key), latestFile))
	}
	// The file is found by its id, so that the directory can move; path is
	// for other readers.
	p := filepath.Join(d.KeyDir(key), l.CheckpointID+".yaml")
	cp, err := readFile(p)
	return cp, p, err
}

// LatestText is the text to put back in the context (Render) of the
// newest checkpoint of a key, and its id; a key with none is ErrNone.
func (d Dir) LatestText(key string) (text, id string, err error) {
	cp, _, err := d.Latest(key)
	if err != nil {
		return "", "", err
	}
	return Render(cp), cp.Meta.CheckpointID, nil
}

// readFile reads and parses a checkpoint file.
func readFile(path string) (*Checkpoint, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cp, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cp, nil
}

// Locked runs f holding the key's lock, so that two runs for one key never
// pick the same number or race on _latest.json. It creates the key
// directory (0700: checkpoints quote the conversation).
func (d Dir) Locked(key string, f func() error) error {
	dir := d.KeyDir(key)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	unlock, err := lockedfile.MutexAt(filepath.Join(dir, ".lock")).Lock()
	if err != nil {
		return err
	}
	defer unlock()
	return f()
}

// next returns the id of the next checkpoint of a key: one past the highest
// number in the directory or in _latest.json (which survives retention).
// Call it under Locked.
func (d Dir) next(key string) (string, error) {
	list, err := d.List(key)
	if err != nil {
		return "", err
	}
	n := 0
	if len(list) > 0 {
		n = list[len(list)-1].N
	}
	if data, err := os.ReadFile(filepath.Join(d.KeyDir(key), latestFile)); err == nil {
		var l latestPointer
		if json.Unmarshal(data, &l) == nil {
			if m := cpName.FindStringSubmatch(l.CheckpointID + ".yaml"); m != nil {
				if k, _ := strconv.Atoi(m[1]); k > n {
					n = k
				}
			}
		}
	}
	return fmt.Sprintf("cp_%03d", n+1), nil
}

// write stores cp as <key dir>/<id>.yaml, written once: to a temporary
// file, synced, linked into place (never over an existing file), then
// _latest.json is replaced the same way, and only then are checkpoints
// beyond the newest keep deleted. A crash at any point leaves _latest.json
// naming a complete file. Call it under Locked.
func (d Dir) write(cp *Checkpoint, keep int) (string, error) {
	dir := d.KeyDir(cp.Meta.SessionKey)
	d.cleanTemp(dir)
	var buf bytes.Buffer
	if err := cp.encode(&buf); err != nil {
		return "", err
	}
	name := cp.Meta.CheckpointID + ".yaml"
	path := filepath.Join(dir, name)
	if err := writeOnce(dir, name, buf.Bytes()); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	latest, err := json.Marshal(latestPointer{CheckpointID: cp.Meta.CheckpointID, Path: abs})
	if err != nil {
		return "", err
	}
	if err := replaceFile(dir, latestFile, append(latest, '\n')); err != nil {
		return "", err
	}
	if keep > 0 {
		if _, err := d.retain(cp.Meta.SessionKey, keep); err != nil {
			return path, err
		}
	}
	return path, nil
}

// Excess lists the checkpoints of a key beyond the newest keep, oldest
// first; keep 0 keeps all.
func (d Dir) Excess(key string, keep int) ([]Entry, error) {
	if keep <= 0 {
		return nil, nil
	}
	list, err := d.List(key)
	if err != nil || len(list) <= keep {
		return nil, err
	}
	return list[:len(list)-keep], nil
}

// retain deletes all but the newest keep checkpoint files of a key and
// returns those it deleted. Files are deleted, never changed. Call it
// under Locked.
func (d Dir) retain(key string, keep int) ([]Entry, error) {
	excess, err := d.Excess(key, keep)
	if err != nil {
		return nil, err
	}
	return Remove(excess)
}

// Remove deletes the checkpoint files of entries (as Excess lists them)
// and returns those it deleted; one already gone is passed over. Call it
// under Locked.
func Remove(excess []Entry) ([]Entry, error) {
	var removed []Entry
	var errs []error
	for _, e := range excess {
		err := os.Remove(e.Path)
		switch {
		case err == nil:
			removed = append(removed, e)
		case !errors.Is(err, fs.ErrNotExist):
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

const tempPrefix = ".tmp-"

// cleanTemp removes temporary files a crashed run left. Under the key's
// lock no other run is writing one.
func (d Dir) cleanTemp(dir string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

// writeTemp writes data to a synced temporary file in dir.
func writeTemp(dir string, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	return tmp, nil
}

// writeOnce puts data at dir/name, failing if the name exists.
func writeOnce(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

// replaceFile atomically replaces dir/name with data.
func replaceFile(dir, name string, data []byte) error {
	tmp, err := writeTemp(dir, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}
