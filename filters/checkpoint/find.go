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

// ErrKeyAndFile is a session named twice: by a key and by a transcript,
// which could name another.
var ErrKeyAndFile = errors.New("both a session key and a transcript name the session")

// ErrArgs is more than one checkpoint ID, or more than one transcript.
var ErrArgs = errors.New("too many arguments")

// SessionKey is key when given, else the session key of the transcript
// file (KeyOfFile); with neither it is ErrNoKey, with both ErrKeyAndFile.
func SessionKey(key, file string) (string, error) {
	switch {
	case key != "" && file != "":
		return "", ErrKeyAndFile
	case key != "":
		return key, nil
	case file == "":
		return "", ErrNoKey
	}
	return KeyOfFile(file, nil)
}

// Find reads the checkpoint args name, as bs checkpoint render and show
// take them, and returns it with the path of its file: a checkpoint file
// (isFile), or else the checkpoint of a session key that an
// argument cp_NNN names, or its latest. The key is key, else that of the
// other argument, a transcript (SessionKey). A checkpoint that is not
// there is a *NotFoundError; two IDs or two transcripts are ErrArgs.
func (d Dir) Find(key string, args []string) (*Checkpoint, string, error) {
	file, id := "", ""
	for _, a := range args {
		isID := strings.HasPrefix(a, "cp_") && !strings.ContainsRune(a, os.PathSeparator)
		switch {
		case isID && id == "":
			id = a
		case !isID && file == "":
			file = a
		default:
			return nil, "", ErrArgs
		}
	}
	if isFile(file) {
		switch {
		case id != "":
			return nil, "", ErrArgs
		case key != "":
			return nil, "", ErrKeyAndFile
		}
		cp, err := readFile(file)
		return cp, file, err
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
