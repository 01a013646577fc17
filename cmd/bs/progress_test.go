//go:build unix

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/bstools/bs/internal/progress"
)

// onTerminal runs a bs command line in process with standard error on a
// pseudo-terminal and returns what the terminal showed.
func onTerminal(t *testing.T, stdin io.Reader, args ...string) (string, int) {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	var shown bytes.Buffer
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		io.Copy(&shown, master)
	}()
	code := run(append([]string{"bs"}, args...), stdin, io.Discard, tty)
	tty.Close()
	wg.Wait()
	return shown.String(), code
}

// slowly gives data in pieces over about d, as a pipe from a slow writer.
func slowly(data []byte, d time.Duration) io.Reader {
	r, w := io.Pipe()
	go func() {
		const pieces = 20
		step := len(data)/pieces + 1
		for i := 0; i < len(data); i += step {
			w.Write(data[i:min(i+step, len(data))])
			time.Sleep(d / pieces)
		}
		w.Close()
	}()
	return r
}

func bigSession(n int) []byte {
	var b bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"role":"user","content":"message %d %s"}`+"\n", i, strings.Repeat("x", 1000))
	}
	return b.Bytes()
}

// quickProgress draws progress after 50ms, on a terminal that is not
// dumb, for a test whose store and state are its own.
func quickProgress(t *testing.T) {
	old := progress.Delay
	t.Cleanup(func() { progress.Delay = old })
	progress.Delay = 50 * time.Millisecond
	t.Setenv("BS_STORE", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	t.Setenv("TERM", "xterm")
}

// TestProgressOnTerminal: long work shows its progress on standard error
// when that is a terminal, bytes done and the rate, and clears the line
// at the end; the same run into a pipe shows nothing.
func TestProgressOnTerminal(t *testing.T) {
	quickProgress(t)
	data := bigSession(2000)

	shown, code := onTerminal(t, slowly(data, 600*time.Millisecond), "extract")
	if code != 0 {
		t.Fatalf("exit %d: %q", code, shown)
	}
	if !regexp.MustCompile(`bs extract: -.*[0-9.]+ [kM]B`).MatchString(shown) {
		t.Errorf("no progress of bytes read on the terminal: %q", shown)
	}
	if !regexp.MustCompile(`\r +\r$`).MatchString(shown) {
		t.Errorf("the progress line is not cleared at the end: %q", shown[max(0, len(shown)-80):])
	}

	var stderr bytes.Buffer
	if code := run([]string{"bs", "extract"}, slowly(data, 300*time.Millisecond), io.Discard, &stderr); code != 0 || stderr.Len() > 0 {
		t.Errorf("into a pipe: exit %d, stderr %q", code, stderr.String())
	}
}

// TestProgressOfALockWait: the wait for the runtime's lock shows on the
// terminal.
func TestProgressOfALockWait(t *testing.T) {
	quickProgress(t)
	dir := t.TempDir()
	f := filepath.Join(dir, "s.jsonl")
	os.WriteFile(f, bigSession(10), 0o644)
	// A live process holds the runtime's lock: this one.
	os.WriteFile(f+".lock", []byte(fmt.Sprintf(`{"pid":%d,"createdAt":"%s"}`, os.Getpid(), time.Now().UTC().Format(time.RFC3339))), 0o644)
	shown, code := onTerminal(t, nil, "extract", "-i", "--force", "--lock-timeout", "1s", f)
	if code == 0 {
		t.Fatalf("the lock was not waited for: %q", shown)
	}
	if !strings.Contains(shown, "bs: waiting for "+f+".lock") {
		t.Errorf("no progress of the wait for the lock: %q", shown)
	}
}
