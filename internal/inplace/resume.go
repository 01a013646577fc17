package inplace

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
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
// The watermark is kept under <state dir>/watermarks, per file and
// options, with the file's inode, its size and a hash of the 4 KiB before
// the watermark: if the file was replaced or its prefix changed, the run
// starts from the beginning.

// Resume names a filter that can resume and its options: a watermark is
// only valid for the same Key. Known says whether a format name the filter
// reported is one it still reads; a watermark with another is ignored.
type Resume struct {
	Key   string
	Known func(format string) bool
}

// Start is where the input a resuming filter sees starts in the file.
type Start struct {
	From   int64       // the offset; 0 when the filter reads the whole file
	Lines  int         // the lines before From, for line numbers
	Before io.ReaderAt // the file, whose first From bytes the filter does not rewrite
	Format string      // the format the filter reported, when From > 0
}

// Final is what a resuming filter reports: Offset, its watermark in its
// output (0: none), and the format it read the transcript as.
type Final struct {
	Offset int64
	Format string
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

func watermarkPath(stateDir, path, key string) string {
	sum := sha256.Sum256([]byte(path + "\x00" + key))
	return filepath.Join(stateDir, "watermarks", hex.EncodeToString(sum[:12])+".json")
}

// resumePoint returns where the filter may start in src (0 when it must
// read all of it) and the format to give it.
func resumePoint(stateDir string, r *Resume, path string, src *os.File, info os.FileInfo) (int64, string) {
	b, err := os.ReadFile(watermarkPath(stateDir, path, r.Key))
	if err != nil {
		return 0, ""
	}
	var w watermark
	_, ino := FileID(info)
	if json.Unmarshal(b, &w) != nil || w.Inode != ino || w.Size > info.Size() || w.Offset <= 0 || w.Offset > w.Size {
		return 0, ""
	}
	if r.Known == nil || !r.Known(w.Format) {
		return 0, ""
	}
	if sum, err := hashBefore(src, w.Offset); err != nil || sum != w.Before {
		return 0, ""
	}
	return w.Offset, w.Format
}

// saveWatermark records the watermark of the new file (f, before the
// rename) at offset.
func saveWatermark(stateDir string, r *Resume, path string, f *os.File, offset int64, format string) {
	info, err := f.Stat()
	if err != nil || offset <= 0 {
		return
	}
	sum, err := hashBefore(f, offset)
	if err != nil {
		return
	}
	_, ino := FileID(info)
	b, _ := json.Marshal(watermark{Offset: offset, Size: info.Size(), Inode: ino, Before: sum, Format: format})
	p := watermarkPath(stateDir, path, r.Key)
	if os.MkdirAll(filepath.Dir(p), 0o700) != nil {
		return
	}
	tmp := p + ".tmp"
	if os.WriteFile(tmp, b, 0o600) == nil {
		os.Rename(tmp, p)
	}
}

func hashBefore(f *os.File, offset int64) (string, error) {
	start := max(0, offset-watermarkWindow)
	buf := make([]byte, offset-start)
	if _, err := f.ReadAt(buf, start); err != nil && err != io.EOF {
		return "", err
	}
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:]), nil
}
