package inplace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// session writes a file of n lines under a new directory, modified an
// hour ago unless fresh.
func session(t *testing.T, n int, fresh bool) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.jsonl")
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if !fresh {
		old := time.Now().Add(-time.Hour)
		os.Chtimes(path, old, old)
	}
	return path
}

func options(t *testing.T) Options {
	return Options{LockTimeout: time.Second, Quiet: 2 * time.Second, StateDir: t.TempDir()}
}

func TestRewriteReplaces(t *testing.T) {
	path := session(t, 3, false)
	os.Chmod(path, 0o640)
	if err := Rewrite(context.Background(), path, options(t), mark); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "~line 0\n~line 1\n~line 2\n" {
		t.Errorf("got %q", got)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old file's 0640", info.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

func TestRewriteRefusals(t *testing.T) {
	ctx := context.Background()
	t.Run("quiet period", func(t *testing.T) {
		path := session(t, 1, true)
		err := Rewrite(ctx, path, options(t), mark)
		var busy *BusyError
		var quiet *QuietError
		if !errors.As(err, &busy) || !errors.As(err, &quiet) || busy.Path != path || quiet.Quiet != 2*time.Second {
			t.Fatalf("got %v, want a quiet-period refusal", err)
		}
		opt := options(t)
		opt.Force = true
		if err := Rewrite(ctx, path, opt, mark); err != nil {
			t.Errorf("--force: %v", err)
		}
	})
	t.Run("not idle", func(t *testing.T) {
		path := session(t, 1, false)
		opt := options(t)
		opt.Idle = 2 * time.Hour
		err := Rewrite(ctx, path, opt, mark)
		var skip *SkippedError
		var idle *NotIdleError
		if !errors.As(err, &skip) || !errors.As(err, &idle) || idle.Idle != 2*time.Hour || idle.Age < time.Hour {
			t.Fatalf("got %v, want not idle", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "line 0\n" {
			t.Errorf("the file changed: %q", got)
		}
	})
	t.Run("min savings", func(t *testing.T) {
		path := session(t, 10, false)
		opt := options(t)
		opt.MinSavings = 100
		// The context is the file's size here: marking adds bytes.
		opt.Measure = func(f *os.File) (int, error) {
			info, err := f.Stat()
			return -int(info.Size()), err
		}
		err := Rewrite(ctx, path, opt, mark)
		var little *TooLittleError
		if !errors.As(err, &little) || little.Freed != 10 || little.Min != 100 {
			t.Fatalf("got %v, want 10 freed under 100", err)
		}
		opt.MinSavings = 10
		if err := Rewrite(ctx, path, opt, mark); err != nil {
			t.Errorf("at the minimum: %v", err)
		}
	})
	t.Run("runtime lock held", func(t *testing.T) {
		path := session(t, 1, false)
		// A live process holds the runtime's lock: this one.
		lock := fmt.Sprintf(`{"pid":%d,"createdAt":%q}`, os.Getpid(), time.Now().UTC().Format(time.RFC3339))
		os.WriteFile(path+".lock", []byte(lock), 0o600)
		opt := options(t)
		opt.LockTimeout = 50 * time.Millisecond
		err := Rewrite(ctx, path, opt, mark)
		var locked *LockedError
		if !errors.As(err, &locked) || locked.Lock != path+".lock" || !strings.HasPrefix(locked.Holder, fmt.Sprintf("pid %d since ", os.Getpid())) {
			t.Fatalf("got %v, want the runtime's lock", err)
		}
		if b, _ := os.ReadFile(path + ".lock"); string(b) != lock {
			t.Errorf("the runtime's lock was touched: %q", b)
		}
	})
	t.Run("stale runtime lock", func(t *testing.T) {
		path := session(t, 1, false)
		os.WriteFile(path+".lock", []byte(`{"pid":1,"createdAt":"2020-01-01T00:00:00.000Z"}`), 0o600)
		if err := Rewrite(ctx, path, options(t), mark); err != nil {
			t.Fatalf("a lock from 2020 was not taken over: %v", err)
		}
		if _, err := os.Stat(path + ".lock"); err == nil {
			t.Error("the lock taken over was left")
		}
	})
	t.Run("transform fails", func(t *testing.T) {
		path := session(t, 2, false)
		boom := errors.New("boom")
		err := Rewrite(ctx, path, options(t), func(r io.Reader, w io.Writer) error {
			w.Write([]byte("half"))
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("got %v", err)
		}
		if got, _ := os.ReadFile(path); string(got) != "line 0\nline 1\n" {
			t.Errorf("the file changed: %q", got)
		}
		if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".*")); len(left) > 0 {
			t.Errorf("left behind: %v", left)
		}
	})
}

// TestResume: a second run over a file that grew starts at the watermark
// the first reported, with the lines before it counted; a run with another
// key, or over a file whose prefix changed, starts at the beginning.
func TestResume(t *testing.T) {
	ctx := context.Background()
	path := session(t, 4, false)
	opt := options(t)
	opt.Force = true // the runs follow each other at once
	known := func(f string) bool { return f == "lines" }
	var starts []Start
	// The filter marks every line, and reports all but its last line as
	// final.
	filter := func(start Start, r io.Reader, w io.Writer) (Final, error) {
		starts = append(starts, start)
		var out bytes.Buffer
		if err := mark(r, &out); err != nil {
			return Final{}, err
		}
		w.Write(out.Bytes())
		last := bytes.LastIndexByte(bytes.TrimSuffix(out.Bytes(), []byte("\n")), '\n') + 1
		return Final{Offset: int64(last), Format: "lines"}, nil
	}
	run := func(key string) {
		t.Helper()
		if err := RewriteResuming(ctx, path, opt, Resume{Key: key, Known: known}, filter); err != nil {
			t.Fatal(err)
		}
	}
	grow := func(s string) {
		f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		f.WriteString(s)
		f.Close()
		old := time.Now().Add(-time.Hour)
		os.Chtimes(path, old, old)
	}
	run("a")
	grow("line 4\n")
	run("a")
	run("b")
	if len(starts) != 3 {
		t.Fatalf("%d runs", len(starts))
	}
	if starts[0].From != 0 {
		t.Errorf("first run from %d", starts[0].From)
	}
	if want := int64(len("~line 0\n~line 1\n~line 2\n")); starts[1].From != want || starts[1].Lines != 3 || starts[1].Format != "lines" {
		t.Errorf("second run starts at %+v, want offset %d after 3 lines", starts[1], want)
	}
	if starts[2].From != 0 {
		t.Errorf("a run with another key resumed at %d", starts[2].From)
	}
	want := "~line 0\n~line 1\n~line 2\n~line 3\n~line 4\n"
	if got, _ := os.ReadFile(path); string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	// The prefix changes under the same inode: the watermark is void.
	run("a")
	f, _ := os.OpenFile(path, os.O_WRONLY, 0)
	f.WriteAt([]byte("X"), 1)
	f.Close()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(path, old, old)
	run("a")
	if s := starts[len(starts)-1]; s.From != 0 {
		t.Errorf("resumed at %d over a changed prefix", s.From)
	}
	// A format the filter no longer knows voids it too.
	run("a")
	known = func(string) bool { return false }
	run("a")
	if s := starts[len(starts)-1]; s.From != 0 {
		t.Errorf("resumed at %d with an unknown format", s.From)
	}
}

// TestRewriteWhenQuiet: a file changed within the quiet period is
// rewritten once it has been quiet long enough, if that comes within the
// lock timeout; after the timeout the refusal stands.
func TestRewriteWhenQuiet(t *testing.T) {
	ctx := context.Background()
	copyAll := func(src *os.File, n int64, w io.Writer) error { return mark(io.LimitReader(src, n), w) }
	path := session(t, 1, true)
	opt := Options{LockTimeout: 5 * time.Second, Quiet: 300 * time.Millisecond, StateDir: t.TempDir()}
	if err := RewriteFileWhenQuiet(ctx, path, opt, copyAll); err != nil {
		t.Fatalf("a file quiet within the timeout: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != "~line 0\n" {
		t.Errorf("got %q", got)
	}
	path = session(t, 1, true)
	opt.Quiet, opt.LockTimeout = time.Hour, 200*time.Millisecond
	var busy *BusyError
	if err := RewriteFileWhenQuiet(ctx, path, opt, copyAll); !errors.As(err, &busy) {
		t.Fatalf("a file busy past the timeout: got %v, want a *BusyError", err)
	}
}
