package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/bstools/bs/filters/transcript"
)

// Incremental in-place runs. A filter whose output up to some offset can
// never change on a later run with the same options (extract: every line
// before the first one still waiting for messages, protected after a
// restore, or unfinished) reports that offset, its watermark. The next -i
// run over the same file with the same options copies the bytes before the
// watermark as they are (the kernel copies them: copy_file_range, a reflink
// where the file system has them) and runs the filter on the rest only, so
// a pass over a large session that grew a little parses only what grew.
//
// The watermark is kept under $XDG_STATE_HOME/bs/watermarks, per file and
// options, with the file's inode, its size and a hash of the 4 KiB before
// the watermark: if the file was replaced or its prefix changed, the run
// starts from the beginning.

// resumable is what an in-place run tells a filter that can resume, and
// what the filter tells it back, through the context.
type resumable struct {
	key    string             // the filter and its options: a watermark is only valid for these
	from   int64              // where the input the filter sees starts in the file
	lines  int                // the lines before from, for line numbers
	before io.ReaderAt        // the file, whose first from bytes the filter does not rewrite
	format transcript.Dialect // the dialect, when the run starts past the header
	final  int64              // set by the filter: its watermark, in its output
	ok     bool               // set by the filter: final is valid
}

type resumeKey struct{}

// withResumable marks ctx as the context of a filter that can resume, with
// key naming it and its options.
func withResumable(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, resumeKey{}, &resumable{key: key})
}

func resumableFrom(ctx context.Context) *resumable {
	r, _ := ctx.Value(resumeKey{}).(*resumable)
	return r
}

// watermark is a stored watermark.
type watermark struct {
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
	Inode  uint64 `json:"inode"`
	Before string `json:"before"` // sha256 of the 4 KiB before Offset
	Format string `json:"format"`
}

const watermarkWindow = 4096

func watermarkPath(path, key string) string {
	sum := sha256.Sum256([]byte(path + "\x00" + key))
	return filepath.Join(stateDir(), "watermarks", hex.EncodeToString(sum[:12])+".json")
}

// resumePoint returns where the filter may start in src (0 when it must
// read all of it) and the dialect to give it.
func resumePoint(r *resumable, path string, src *os.File, info os.FileInfo) (int64, transcript.Dialect) {
	b, err := os.ReadFile(watermarkPath(path, r.key))
	if err != nil {
		return 0, transcript.Unknown
	}
	var w watermark
	_, ino := fileID(info)
	if json.Unmarshal(b, &w) != nil || w.Inode != ino || w.Size > info.Size() || w.Offset <= 0 || w.Offset > w.Size {
		return 0, transcript.Unknown
	}
	d, err := transcript.ParseDialect(w.Format)
	if err != nil || d == transcript.Unknown {
		return 0, transcript.Unknown
	}
	if sum, err := hashBefore(src, w.Offset); err != nil || sum != w.Before {
		return 0, transcript.Unknown
	}
	return w.Offset, d
}

// saveWatermark records the watermark of the new file (f, before the
// rename) at offset.
func saveWatermark(r *resumable, path string, f *os.File, offset int64, format transcript.Dialect) {
	info, err := f.Stat()
	if err != nil || offset <= 0 {
		return
	}
	sum, err := hashBefore(f, offset)
	if err != nil {
		return
	}
	_, ino := fileID(info)
	b, _ := json.Marshal(watermark{Offset: offset, Size: info.Size(), Inode: ino, Before: sum, Format: format.String()})
	p := watermarkPath(path, r.key)
	if os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, p)
	}
}

// linesBefore counts the lines of f before offset, so that a resumed run
// numbers its lines as a whole one would. It reads the prefix the run
// copies without parsing: at memory speed, a small part of what parsing
// it would cost.
func linesBefore(f *os.File, offset int64) int {
	buf := make([]byte, 256<<10)
	n := 0
	for off := int64(0); off < offset; {
		chunk := buf[:min(int64(len(buf)), offset-off)]
		k, err := f.ReadAt(chunk, off)
		n += bytes.Count(chunk[:k], []byte("\n"))
		if err != nil {
			break
		}
		off += int64(k)
	}
	return n
}

// forgetWatermark drops a file's watermark (the run did not resume and
// reported none).
func forgetWatermark(r *resumable, path string) { os.Remove(watermarkPath(path, r.key)) }

func hashBefore(f *os.File, offset int64) (string, error) {
	start := max(0, offset-watermarkWindow)
	buf := make([]byte, offset-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}
