package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// packTrials is how many kill trials TestStoreKill runs: 12 by default,
// 100 under BS_STRESS=full, BS_STRESS_PACK_TRIALS when set (.ci/run).
func packTrials() int {
	trials := 12
	if os.Getenv("BS_STRESS") == "full" {
		trials = 100
	}
	if n, err := strconv.Atoi(os.Getenv("BS_STRESS_PACK_TRIALS")); err == nil {
		trials = n
	}
	return trials
}

// packSession is an OpenClaw session of n tool results, each of its own
// (unique to seed) or, one in three, one of a few values every session
// shares, so that runs store some values another stored before; the
// first lines are all shared ones.
func packSession(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 11))
	var b bytes.Buffer
	b.WriteString(stressHeader)
	for i := range n {
		if i < 8 || rng.IntN(3) == 0 {
			k := rng.IntN(8)
			if i < 8 {
				k = i
			}
			b.Write(stressLine(rand.New(rand.NewPCG(uint64(k), 0)), 100000+k, 2000+k*3000))
			continue
		}
		b.Write(stressLine(rng, int(seed)*1000+i, 500+rng.IntN(30000)))
	}
	for i := range 4 {
		fmt.Fprintf(&b, `{"type":"message","id":"u%d-%d","parentId":null,"timestamp":"2026-02-20T10:00:02.000Z","message":{"role":"user","content":"next"}}`+"\n", seed, i)
	}
	return b.Bytes()
}

// completeLines is b up to its last line feed.
func completeLines(b []byte) []byte {
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// runBs runs bs with stdin from in (if not nil) and returns its stdout.
func runBs(t *testing.T, bin string, env []string, in []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("bs %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// killAfter starts bs, kills it after a random time up to took, and
// returns whether it was killed before it finished.
func killAfter(t *testing.T, rng *rand.Rand, took time.Duration, bin string, env []string, in []byte, out *os.File, args ...string) bool {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	cmd.Stdout = out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Duration(rng.Int64N(int64(took) + 1)))
	killed := cmd.Process.Kill() == nil
	err := cmd.Wait()
	return killed && err != nil
}

// timed runs bs once to learn how long it takes.
func timed(t *testing.T, bin string, env []string, in []byte, args ...string) time.Duration {
	t.Helper()
	start := time.Now()
	runBs(t, bin, env, in, args...)
	return time.Since(start)
}

// TestStoreKill kills bs extract, bs store repack and bs prune-retention
// at random moments, in turn, on one store: every output line a killed
// extract wrote restores, every live transcript still restores after each
// kill, bs store verify finds nothing corrupt, and what the killed runs
// left is cleaned once it is an hour old.
func TestStoreKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	trials := packTrials()
	dir := t.TempDir()
	bin := bsBinary(t)
	env := bsEnv(dir)
	store := filepath.Join(dir, "store")
	live := filepath.Join(dir, "live")
	if err := os.Mkdir(live, 0o700); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(20, 20))
	extract := []string{"extract", "--no-index", "--keep-recent", "3", "--min-length", "100"}
	inputs := map[string][]byte{} // live transcript -> what it restores to
	// Keep one transcript live from the start, so that prune has marks.
	first := packSession(1, 40)
	lean := runBs(t, bin, env, first, extract...)
	inputs[filepath.Join(live, "first.jsonl")] = first
	os.WriteFile(filepath.Join(live, "first.jsonl"), lean, 0o600)
	took := map[string]time.Duration{
		"extract": timed(t, bin, env, packSession(2, 40), extract...),
		"repack":  timed(t, bin, env, nil, "store", "repack"),
		"prune":   timed(t, bin, env, nil, "prune-retention", "--sessions", live, "--older-than", "0s"),
	}
	killed := 0
	for trial := range trials {
		kind := []string{"extract", "repack", "prune"}[trial%3]
		switch kind {
		case "extract":
			in := packSession(uint64(100+trial), 30+rng.IntN(30))
			path := filepath.Join(dir, fmt.Sprintf("out%d.jsonl", trial))
			out, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			if killAfter(t, rng, took[kind], bin, env, in, out, extract...) {
				killed++
			}
			out.Close()
			written, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			written = completeLines(written)
			want := in[:lineOffset(in, bytes.Count(written, []byte("\n")))]
			back := runBs(t, bin, env, written, "restore", "--all")
			if !bytes.Equal(back, want) {
				t.Fatalf("trial %d: the %d lines a killed extract wrote do not restore to the input's", trial, bytes.Count(written, []byte("\n")))
			}
			// Every other run's output stays live; the others' blobs are
			// for prune to find unreferenced.
			if trial%2 == 0 {
				p := filepath.Join(live, fmt.Sprintf("t%d.jsonl", trial))
				os.WriteFile(p, written, 0o600)
				inputs[p] = want
			}
		case "repack":
			if killAfter(t, rng, took[kind], bin, env, nil, nil, "store", "repack") {
				killed++
			}
		case "prune":
			// Everything a year old, so that the prune has work to do.
			if err := ageStore(store, 8760*time.Hour); err != nil {
				t.Fatal(err)
			}
			if killAfter(t, rng, took[kind], bin, env, nil, nil, "prune-retention", "--sessions", live, "--older-than", "0s") {
				killed++
			}
		}
		for p, want := range inputs {
			lean, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if back := runBs(t, bin, env, lean, "restore", "--all"); !bytes.Equal(back, want) {
				t.Fatalf("trial %d (%s killed): %s no longer restores", trial, kind, filepath.Base(p))
			}
		}
		runBs(t, bin, env, nil, "store", "verify")
	}
	if killed == 0 {
		t.Fatal("no run was killed before it finished")
	}
	t.Logf("%d of %d runs killed before they finished", killed, trials)

	// What the killed runs left, an hour later, goes with the next repack;
	// a pack no index names is indexed from its trailer.
	if err := ageFiles(store, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	runBs(t, bin, env, nil, "store", "repack")
	var left []string
	filepath.WalkDir(store, func(p string, e fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(e.Name(), ".tmp-") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("temp files left after the repack: %v", left)
	}
	for p, want := range inputs {
		lean, _ := os.ReadFile(p)
		if back := runBs(t, bin, env, lean, "restore", "--all"); !bytes.Equal(back, want) {
			t.Fatalf("after the cleaning repack, %s no longer restores", filepath.Base(p))
		}
	}
	runBs(t, bin, env, nil, "store", "verify")
}

// lineOffset is the offset of line n (0-based) of b: the length of its
// first n lines.
func lineOffset(b []byte, n int) int {
	off := 0
	for range n {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			return len(b)
		}
		off += i + 1
	}
	return off
}

// ageFiles moves the time of every file under dir back by by.
func ageFiles(dir string, by time.Duration) error {
	return filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		return os.Chtimes(p, time.Time{}, fi.ModTime().Add(-by))
	})
}

// TestStoreConcurrentWriters: four bs extract processes store overlapping
// sessions into one store at once, without a lock, while bs
// prune-retention runs again and again beside them with none of their
// output among its live transcripts and every blob a year old before
// they start: nothing they reference is lost, since what a writer stores
// or re-uses is too new for a prune to take. (A writer that relied on a
// year-old copy of the values the sessions share, instead of writing a
// fresh one, would lose them to the prunes: that is what the test is
// built to catch.)
func TestStoreConcurrentWriters(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	bin := bsBinary(t)
	env := bsEnv(dir)
	store := filepath.Join(dir, "store")
	extract := []string{"extract", "--no-index", "--keep-recent", "3", "--min-length", "100"}
	// The shared values are stored already, a year ago, referenced by
	// nothing the prune reads.
	runBs(t, bin, env, packSession(500, 120), extract...)
	if err := ageStore(store, 8760*time.Hour); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	os.Mkdir(other, 0o700)
	os.WriteFile(filepath.Join(other, "x.jsonl"), []byte(stressHeader), 0o600)

	const writers = 4
	ins := make([][]byte, writers)
	outs := make([][]byte, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range writers {
		ins[w] = packSession(uint64(600+w), 300)
		wg.Go(func() {
			cmd := exec.Command(bin, extract...)
			cmd.Env = env
			cmd.Stdin = bytes.NewReader(ins[w])
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			outs[w], errs[w] = cmd.Output()
			if errs[w] != nil {
				errs[w] = fmt.Errorf("%v: %s", errs[w], stderr.String())
			}
		})
	}
	prunes := 0
	var pruneErr error
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		// The writers meet the shared values first: let them, then
		// prune while they go on.
		time.Sleep(50 * time.Millisecond)
		for {
			select {
			case <-done:
				return
			default:
			}
			cmd := exec.Command(bin, "prune-retention", "--sessions", other, "--older-than", "0s")
			cmd.Env = env
			if out, err := cmd.CombinedOutput(); err != nil {
				pruneErr = fmt.Errorf("%v: %s", err, out)
				return
			}
			prunes++
		}
	}()
	wg.Wait()
	close(done)
	<-pruned
	if pruneErr != nil {
		t.Fatal(pruneErr)
	}
	t.Logf("%d prunes ran beside the writers", prunes)
	for w := range writers {
		if errs[w] != nil {
			t.Fatalf("writer %d: %v", w, errs[w])
		}
		if back := runBs(t, bin, env, outs[w], "restore", "--all"); !bytes.Equal(back, ins[w]) {
			t.Fatalf("writer %d's output does not restore to its input", w)
		}
	}
	runBs(t, bin, env, nil, "store", "verify")
}
