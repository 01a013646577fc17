package inplace

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openWriters lists the other processes that hold the file (dev, ino) open
// for writing, as "pid N (command)", from /proc. Processes whose
// descriptors cannot be read (another user's) are not seen; they could not
// write a file private to this user anyway.
func openWriters(dev, ino uint64) []string {
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	self := os.Getpid()
	var out []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == self {
			continue
		}
		fdDir := filepath.Join("/proc", p.Name(), "fd")
		fds, err := os.ReadDir(fdDir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(fdDir, fd.Name()), &st) != nil || uint64(st.Dev) != dev || st.Ino != ino {
				continue
			}
			if writable(filepath.Join("/proc", p.Name(), "fdinfo", fd.Name())) {
				comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
				out = append(out, "pid "+p.Name()+" ("+strings.TrimSpace(string(comm))+")")
				break
			}
		}
	}
	return out
}

// writable reads the flags line of an fdinfo file: a descriptor not opened
// read-only may write.
func writable(fdinfo string) bool {
	f, err := os.Open(fdinfo)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "flags:"); ok {
			flags, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && flags&unix.O_ACCMODE != unix.O_RDONLY
		}
	}
	return false
}
