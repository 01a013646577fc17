package checkpoint

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// NotFoundError is a checkpoint Find looked for that is not there: the
// checkpoint ID of Key or, with no ID, any checkpoint of Key.
type NotFoundError struct{ Key, ID string }

func (e *NotFoundError) Error() string {
	if e.ID != "" {
		return fmt.Sprintf("no checkpoint %s for session key %q", e.ID, e.Key)
	}
	return fmt.Sprintf("no checkpoint for session key %q", e.Key)
}

// isFile reports whether name names a checkpoint file (.yaml or .yml)
// rather than a transcript.
func isFile(name string) bool {
	return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
}

// SessionKey is key when given, else the session key of the transcript
// file (KeyOfFile); with neither it is ErrNoKey.
func SessionKey(key, file string) (string, error) {
	if key != "" {
		return key, nil
	}
	if file == "" {
		return "", ErrNoKey
	}
	return KeyOfFile(file, nil)
}

// Find reads the checkpoint args name, as bs checkpoint render and show
// take them, and returns it with the path of its file: a checkpoint file
// (isFile) named first, or else the checkpoint of a session key that an
// argument cp_NNN names, or its latest. The key is key, else that of the
// other argument, a transcript (SessionKey). A checkpoint that is not
// there is a *NotFoundError.
func (d Dir) Find(key string, args []string) (*Checkpoint, string, error) {
	if len(args) > 0 && isFile(args[0]) {
		cp, err := readFile(args[0])
		return cp, args[0], err
	}
	file, id := "", ""
	for _, a := range args {
		if strings.HasPrefix(a, "cp_") && !strings.ContainsRune(a, os.PathSeparator) {
			id = a
		} else {
			file = a
		}
	}
	key, err := SessionKey(key, file)
	if err != nil {
		return nil, "", err
	}
	if id != "" {
		path := filepath.Join(d.KeyDir(key), id+".yaml")
		cp, err := readFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", &NotFoundError{Key: key, ID: id}
		}
		return cp, path, err
	}
	cp, path, err := d.Latest(key)
	if errors.Is(err, ErrNone) {
		return nil, "", &NotFoundError{Key: key}
	}
	return cp, path, err
}
