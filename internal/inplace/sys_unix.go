//go:build unix

package inplace

import (
	"errors"
	"os"
	"syscall"
)

// fileOwner is the owner of the file info describes, if the system says.
func fileOwner(info os.FileInfo) (uid, gid int, ok bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return int(st.Uid), int(st.Gid), true
}

// fileID names the file info describes on its device: a rename onto the
// path gives it another.
func FileID(info os.FileInfo) (dev, ino uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), uint64(st.Ino)
	}
	return 0, 0
}

// processGone reports whether no process has the id pid.
func processGone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
