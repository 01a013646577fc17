// Package inplace owns the rewrite of a live session file in place: bs's
// own lock, the runtime's <file>.lock, the quiet period, the temp file and
// the rename, the lines a writer appends meanwhile, and the watermarks that
// let a later run resume where the last one's output became final. A
// filter gives it a transform from the old content to the new; it gives
// back typed errors (busy, skipped) that the command words.
package inplace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/progress"
	"github.com/rogpeppe/go-internal/lockedfile"
)

// Options configure a rewrite: the -i flags and where its state lives.
type Options struct {
	// LockTimeout bounds the wait for the runtime's <file>.lock and for
	// other writers to close the file.
	LockTimeout time.Duration
	// Quiet refuses a file changed this recently (the agent may be
	// writing it), unless Force.
	Quiet time.Duration
	Force bool
	// Idle leaves alone a file modified less than this long ago.
	Idle time.Duration
	// MinSavings leaves the file alone when the pass takes fewer tokens
	// than this out of the context, as Measure counts them.
	MinSavings int64
	Measure    func(f *os.File) (tokens int, err error)
	// StateDir is bs's state directory: its locks and watermarks live
	// under it.
	StateDir string
	// Progress is where a wait for the runtime's lock, and with ReadLabel
	// the reading of the file, show their progress (on a terminal); nil
	// shows none. The labels describe the reading of path and the wait
	// for lock, held by holder, counted in seconds named unit.
	Progress  io.Writer
	ReadLabel func(path string) string
	WaitLabel func(lock, holder string) (label, unit string)
}

// SkippedError is a file a rewrite left alone on purpose: not an error of
// the run. Reason is a *NotIdleError or a *TooLittleError.
type SkippedError struct{ Reason error }

func (e *SkippedError) Error() string { return e.Reason.Error() }
func (e *SkippedError) Unwrap() error { return e.Reason }

// NotIdleError: the file was modified Age ago, less than Options.Idle.
type NotIdleError struct{ Age, Idle time.Duration }

func (e *NotIdleError) Error() string { return fmt.Sprintf("modified %v ago, idle %v", e.Age, e.Idle) }

// TooLittleError: the pass would free Freed tokens, under
// Options.MinSavings.
type TooLittleError struct{ Freed, Min int64 }

func (e *TooLittleError) Error() string {
	return fmt.Sprintf("frees %d tokens, min %d", e.Freed, e.Min)
}

// BusyError is a file that could not be rewritten safely now: another
// process holds the runtime's lock or has the file open for writing, or it
// changed within the quiet period. Retrying later may work. Reason is a
// *QuietError, a *HeldOpenError or a *LockedError.
type BusyError struct {
	Path   string
	Reason error
}

func (e *BusyError) Error() string { return e.Path + ": " + e.Reason.Error() }
func (e *BusyError) Unwrap() error { return e.Reason }

// QuietError: the file changed Age ago, within Options.Quiet.
type QuietError struct{ Age, Quiet time.Duration }

func (e *QuietError) Error() string { return fmt.Sprintf("changed %v ago, quiet %v", e.Age, e.Quiet) }

// HeldOpenError: other processes hold the file open for writing.
type HeldOpenError struct{ Writers []string }

func (e *HeldOpenError) Error() string { return "held open by " + strings.Join(e.Writers, ", ") }

// LockedError: the runtime's Lock is held by Holder, past Timeout.
type LockedError struct {
	Lock, Holder string
	Timeout      time.Duration
}

func (e *LockedError) Error() string { return e.Lock + " held by " + e.Holder }

// ReplacedError: another program replaced the file during the rewrite.
type ReplacedError struct{ Path string }

func (e *ReplacedError) Error() string { return e.Path + " was replaced during the rewrite" }

// tempMarker is in the name of every temp file an in-place run creates, so
// a later run can remove the ones a killed run left.
const tempMarker = ".bs-tmp-"

// rewrite replaces path with transform's output, so that a crash at any
// moment leaves the old file or the new one, and no line an agent appends
// meanwhile is lost:
//
//  1. Take bs's own lock (two bs never rewrite one file at once), remove
//     temp files a killed run left, and take the runtime's <file>.lock
//     (OpenClaw's {pid, createdAt} lock; stale after 30 minutes or when
//     its pid is gone), waiting up to --lock-timeout.
//  2. Note the size N and transform bytes [0,N) into a temp file in the
//     same directory.
//  3. Copy the bytes appended after N, and wait until no other process
//     holds the file open for writing: a writer that keeps its descriptor
//     open would go on appending to the old inode after the rename, so such
//     a file is refused rather than orphaned (Codex keeps its rollout open).
//  4. fsync, rename over the original, fsync the directory.
//  5. Catch bytes a writer appended to the old inode after the last copy
//     (it opened the file just before the rename) and append them to the
//     new file.
func Rewrite(ctx context.Context, path string, opt Options, transform func(io.Reader, io.Writer) error) error {
	return rewriteFile(ctx, path, opt, func(src *os.File, n int64, w io.Writer) error {
		return transform(io.LimitReader(src, n), w)
	})
}

// rewriteFile is Rewrite with the transform given the file itself: body
// writes to w the new content of src's bytes [0, n), src being at 0. A
// body that copies ranges of src to w with io.Copy has the kernel copy
// them.
func rewriteFile(ctx context.Context, path string, opt Options, body func(src *os.File, n int64, w io.Writer) error) error {
	return rewrite(ctx, path, opt, nil, func(src *os.File, _ Start, n int64, w io.Writer) (Final, error) {
		return Final{}, body(src, n, w)
	})
}

// RewriteFileWhenQuiet is rewriteFile tried again while the file is busy
// (a *BusyError: changed within opt.Quiet, held open, or locked by the
// runtime) until opt.LockTimeout has passed: for a rewrite asked for just
// after the runtime wrote the file, as an agent's tool call is.
func RewriteFileWhenQuiet(ctx context.Context, path string, opt Options, body func(src *os.File, n int64, w io.Writer) error) error {
	deadline := time.Now().Add(opt.LockTimeout)
	for {
		err := rewriteFile(ctx, path, opt, body)
		var busy *BusyError
		if !errors.As(err, &busy) || time.Now().After(deadline) {
			return err
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return err
		}
	}
}

// RewriteResuming is Rewrite for a filter that can resume (see resume.go):
// transform reads the file from start.From on, and reports where its
// output became final.
func RewriteResuming(ctx context.Context, path string, opt Options, res Resume, transform func(start Start, r io.Reader, w io.Writer) (Final, error)) error {
	return rewrite(ctx, path, opt, &res, func(src *os.File, start Start, n int64, w io.Writer) (Final, error) {
		return transform(start, io.LimitReader(src, n-start.From), w)
	})
}

// rewrite runs body over path's bytes [start.From, n), resuming under res
// when it is not nil.
func rewrite(ctx context.Context, path string, ip Options, res *Resume, body func(src *os.File, start Start, n int64, w io.Writer) (Final, error)) (err error) {
	// Rewrite the file a link points to, not the link.
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	lock, err := lockPath(ip.StateDir, path)
	if err != nil {
		return err
	}
	unlock, err := lockedfile.MutexAt(lock).Lock()
	if err != nil {
		return fmt.Errorf("%s: lock: %w", path, err)
	}
	defer unlock()
	removeStaleTemps(path)

	src, info, err := openStat(path)
	if err != nil {
		return err
	}
	defer src.Close()
	if age := time.Since(info.ModTime()); ip.Idle > 0 && age < ip.Idle {
		return &SkippedError{&NotIdleError{age, ip.Idle}}
	} else if !ip.Force && age < ip.Quiet {
		return &BusyError{path, &QuietError{age, ip.Quiet}}
	}
	release, err := ip.runtimeLock(ctx, path)
	if err != nil {
		return err
	}
	defer release()

	n := info.Size()
	var before int // the context's tokens before the pass, for MinSavings
	if ip.MinSavings > 0 {
		if before, err = measureAt(ip.Measure, src, 0); err != nil {
			return err
		}
	}
	start := Start{Before: src} // bytes before From are final: copied, not transformed
	if res != nil {
		start.From, start.Format = resumePoint(ip.StateDir, res, path, src, info)
		if start.From > 0 {
			start.Lines = transcript.LinesBefore(src, start.From)
		}
	}
	from := start.From
	tmp, err := newTemp(path)
	if err != nil {
		return err
	}
	defer dropOnError(tmp, &err)
	if from > 0 {
		if _, err = io.CopyN(tmp, src, from); err != nil {
			return err
		}
	}
	out := &countingWriter{w: tmp}
	stop := func() {}
	if ip.ReadLabel != nil && ip.Progress != nil {
		stop = progress.File(ip.Progress, ip.ReadLabel(path), src)
	}
	final, err := body(src, start, n, out)
	stop()
	if err != nil {
		return err
	}
	if err = ctx.Err(); err != nil {
		return err
	}
	if ip.MinSavings > 0 {
		// What the pass takes out of the context, as the gauge counts it
		// (with what the filter records for the usage lines after it).
		var after int
		if after, err = measureAt(ip.Measure, tmp, from+out.n); err != nil {
			return err
		}
		if freed := int64(before - after); freed < ip.MinSavings {
			err = &SkippedError{&TooLittleError{max(freed, 0), ip.MinSavings}}
			return err
		}
	}
	if res != nil {
		saveWatermark(ip.StateDir, res, path, tmp, from+final.Offset, final.Format)
	}
	// Whatever a writer appended while we worked goes after our output.
	if _, err = src.Seek(n, io.SeekStart); err != nil {
		return err
	}
	timeout := max(ip.LockTimeout, catchUpTimeout)
	late, err := replace(ctx, path, src, info, tmp, time.Now().Add(ip.LockTimeout), timeout)
	if err == nil && late.inverted {
		err = reorderLate(ctx, path, tmp, late, timeout)
	}
	tmp.Close()
	syncDir(filepath.Dir(path))
	return err
}

// replace renames tmp over path, src being path's file as it was read up
// to its offset: it gives tmp src's mode and owner, copies what a writer
// appended to src meanwhile (until no writer holds src open, or deadline),
// syncs, and after the rename moves over what a writer still appended to
// src (catchUp, waiting up to timeout).
func replace(ctx context.Context, path string, src *os.File, info os.FileInfo, tmp *os.File, deadline time.Time, timeout time.Duration) (lateLines, error) {
	dev, ino := FileID(info)
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		return lateLines{}, err
	}
	if uid, gid, ok := fileOwner(info); ok {
		_ = tmp.Chown(uid, gid) // best effort: only root may give files away
	}
	// Copy what was appended meanwhile, sync (the slow part), then copy and
	// sync again, so that the window between the last copy and the rename,
	// where an append lands in the old file, is as short as can be.
	for pass := 0; pass < 2; pass++ {
		if err := copyAppended(ctx, src, tmp, dev, ino, deadline, path); err != nil {
			return lateLines{}, err
		}
		if err := tmp.Sync(); err != nil {
			return lateLines{}, err
		}
	}
	// A writer that appended during the sync (a few milliseconds) would
	// see its line moved over after the rename, behind the line it
	// writes next into the new file: copy and sync again until nothing
	// came, so the rename follows the last look at once.
	for try := 0; try < maxFinalCopies; try++ {
		copied, err := copyLinesCounted(tmp, src)
		if err != nil {
			return lateLines{}, err
		}
		if copied == 0 {
			break
		}
		if err := tmp.Sync(); err != nil {
			return lateLines{}, err
		}
	}
	size, err := tmp.Seek(0, io.SeekCurrent)
	if err != nil {
		return lateLines{}, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return lateLines{}, err
	}
	return catchUp(src, path, tmp, dev, ino, timeout, size)
}

// lateLines are what catchUp moved from the replaced file: the bytes, in
// order, where each piece went in the new file, and whether a writer had
// appended to the new file before a piece went: then that piece stands
// after lines written later than it.
type lateLines struct {
	data     []byte
	at       [][2]int64 // [start, end) of each piece in the new file
	base     int64      // the new file's size at the rename
	inverted bool
}

// reorderLate puts the lines a writer appended to the replaced file just
// before the rename back before the lines it has appended to the new file
// since, where catchUp could only add them after: one more rewrite of the
// new file, with the same care (copy, sync, rename, catch up), whose own
// late lines, if any, stay where catchUp puts them.
func reorderLate(ctx context.Context, path string, cur *os.File, late lateLines, timeout time.Duration) (err error) {
	src, info, err := openStat(path)
	if err != nil {
		return err
	}
	defer src.Close()
	if !os.SameFile(info, statOf(cur)) {
		return &ReplacedError{path}
	}
	n := info.Size()
	tmp, err := newTemp(path)
	if err != nil {
		return err
	}
	defer dropOnError(tmp, &err)
	// Our content, the late lines, then the writer's newer lines without
	// the late pieces among them.
	copyRange := func(from, to int64) error {
		_, err := io.Copy(tmp, io.NewSectionReader(src, from, to-from))
		return err
	}
	if err = copyRange(0, late.base); err != nil {
		return err
	}
	if _, err = tmp.Write(late.data); err != nil {
		return err
	}
	pos := late.base
	for _, r := range late.at {
		if err = copyRange(pos, r[0]); err != nil {
			return err
		}
		pos = r[1]
	}
	if err = copyRange(pos, n); err != nil {
		return err
	}
	if _, err = src.Seek(n, io.SeekStart); err != nil {
		return err
	}
	defer tmp.Close()
	// Its own late lines, if any, stay where catchUp puts them.
	_, err = replace(ctx, path, src, info, tmp, time.Now().Add(timeout), timeout)
	return err
}

// maxFinalCopies bounds the copies just before the rename: a writer that
// never pauses for a sync's length is caught up after it.
const maxFinalCopies = 20

// copyLinesCounted is copyLines, saying how many bytes it copied.
func copyLinesCounted(tmp, src *os.File) (int64, error) {
	before, err := src.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	if err := copyLines(tmp, src); err != nil {
		return 0, err
	}
	after, err := src.Seek(0, io.SeekCurrent)
	return after - before, err
}

// catchUpTimeout bounds the wait, after the rename, for a writer that
// opened the file just before it to finish its append. Such a writer holds
// the file for the length of one write; giving up early would strand the
// rest of its line in the replaced file.
const catchUpTimeout = 10 * time.Second

// copyAppended copies to tmp what was appended to src since the last copy,
// until no other process holds src open for writing; a writer that does
// not let go before deadline makes the file busy. The copy after the check
// takes what a writer wrote between the previous copy and its close.
func copyAppended(ctx context.Context, src, tmp *os.File, dev, ino uint64, deadline time.Time, path string) error {
	for {
		if err := copyLines(tmp, src); err != nil {
			return err
		}
		w := openWriters(dev, ino)
		if len(w) == 0 {
			return copyLines(tmp, src)
		}
		if time.Now().After(deadline) {
			return &BusyError{path, &HeldOpenError{w}}
		}
		if err := sleep(ctx, 2*time.Millisecond); err != nil {
			return err
		}
	}
}

// copyLines copies the whole lines appended to src since its offset, and
// leaves src just after the last line feed: a reader can see a long append
// half done, and half a line must not go into the new file before the
// rename, or the writer's next line could land inside it. The rest is
// copied later, or moved by catchUp.
func copyLines(tmp, src *os.File) error {
	buf := make([]byte, 1<<20)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			end := bytes.LastIndexByte(buf[:n], '\n') + 1
			if _, werr := tmp.Write(buf[:end]); werr != nil {
				return werr
			}
			if end < n {
				// Step back to the start of the unfinished line; a line
				// longer than buf is copied in whole-buffer steps only once
				// its end is there, so read on from the same place.
				if _, serr := src.Seek(int64(end-n), io.SeekCurrent); serr != nil {
					return serr
				}
				if end == 0 {
					return copyLongLine(tmp, src)
				}
				continue
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// copyLongLine copies one line longer than copyLines' buffer if its line
// feed is already there, else leaves src where it is.
func copyLongLine(tmp, src *os.File) error {
	start, err := src.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(src, 1<<20)
	var size int64
	for {
		chunk, err := r.ReadSlice('\n')
		size += int64(len(chunk))
		if err == nil {
			break
		}
		if err == io.EOF {
			_, serr := src.Seek(start, io.SeekStart)
			return serr // unfinished: leave it
		}
		if err != bufio.ErrBufferFull {
			return err
		}
	}
	if _, err := src.Seek(start, io.SeekStart); err != nil {
		return err
	}
	if _, err := io.CopyN(tmp, src, size); err != nil {
		return err
	}
	return copyLines(tmp, src)
}

// catchUp moves to the new file (whose descriptor is tmp) the bytes
// appended to the old inode after the last copy: a writer that opened the
// file just before the rename writes there. It waits, up to timeout, until
// no other process holds the old inode open. While one does, only whole
// lines are moved: a reader can see a long write half done, and moving half
// a line would let the writer's next line, in the new file, cut it in two.
func catchUp(old *os.File, path string, tmp *os.File, dev, ino uint64, timeout time.Duration, size int64) (late lateLines, err error) {
	late.base = size
	var appendTo *os.File
	defer func() {
		if appendTo != nil {
			appendTo.Close()
		}
	}()
	move := func(b []byte) error {
		if len(b) == 0 {
			return nil
		}
		if appendTo == nil {
			// O_APPEND: writers that opened the new file append too.
			var err error
			if appendTo, err = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); err != nil {
				return err
			}
			if !os.SameFile(statOf(appendTo), statOf(tmp)) {
				return &ReplacedError{path}
			}
		}
		if info := statOf(appendTo); info != nil && info.Size() != size+int64(len(late.data)) {
			late.inverted = true // a writer's newer line is there first
		}
		if _, err := appendTo.Write(b); err != nil {
			return err
		}
		end, err := appendTo.Seek(0, io.SeekCurrent) // after an O_APPEND write: its end
		if err != nil {
			return err
		}
		late.data = append(late.data, b...)
		late.at = append(late.at, [2]int64{end - int64(len(b)), end})
		return appendTo.Sync()
	}
	// The look at the writers (a walk of /proc) takes longer than a
	// writer takes to append its next line to the new file: it runs on
	// its own, while whole lines go over as soon as they are there.
	gone := make(chan struct{})
	quit := make(chan struct{})
	defer close(quit)
	go func() {
		deadline := time.Now().Add(timeout)
		for len(openWriters(dev, ino)) > 0 && time.Now().Before(deadline) {
			select {
			case <-quit:
				return
			case <-time.After(time.Millisecond):
			}
		}
		close(gone)
	}()
	var pending []byte
	for {
		select {
		case <-gone:
			// No writer left: whatever it wrote is complete.
			rest, err := io.ReadAll(old)
			if err != nil {
				return late, err
			}
			return late, move(append(pending, rest...))
		default:
		}
		buf, err := io.ReadAll(old)
		if err != nil {
			return late, err
		}
		pending = append(pending, buf...)
		if i := bytes.LastIndexByte(pending, '\n'); i >= 0 {
			if err := move(pending[:i+1]); err != nil {
				return late, err
			}
			pending = append(pending[:0], pending[i+1:]...)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// newTemp creates the file a rewrite of path writes, beside it.
func newTemp(path string) (*os.File, error) {
	return os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+tempMarker+"*")
}

// dropOnError removes tmp when the rewrite failed (*err is set).
func dropOnError(tmp *os.File, err *error) {
	if *err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
	}
}

// openStat opens path for reading and says what it is.
func openStat(path string) (*os.File, os.FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

func statOf(f *os.File) os.FileInfo {
	info, _ := f.Stat()
	return info
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// removeStaleTemps removes the temp files of killed runs on path. Only a run
// holding bs's lock on path creates them, so under the lock any left is
// stale.
func removeStaleTemps(path string) {
	for _, suffix := range []string{"", ".lock"} { // the new file's and the runtime lock's
		old, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+escapeGlob(filepath.Base(path)+suffix)+tempMarker+"*"))
		for _, f := range old {
			os.Remove(f)
		}
	}
}

func escapeGlob(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(s)
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadFrom lets io.Copy reach the file underneath (copy_file_range).
func (c *countingWriter) ReadFrom(r io.Reader) (int64, error) {
	n, err := io.Copy(c.w, r)
	c.n += n
	return n, err
}

// lockPath is the lock file bs holds while rewriting path. Lock files live
// under <state dir>/locks, named by the file's absolute path, and
// are never deleted: removing one while another process waits on it would
// let a third lock a new file of the same name.
func lockPath(stateDir, path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(stateDir, "locks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), nil
}

// measureAt counts the tokens of the file f with measure, and leaves its
// offset at at, where its reader or writer goes on.
func measureAt(measure func(*os.File) (int, error), f *os.File, at int64) (int, error) {
	tokens, err := measure(f)
	if _, serr := f.Seek(at, io.SeekStart); err == nil {
		err = serr
	}
	return tokens, err
}
