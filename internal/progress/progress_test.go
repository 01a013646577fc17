//go:build unix

package progress

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestProgressNeverGoesBack: a count reported out of order does not move
// the bar back.
func TestProgressNeverGoesBack(t *testing.T) {
	_, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	t.Setenv("TERM", "xterm")
	p := New(tty, "test", 100, false, "items")
	if p == nil {
		t.Fatal("no progress on a terminal")
	}
	defer p.Done()
	p.Set(50)
	p.Set(20)
	p.add(0)
	if p.n != 50 {
		t.Errorf("count %d after 50 then 20, want 50", p.n)
	}
	// One at a time: a second one draws nothing.
	if q := New(tty, "other", 1, false, "items"); q != nil {
		t.Error("two progress lines at once")
	}
}

// TestNotOnAPipe: nothing is drawn where standard error is not a terminal,
// nor on a dumb one.
func TestNotOnAPipe(t *testing.T) {
	var buf bytes.Buffer
	if p := New(&buf, "test", 10, false, "items"); p != nil {
		t.Error("progress on a buffer")
	}
	_, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	t.Setenv("TERM", "dumb")
	if p := New(tty, "test", 10, false, "items"); p != nil {
		t.Error("progress on a dumb terminal")
	}
}

// TestFileDrawsAndClears: File shows a file's offset as bytes after Delay
// and clears its line when stopped.
func TestFileDrawsAndClears(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	t.Setenv("TERM", "xterm")
	old := Delay
	t.Cleanup(func() { Delay = old })
	Delay = 10 * time.Millisecond
	f, err := os.CreateTemp(t.TempDir(), "f")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(bytes.Repeat([]byte("x"), 1<<20))
	f.Seek(512<<10, 0)
	shown := make(chan []byte)
	go func() {
		var all []byte
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			all = append(all, buf[:n]...)
			if err != nil {
				shown <- all
				return
			}
		}
	}()
	stop := File(tty, "reading", f)
	time.Sleep(300 * time.Millisecond)
	stop()
	tty.Close()
	out := string(<-shown)
	if !bytes.Contains([]byte(out), []byte("reading")) || !bytes.Contains([]byte(out), []byte("B/1.0 MB")) {
		t.Errorf("no bytes progress drawn: %q", out)
	}
	if !bytes.HasSuffix(bytes.TrimRight([]byte(out), " "), []byte("\r")) && !bytes.Contains([]byte(out), []byte("\r ")) {
		t.Errorf("the line is not cleared: %q", out)
	}
}

// TestPhases: a bar a phase, made at its first report with its label and
// total, the last phase's done at the next phase and by Done; nothing, and
// no panic, where nothing is drawn.
func TestPhases(t *testing.T) {
	var buf bytes.Buffer
	quiet := &Phases{W: &buf, Label: func(ph string) string { return "bs test: " + ph }, Unit: "items"}
	quiet.Set("list", 1, -1)
	quiet.Done()
	if buf.Len() > 0 {
		t.Errorf("drawn on a buffer: %q", buf.String())
	}
	_, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer tty.Close()
	t.Setenv("TERM", "xterm")
	p := &Phases{W: tty, Label: func(ph string) string { return "bs test: " + ph }, Unit: "items"}
	p.Set("list", 3, -1)
	list := p.bar
	if list == nil || list.desc != "bs test: list" || list.total != -1 || list.n != 3 {
		t.Fatalf("the list phase's bar: %+v", list)
	}
	p.Set("list", 5, -1)
	if p.bar != list || list.n != 5 {
		t.Errorf("a second report of the phase made a new bar or was lost")
	}
	p.Set("sweep", 1, 10)
	if !list.closed || p.bar == list || p.bar.desc != "bs test: sweep" || p.bar.total != 10 {
		t.Errorf("the next phase: the last bar closed %v, new bar %+v", list.closed, p.bar)
	}
	sweep := p.bar
	p.Done()
	if !sweep.closed {
		t.Error("Done left the bar of the phase under way")
	}
	if q := New(tty, "after", 1, false, "items"); q == nil {
		t.Error("a bar is still counted as drawn after Done")
	} else {
		q.Done()
	}
}
