package output

import (
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Path returns the path of the regular file w writes to, when w is
// one (standard output redirected to a file), or "": the search index
// names that file as the transcript that holds the placeholders, which
// the input named on the command line does not.
func Path(w io.Writer) string {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok {
		return ""
	}
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return ""
	}
	path, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(f.Fd())))
	if err != nil || !filepath.IsAbs(path) {
		return ""
	}
	// The name may have moved on (renamed, or deleted: " (deleted)").
	var named unix.Stat_t
	if unix.Stat(path, &named) != nil || named.Dev != st.Dev || named.Ino != st.Ino {
		return ""
	}
	// The kernel gives the real path; a name given on the command line
	// is made absolute from the working directory as the shell sees it
	// (through a symbolic link, perhaps). Name the file the same way, so
	// that bs index and bs mcp --session find the same session.
	if wd, err := os.Getwd(); err == nil {
		if real, err := filepath.EvalSymlinks(wd); err == nil && real != wd {
			if rel, ok := strings.CutPrefix(path, real+string(filepath.Separator)); ok {
				return filepath.Join(wd, rel)
			}
		}
	}
	return path
}
