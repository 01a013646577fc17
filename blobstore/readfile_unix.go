//go:build unix

package blobstore

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// readFileMax reads a whole blob file of at most limit bytes into buf,
// which it grows if needed, and returns it. It uses bare
// system calls: restore reads tens of thousands of small files, and an
// os.File costs five more calls each (registering with the poller), which
// was a fifth of restore's time.
func readFileMax(name string, limit int64, buf []byte) ([]byte, error) {
	fd, err := unix.Open(name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, errNotRegular
	}
	if st.Size > limit {
		return nil, errTooLarge
	}
	// Blob files are replaced by rename, never rewritten in place, so the
	// size just read is the size to read.
	buf = grow(buf, int(st.Size))
	for off := 0; off < len(buf); {
		n, err := unix.Read(fd, buf[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return nil, &fs.PathError{Op: "read", Path: name, Err: errShortRead}
		}
		off += n
	}
	return buf, nil
}
