//go:build unix

package blobstore

import (
	"encoding/hex"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// pendingModeKept records that the umask leaves pendingMode as it is.
var pendingModeKept atomic.Bool

// writeTemp writes content to a new temp file in dir, mode 0400, unsynced,
// and returns its name. Bare system calls, as in readFileMax: a batch
// writes tens of thousands of these.
func writeTemp(dir string, content []byte) (string, error) {
	var name string
	var fd int
	for try := 0; ; try++ {
		var r [8]byte
		for i := range r {
			r[i] = byte(rand.Uint32())
		}
		name = filepath.Join(dir, tempPrefix+hex.EncodeToString(r[:]))
		var err error
		fd, err = unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, pendingMode)
		if err == nil {
			break
		}
		if err != unix.EEXIST || try > 100 {
			return "", &fs.PathError{Op: "create", Path: name, Err: err}
		}
	}
	fail := func(op string, err error) (string, error) {
		unix.Close(fd)
		os.Remove(name)
		return "", &fs.PathError{Op: op, Path: name, Err: err}
	}
	// The umask may have removed bits from pendingMode. Until a file is
	// seen to have been created with exactly that mode, after which the
	// umask (which bs never changes) is known to leave it alone, check
	// and set it.
	if !pendingModeKept.Load() {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fail("stat", err)
		}
		if st.Mode&0o7777 == pendingMode {
			pendingModeKept.Store(true)
		} else if err := unix.Fchmod(fd, pendingMode); err != nil {
			return fail("chmod", err)
		}
	}
	for off := 0; off < len(content); {
		n, err := unix.Write(fd, content[off:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail("write", err)
		}
		off += n
	}
	if err := unix.Close(fd); err != nil {
		os.Remove(name)
		return "", &fs.PathError{Op: "close", Path: name, Err: err}
	}
	return name, nil
}
