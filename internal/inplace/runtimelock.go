package inplace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/bstools/bs/internal/progress"
)

// runtimeLockStale is when a runtime's session lock counts as left by a
// crash (OpenClaw's own rule).
const runtimeLockStale = 30 * time.Minute

// unreadableLockStale is when a lock file without a readable {pid,
// createdAt} counts as left by a crash.
const unreadableLockStale = 5 * time.Second

// runtimeLockFile is the content of OpenClaw's <session file>.lock.
type runtimeLockFile struct {
	PID       int             `json:"pid"`
	CreatedAt json.RawMessage `json:"createdAt"` // an ISO string; some writers use epoch milliseconds
}

// runtimeLock takes the runtime's lock on path, <path>.lock, created
// exclusively with {pid, createdAt} as OpenClaw does, so that the runtime
// waits for the rewrite instead of appending during it. A lock held by a
// live process is waited for up to LockTimeout; a stale one (its pid is
// gone, or older than 30 minutes) is taken over. release removes the lock
// if it is still ours.
func (ip Options) runtimeLock(ctx context.Context, path string) (release func(), err error) {
	lp := path + ".lock"
	start := time.Now()
	deadline := start.Add(ip.LockTimeout)
	wait := 10 * time.Millisecond
	var bar *progress.Bar // the wait, in seconds of --lock-timeout
	defer func() { bar.Done() }()
	for {
		mine, err := createRuntimeLock(lp)
		if err == nil {
			return func() {
				if b, err := os.ReadFile(lp); err == nil && string(b) == string(mine) {
					os.Remove(lp)
				}
			}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%s: %w", lp, err)
		}
		holder, stale := readRuntimeLock(lp)
		if stale {
			// Take it over: it names a process that is gone.
			if err := os.Remove(lp); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
			continue
		}
		if time.Now().After(deadline) {
			return nil, &BusyError{path, &LockedError{lp, holder, ip.LockTimeout}}
		}
		if bar == nil && ip.Progress != nil && ip.WaitLabel != nil {
			label, unit := ip.WaitLabel(lp, holder)
			bar = progress.New(ip.Progress, label, int64(ip.LockTimeout.Seconds()+0.5), false, unit)
		}
		bar.Set(int64(time.Since(start) / time.Second))
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
		wait = min(2*wait, 250*time.Millisecond)
	}
}

// createRuntimeLock creates lp holding {pid, createdAt}, failing with
// fs.ErrExist if it exists. The content is written to a temp file first and
// linked into place, so a crash never leaves an empty lock behind.
func createRuntimeLock(lp string) ([]byte, error) {
	created, _ := json.Marshal(time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
	b, _ := json.Marshal(runtimeLockFile{PID: os.Getpid(), CreatedAt: created})
	f, err := os.CreateTemp(filepath.Dir(lp), "."+filepath.Base(lp)+tempMarker+"*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, err
	}
	if err := os.Link(f.Name(), lp); err != nil {
		return nil, err
	}
	return b, nil
}

// readRuntimeLock describes the holder of lock file lp and says whether the
// lock is stale. A lock being written (empty or partial) is not stale
// unless the file itself is old.
func readRuntimeLock(lp string) (holder string, stale bool) {
	info, err := os.Stat(lp)
	if err != nil {
		return "nobody", false // gone meanwhile: the next attempt takes it
	}
	b, _ := os.ReadFile(lp)
	var l runtimeLockFile
	if json.Unmarshal(b, &l) != nil || l.PID <= 0 {
		// Being written, or left empty by a writer that died between
		// creating and writing it: a live writer fills it at once.
		return "an unreadable lock", time.Since(info.ModTime()) > unreadableLockStale
	}
	holder = "pid " + strconv.Itoa(l.PID)
	created := info.ModTime()
	var s string
	var ms int64
	if json.Unmarshal(l.CreatedAt, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			created = t
		}
	} else if json.Unmarshal(l.CreatedAt, &ms) == nil && ms > 0 {
		created = time.UnixMilli(ms)
	}
	holder += " since " + created.UTC().Format(time.RFC3339)
	if time.Since(created) > runtimeLockStale {
		return holder, true
	}
	if processGone(l.PID) {
		return holder, true
	}
	return holder, false
}
