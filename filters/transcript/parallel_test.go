package transcript

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// sourceRecord is everything a Source hands out, as text, so that a
// serial and a Parallel reading can be compared. Each line's Annotation
// must be what the annotating function makes of the line's tree. The
// lines Next gives are kept to the end, and must still be what they were.
func sourceRecord(t *testing.T, in []byte, workers int, onBad func(*BadLineError) error) (string, error) {
	return sourceRecordWith(t, in, workers, onBad, false, false, nil)
}

// sourceRecordWith is sourceRecord reading with NextView when view is set,
// after KeepLines when keeps is, and with ParseIf(parseIf) when that is
// not nil.
func sourceRecordWith(t *testing.T, in []byte, workers int, onBad func(*BadLineError) error, view, keeps bool, parseIf func([]byte) bool) (string, error) {
	t.Helper()
	src := NewSource("in", bytes.NewReader(in), Unknown, onBad)
	src.Parallel(workers)
	if keeps {
		src.KeepLines()
	}
	if parseIf != nil {
		src.ParseIf(parseIf)
	}
	defer src.Close()
	annotate := func(tree *Tree, d Dialect) any {
		return fmt.Sprintf("%s %d values, last %q", d, len(tree.Nodes), tree.Raw(len(tree.Nodes)-1))
	}
	src.Annotate(annotate)
	var b strings.Builder
	type kept struct {
		line Line
		was  string
	}
	var lines []kept
	defer func() {
		for _, k := range lines {
			if string(k.line.Bytes()) != k.was {
				t.Fatalf("line %d, from Next: its bytes changed after later calls", k.line.Num)
			}
		}
	}()
	for {
		next := src.Next
		if view {
			next = src.NextView
		}
		line, tree, err := next()
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return b.String(), err
		}
		if !view {
			lines = append(lines, kept{line, string(line.Bytes())})
		}
		if src.Skipped() {
			if parseIf == nil || parseIf(line.Body) || tree != nil {
				t.Fatalf("line %d: Skipped, but ParseIf's function accepts it or it has a tree", line.Num)
			}
			b.WriteString("skipped ")
		} else if parseIf != nil && !parseIf(line.Body) {
			t.Fatalf("line %d: not Skipped, but ParseIf's function does not accept it", line.Num)
		}
		fmt.Fprintf(&b, "%d %q %v", line.Num, line.Bytes(), tree != nil)
		if tree != nil {
			if !bytes.Equal(tree.Src, line.Body) {
				t.Fatalf("line %d: the tree is of other bytes", line.Num)
			}
			if !view && &tree.Src[0] != &line.Body[0] {
				// What a filter takes from the tree's spans must stay
				// as long as the line it keeps.
				t.Fatalf("line %d, from Next: the tree is of another copy of the line", line.Num)
			}
			fmt.Fprintf(&b, " %v", tree.Nodes)
			if got, want := src.Annotation(), annotate(tree, src.Dialect()); got != want {
				t.Fatalf("line %d: Annotation is %v, want %v", line.Num, got, want)
			}
		} else if note := src.Annotation(); note != nil {
			t.Fatalf("line %d, blank or bad: Annotation is %v, want nil", line.Num, note)
		}
		b.WriteString(" " + src.Dialect().String() + "\n")
	}
}

func TestParallelSourceAsSerial(t *testing.T) {
	cores(t, 4)
	old := batchBytes
	defer func() { batchBytes = old }()
	long := `{"type":"message","message":{"role":"toolResult","content":"` + strings.Repeat("x", 600<<10) + `"}}`
	huge := `{"type":"message","message":{"role":"toolResult","content":"` + strings.Repeat("y", maxKeptLong+1) + `"}}` // in memory of its own
	inputs := map[string]string{
		"empty":           "",
		"one":             `{"a":1}`,
		"no final LF":     `{"type":"session","version":3,"id":"s"}` + "\n" + `{"a":1}`,
		"blank and bad":   "{\"a\":1}\n\n   \n{bad\n{\"a\":1}{\"b\":2}\n{\"s\":\"\xff\"}\n[1,2]\n",
		"long lines":      long + "\n" + `{"a":1}` + "\n" + long + "\n" + long,
		"huge lines":      huge + "\n" + `{"a":1}` + "\n" + huge + "\n" + long + "\n" + huge,
		"many short ones": strings.Repeat(`{"type":"message","id":"x","message":{"role":"user","content":"hi"}}`+"\n", 5000),
	}
	if files, _ := filepath.Glob(filepath.Join(corpusDir, "*", "*.jsonl")); len(files) > 0 {
		for _, f := range files[:min(len(files), 6)] {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			inputs[f] = string(data)
		}
	}
	for _, size := range []int{1, 100, 256 << 10} {
		batchBytes = size
		for name, in := range inputs {
			var badSerial, badParallel []int
			want, err := sourceRecord(t, []byte(in), 1, func(e *BadLineError) error { badSerial = append(badSerial, e.Line); return nil })
			if err != nil {
				t.Fatal(err)
			}
			got, err := sourceRecord(t, []byte(in), 3, func(e *BadLineError) error { badParallel = append(badParallel, e.Line); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("%s, batches of %d bytes: a Parallel Source gave other lines or trees than a serial one", name, size)
			}
			if !slices.Equal(badSerial, badParallel) {
				t.Errorf("%s, batches of %d bytes: bad lines %v, serially %v", name, size, badParallel, badSerial)
			}
			for _, view := range []bool{false, true} {
				for _, keeps := range []bool{false, true} {
					for _, parseIf := range []func([]byte) bool{nil, oddLength} {
						var badSerial, badParallel []int
						want, err := sourceRecordWith(t, []byte(in), 1, func(e *BadLineError) error { badSerial = append(badSerial, e.Line); return nil }, view, keeps, parseIf)
						if err != nil {
							t.Fatal(err)
						}
						got, err := sourceRecordWith(t, []byte(in), 3, func(e *BadLineError) error { badParallel = append(badParallel, e.Line); return nil }, view, keeps, parseIf)
						if err != nil {
							t.Fatal(err)
						}
						if got != want || !slices.Equal(badSerial, badParallel) {
							t.Errorf("%s, batches of %d bytes, view %v, KeepLines %v, ParseIf %v: a Parallel Source gave other lines, trees or bad lines than a serial one", name, size, view, keeps, parseIf != nil)
						}
					}
				}
			}
		}
	}
}

// oddLength is a ParseIf function that takes some lines and leaves others,
// blank ones among them.
func oddLength(line []byte) bool { return len(line)%2 == 1 }

// TestParallelSourceStops checks that an error from onBad stops a Parallel
// Source as it stops a serial one, and that Close then leaves no goroutine
// behind, also when the caller stops in the middle of the input.
func TestParallelSourceStops(t *testing.T) {
	cores(t, 4)
	old := batchBytes
	defer func() { batchBytes = old }()
	batchBytes = 64
	before := runtime.NumGoroutine()
	in := strings.Repeat(`{"a":1}`+"\n", 1000) + "{bad\n" + strings.Repeat(`{"a":1}`+"\n", 100000)
	stop := errors.New("strict")
	src := NewSource("in", strings.NewReader(in), Generic, func(*BadLineError) error { return stop })
	src.Parallel(2)
	n := 0
	var err error
	for err == nil {
		_, _, err = src.Next()
		n++
	}
	if !errors.Is(err, stop) || n != 1001 {
		t.Errorf("stopped after %d lines with %v, want 1001 with the onBad error", n, err)
	}
	src.Close()
	src.Close() // a second Close is harmless

	// A caller that gives up early.
	src = NewSource("in", strings.NewReader(in), Generic, func(*BadLineError) error { return nil })
	src.Parallel(2)
	if _, _, err := src.Next(); err != nil {
		t.Fatal(err)
	}
	src.Close()

	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left running after Close", n-before)
	}
}

// TestParallelSourceCloseOnLivePipe checks that a run stopping on an
// error does not wait for more input: the reader may be blocked on a pipe
// that stays open (tail -f | bs extract --strict).
func TestParallelSourceCloseOnLivePipe(t *testing.T) {
	cores(t, 4)
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"a":1}` + "\n{bad\n")) // then nothing more, and no EOF
	stop := errors.New("strict")
	src := NewSource("in", pr, Generic, func(*BadLineError) error { return stop })
	src.Parallel(2)
	done := make(chan error, 1)
	go func() {
		var err error
		for err == nil {
			_, _, err = src.Next()
		}
		src.Close()
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, stop) {
			t.Errorf("stopped with %v, want the onBad error", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Next or Close waited for input that never came")
	}
}

// TestParallelSourcePartialLine checks that a whole line is handed out
// while the next one is still being written on a live pipe.
func TestParallelSourcePartialLine(t *testing.T) {
	cores(t, 4)
	pr, pw := io.Pipe()
	defer pw.Close()
	go pw.Write([]byte(`{"a":1}` + "\n" + `{"b":`)) // the second line unfinished
	src := NewSource("in", pr, Generic, func(*BadLineError) error { return nil })
	src.Parallel(2)
	defer src.Close()
	got := make(chan string, 1)
	go func() {
		line, _, err := src.Next()
		if err != nil {
			got <- err.Error()
			return
		}
		got <- string(line.Body)
	}()
	select {
	case g := <-got:
		if g != `{"a":1}` {
			t.Errorf("first line %q", g)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a whole line was held back while the next one was unfinished")
	}
}

// TestParallelSourceMemory checks that reading ahead keeps memory bounded
// by a few long lines: lines a batch is done with are not held, and trees
// count (lines of many small values make trees many times their size).
func TestParallelSourceMemory(t *testing.T) {
	cores(t, 4)
	measure := func(data []byte, workers int) uint64 {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		src := NewSource("in", bytes.NewReader(data), Generic, func(*BadLineError) error { return nil })
		src.Parallel(workers)
		defer src.Close()
		var peak uint64
		for n := 0; ; n++ {
			_, _, err := src.Next()
			if err != nil {
				break
			}
			if n%3 == 2 {
				runtime.GC()
				var m runtime.MemStats
				runtime.ReadMemStats(&m)
				peak = max(peak, m.HeapAlloc-min(m.HeapAlloc, before.HeapAlloc))
			}
		}
		return peak
	}
	lines := func(line string, n int) []byte {
		return []byte(strings.Repeat(line+"\n", n))
	}
	const w = 2
	// Long strings: the tree is small, the line is what counts.
	text := lines(`{"type":"message","text":"`+strings.Repeat("x", 4<<20)+`"}`, 24)
	serial, parallel := measure(text, 1), measure(text, w)
	t.Logf("4 MiB lines: live heap beyond the input: serial %d MiB, %d workers %d MiB", serial>>20, w, parallel>>20)
	if limit := uint64((w+2)*(4<<20) + parseBudget + serial); parallel > limit {
		t.Errorf("%d workers held %d MiB of 4 MiB lines, over %d MiB", w, parallel>>20, limit>>20)
	}
	// Many small values, lines of 128 KiB with trees of 5.6 MiB: w+1
	// batches of up to two lines, and w trees growing (briefly twice
	// their size while append copies them).
	values := lines("["+strings.Repeat("0,", 64<<10)+"0]", 60)
	serial, parallel = measure(values, 1), measure(values, w)
	t.Logf("lines of 64k values: serial %d MiB, %d workers %d MiB", serial>>20, w, parallel>>20)
	if parallel > uint64(2*(w+1)+2*w)*serial+parseBudget {
		t.Errorf("%d workers held %d MiB of trees, serially %d MiB", w, parallel>>20, serial>>20)
	}
}

// cores lets the test use n parsers whatever the machine: Parallel takes
// no more than GOMAXPROCS.
func cores(t *testing.T, n int) {
	old := runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// TestParallelSourceCloneOutlivesBatch: a tree from Next that the caller
// clones stays valid (Tree.Clone), its member names too, after the batch
// it came in is reused for later lines.
func TestParallelSourceCloneOutlivesBatch(t *testing.T) {
	cores(t, 2)
	old := batchBytes
	defer func() { batchBytes = old }()
	batchBytes = 64
	var in bytes.Buffer
	for i := range 200 {
		fmt.Fprintf(&in, `{"type":"user","n%03d":%d}`+"\n", i, i)
	}
	src := NewSource("in", &in, Generic, func(*BadLineError) error { return nil })
	src.Parallel(2)
	defer src.Close()
	_, tree, err := src.Next()
	if err != nil {
		t.Fatal(err)
	}
	kept := tree.Clone()
	for {
		if _, _, err := src.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if k := kept.Get(0, "n000"); k < 0 || kept.Key(k) != "n000" || kept.Get(0, "type") < 0 {
		t.Fatalf("the kept tree's member names changed: %q", kept.Nodes[1].Name)
	}
}

// TestParallelSourceBatchLines: short lines make batches of at most
// batchLines lines, however few bytes they hold: what a batch keeps for
// each line (its place, tree and error) is reused with the batch.
func TestParallelSourceBatchLines(t *testing.T) {
	cores(t, 2)
	in := strings.Repeat("{}\n", 3*batchLines+5)
	src := NewSource("in", strings.NewReader(in), Generic, func(*BadLineError) error { return nil })
	src.Parallel(2)
	defer src.Close()
	n, most := 0, 0
	for {
		_, _, err := src.NextView()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
		most = max(most, len(src.pipe.cur.lines))
	}
	if n != 3*batchLines+5 || most > batchLines {
		t.Fatalf("%d lines, batches of up to %d; want %d lines, batches of at most %d", n, most, 3*batchLines+5, batchLines)
	}
}
