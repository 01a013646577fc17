//go:build windows

package inplace

import "os"

// fileOwner: Windows files have no uid and gid to keep.
func fileOwner(os.FileInfo) (uid, gid int, ok bool) { return 0, 0, false }

// fileID: os.FileInfo carries no file index on Windows, so a file that
// was renamed onto the path goes unnoticed; the runtime's lock is the
// guard there.
func FileID(os.FileInfo) (dev, ino uint64) { return 0, 0 }

// processGone reports whether no process has the id pid.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid) // opens the process: fails if there is none
	if err != nil {
		return true
	}
	p.Release()
	return false
}
