package inplace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// stressSize reads the size of the live-operation stress tests: small by
// default, the full size with BS_STRESS=full, and whatever
// BS_STRESS_LINES / BS_STRESS_RUNS say (.ci/run sets a bounded size).
func stressSize(lines, runs int) (int, int) {
	if os.Getenv("BS_STRESS") == "full" {
		lines, runs = 20000, 200
	}
	if n, err := strconv.Atoi(os.Getenv("BS_STRESS_LINES")); err == nil {
		lines = n
	}
	if n, err := strconv.Atoi(os.Getenv("BS_STRESS_RUNS")); err == nil {
		runs = n
	}
	return lines, runs
}

// TestMain makes the test binary the rewriting process of the tests that
// need one to kill or to race with writers: with INPLACE_HELPER set it
// rewrites the file named by its arguments (see helper) instead.
func TestMain(m *testing.M) {
	if os.Getenv("INPLACE_HELPER") != "" {
		os.Exit(helper(os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helper rewrites args[0] in place with mark, with --lock-timeout
// args[1] and --force: exit 0 when done, 3 when a writer holds the file
// open, 1 on any other error (on stderr).
func helper(args []string) int {
	timeout, err := time.ParseDuration(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	opt := Options{LockTimeout: timeout, Force: true, StateDir: os.Getenv("INPLACE_STATE")}
	err = Rewrite(context.Background(), args[0], opt, mark)
	var held *HeldOpenError
	switch {
	case errors.As(err, &held):
		return 3
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// mark is the transform of the tests: every line that does not start with
// "~" gets one, so the new content differs from the old and unmark gets
// the old back.
func mark(r io.Reader, w io.Writer) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if len(l) > 0 && l[0] != '~' {
			out = append(out, '~')
		}
		out = append(out, l...)
	}
	_, err = w.Write(out)
	return err
}

// unmark undoes mark.
func unmark(b []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		out = append(out, bytes.TrimPrefix(l, []byte("~"))...)
	}
	return out
}

// rewriter runs the test binary as the helper on path, its state under
// dir.
func rewriter(dir, path, timeout string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], path, timeout)
	cmd.Env = append(os.Environ(), "INPLACE_HELPER=1", "INPLACE_STATE="+filepath.Join(dir, "state"))
	return cmd
}

const stressHeader = `{"type":"session","version":3,"id":"stress","timestamp":"2026-02-20T10:00:00.000Z","cwd":"/"}` + "\n"

// stressLine is an OpenClaw tool result of about size bytes, unique to i.
func stressLine(rng *rand.Rand, i, size int) []byte {
	text := make([]byte, size)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 .,;:-_"
	for j := range text {
		text[j] = alphabet[rng.IntN(len(alphabet))]
	}
	return fmt.Appendf(nil, `{"type":"message","id":"w%d","parentId":null,"timestamp":"2026-02-20T10:00:01.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"%d %s"}],"isError":false}}`+"\n", i, i, i, text)
}

// stressSizes are mostly small lines, with one in ten up to 1 MiB.
func stressSizes(rng *rand.Rand) int {
	if rng.IntN(10) == 0 {
		return rng.IntN(1 << 20)
	}
	return 200 + rng.IntN(8<<10)
}

// The writers of the append stress test.
const (
	locking   = "reopens, takes the runtime lock" // OpenClaw
	unlocked  = "reopens, no lock"                // Claude Code
	keepsOpen = "keeps its descriptor open"       // Codex
)

// TestInPlaceAppendStress: a writer appends lines as fast as it can (with a
// millisecond between lines, so that its life overlaps the runs) while
// a rewrite runs again and again on the file. Afterwards the file, unmarked,
// holds exactly the bytes the writer wrote: every line once, in
// order.
//
// A writer that takes the runtime's <file>.lock for each append, as
// OpenClaw does, is ordered by it. A writer that takes no lock is raced:
// one that opened the file just before the rename writes to the old inode
// and bs moves those bytes over, but a writer a thousand times faster than
// an agent can get its next line into the new file first; for it the test
// checks that every line is there exactly once. A writer that keeps its
// descriptor open makes bs refuse the file, since a rename would orphan
// its later appends.
func TestInPlaceAppendStress(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	lines, runs := stressSize(300, 10)
	for _, writer := range []string{locking, unlocked, keepsOpen} {
		keepOpen := writer == keepsOpen
		t.Run(writer, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(stressHeader), 0o600); err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			want.WriteString(stressHeader)
			done := make(chan struct{})
			var werr error
			var held *os.File
			go func() {
				defer close(done)
				rng := rand.New(rand.NewPCG(1, uint64(lines)))
				var f *os.File
				for i := 0; i < lines && werr == nil; i++ {
					line := stressLine(rng, i, stressSizes(rng))
					want.Write(line)
					var unlock func()
					if writer == locking {
						if unlock, werr = takeRuntimeLock(path); werr != nil {
							return
						}
					}
					if f == nil {
						if f, werr = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0); werr != nil {
							return
						}
					}
					if _, werr = f.Write(line); werr != nil {
						return
					}
					if !keepOpen {
						werr = f.Close()
						f = nil
					}
					if unlock != nil {
						unlock()
					}
					time.Sleep(time.Millisecond)
				}
				if f != nil && !keepOpen {
					werr = f.Close()
				}
				held = f // a writer that keeps its descriptor holds it past its last line
			}()
			var mu sync.Mutex
			refused := 0
			n := 0
			for writing := true; writing || n < runs; n++ {
				select {
				case <-done:
					writing = false
				default:
				}
				// The locking writer frees its lock for about a
				// millisecond between lines; a run polling with backoff
				// may miss many such gaps on a loaded machine, so it may
				// wait longer. The others are refused or let through at
				// once.
				timeout := "50ms"
				if writer == locking {
					timeout = "10s"
				}
				out, err := rewriter(dir, path, timeout).CombinedOutput()
				if err != nil {
					if code := exitCode(err); code != 3 {
						t.Fatalf("run %d: %v\n%s", n, err, out)
					}
					mu.Lock()
					refused++
					mu.Unlock()
				}
			}
			<-done
			if werr != nil {
				t.Fatal(werr)
			}
			if keepOpen {
				// Whether the runs above met the writer at work depends on
				// the machine's load; this one surely does.
				out, err := rewriter(dir, path, "50ms").CombinedOutput()
				if exitCode(err) != 3 {
					t.Errorf("the rewrite did not refuse the file a writer holds open: %v\n%s", err, out)
				}
				if err := held.Close(); err != nil {
					t.Fatal(err)
				}
			}
			marked, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got := bytes.NewBuffer(unmark(marked))
			if writer == unlocked {
				sorted := func(b []byte) string {
					l := strings.SplitAfter(string(b), "\n")
					slices.Sort(l)
					return strings.Join(l, "")
				}
				if sorted(got.Bytes()) != sorted(want.Bytes()) {
					t.Fatalf("after %d runs the file does not hold every written line exactly once (%d vs %d bytes)", n, got.Len(), want.Len())
				}
				if !bytes.Equal(got.Bytes(), want.Bytes()) {
					t.Logf("every line is there once, but some are out of order")
				}
			} else if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("after %d runs (%d refused) the file differs from what the writer wrote (%d vs %d bytes)", n, refused, got.Len(), want.Len())
			}
			cur, _ := os.ReadFile(path)
			t.Logf("%d lines, %d runs (%d refused); file %d bytes, written %d", lines, n, refused, len(cur), want.Len())
		})
	}
}

// takeRuntimeLock takes <path>.lock the way OpenClaw does: created
// exclusively, retried while another holds it.
func takeRuntimeLock(path string) (func(), error) {
	for {
		f, err := os.OpenFile(path+".lock", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err == nil {
			fmt.Fprintf(f, `{"pid":%d,"createdAt":%q}`, os.Getpid(), time.Now().UTC().Format(time.RFC3339Nano))
			f.Close()
			return func() { os.Remove(path + ".lock") }, nil
		}
		if !os.IsExist(err) {
			return nil, err
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestInPlaceKill kills a rewrite at random moments: the file always
// holds the old content or the new, and the next run leaves no temp file.
func TestInPlaceKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	trials := 10
	if os.Getenv("BS_STRESS") == "full" {
		trials = 100
	}
	if n, err := strconv.Atoi(os.Getenv("BS_STRESS_TRIALS")); err == nil {
		trials = n
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 7))
	var orig bytes.Buffer
	orig.WriteString(stressHeader)
	for i := 0; i < 60; i++ {
		orig.Write(stressLine(rng, i, 20000+rng.IntN(200000)))
	}
	path := filepath.Join(dir, "k.jsonl")
	// The new content.
	var lean bytes.Buffer
	if err := mark(bytes.NewReader(orig.Bytes()), &lean); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, orig.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if out, err := rewriter(dir, path, "10s").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	took := time.Since(start)
	killed := 0
	for trial := 0; trial < trials; trial++ {
		if err := os.WriteFile(path, orig.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := rewriter(dir, path, "10s")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.Int64N(int64(took))))
		if cmd.Process.Kill() == nil {
			killed++
		}
		cmd.Wait()
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, orig.Bytes()) && !bytes.Equal(got, lean.Bytes()) {
			t.Fatalf("trial %d: the file is neither the old content nor the new (%d bytes)", trial, len(got))
		}
		if out, err := rewriter(dir, path, "10s").CombinedOutput(); err != nil {
			t.Fatalf("trial %d: the run after the kill: %v\n%s", trial, err, out)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".k.jsonl"+tempMarker+"*")); len(left) > 0 {
			t.Fatalf("trial %d: temp files left: %v", trial, left)
		}
		if _, err := os.Stat(path + ".lock"); err == nil {
			t.Fatalf("trial %d: the runtime lock was left", trial)
		}
	}
	if killed == 0 {
		t.Fatal("no run was killed")
	}
}

// TestInPlaceForcedOrder: a writer that reopens the file for each append
// and takes no lock (the race -i --force is documented to run), a line
// every 3 ms, while a forced rewrite passes over the file again and
// again. Every line the writer wrote is in the file once, and no two
// neighbours are out of order: a line that reached the replaced file just
// before the rename is moved over before the writer's next line lands.
// BS_STRESS_RUNS sets the passes (200 with BS_STRESS=full).
func TestInPlaceForcedOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	_, runs := stressSize(0, 40)
	dir := t.TempDir()
	path := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(path, []byte(stressHeader), 0o600); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan int)
	var werr error
	go func() {
		rng := rand.New(rand.NewPCG(3, 3))
		i := 0
		defer func() { done <- i }()
		for ; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				werr = err
				return
			}
			_, werr = f.Write(stressLine(rng, i, 200+rng.IntN(2000)))
			if err := f.Close(); werr == nil {
				werr = err
			}
			if werr != nil {
				return
			}
			time.Sleep(3 * time.Millisecond)
		}
	}()
	for n := 0; n < runs; n++ {
		if out, err := rewriter(dir, path, "1s").CombinedOutput(); err != nil {
			t.Fatalf("pass %d: %v\n%s", n, err, out)
		}
	}
	close(stop)
	written := <-done
	if werr != nil {
		t.Fatal(werr)
	}
	marked, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got := unmark(marked)
	// The lines' numbers, in file order.
	var order []int
	for _, l := range strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")[1:] {
		var i int
		if _, err := fmt.Sscanf(l[strings.Index(l, `"id":"w`)+len(`"id":"w`):], "%d", &i); err != nil {
			t.Fatalf("line %q: %v", l[:min(len(l), 80)], err)
		}
		order = append(order, i)
	}
	seen := map[int]bool{}
	inversions := 0
	for k, i := range order {
		if seen[i] {
			t.Errorf("line w%d twice", i)
		}
		seen[i] = true
		if k > 0 && order[k-1] > i {
			inversions++
		}
	}
	if len(seen) != written {
		t.Errorf("%d lines in the file, %d written", len(seen), written)
	}
	if inversions > 0 {
		t.Errorf("%d adjacent inversions in %d lines over %d forced passes", inversions, written, runs)
	}
	t.Logf("%d lines, %d forced passes", written, runs)
}

// exitCode is the exit code of a process that ended with err (0: none).
func exitCode(err error) int {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}
