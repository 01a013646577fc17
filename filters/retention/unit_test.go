package retention_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/checkpoint"
	"github.com/bstools/bs/filters/retention"
)

// rolled is a roll marker line over blobs.
func rolled(blobs ...blobstore.Digest) string {
	var names []string
	for _, d := range blobs {
		names = append(names, `"`+d.String()+`"`)
	}
	return `{"_rolled":{"by":"bs roll"},"_evicted":{"blobs":[` + strings.Join(names, ",") + `],"bytes":1,"skip":0}}` + "\n"
}

func extracted(d blobstore.Digest) string {
	return `{"role":"tool","content":"[[extracted-x]]","__id":"x","_extracted":{"/content":{"blob":"` + d.String() + `","bytes":3}}}` + "\n"
}

func TestNestedReferences(t *testing.T) {
	ctx := context.Background()
	store := newClockStore(t0)
	deep, _ := store.Put(ctx, []byte(`"deep value"`))
	// A chunk holding an extracted line, inside a chunk, inside an
	// archive holder split between two blobs mid-line.
	inner, _ := store.Put(ctx, []byte(extracted(deep)))
	outer, _ := store.Put(ctx, []byte(`{"role":"user","content":"hi"}`+"\n"+rolled(inner)))
	holder := `{"role":"user","content":"task"}` + "\n" + rolled(outer)
	h1, _ := store.Put(ctx, []byte(holder[:40]))
	h2, _ := store.Put(ctx, []byte(holder[40:]))
	orphan, _ := store.Put(ctx, []byte("orphan"))
	line := fmt.Sprintf(`{"role":"assistant","content":"[archived turn]","_archived":{"id":"h1","depth":1,"blobs":["%s","%s"],"bytes":%d,"from":0}}`+"\n", h1, h2, len(holder))
	marks := retention.NewMarks(store)
	sc, err := marks.Transcript(ctx, "live", strings.NewReader(`{"role":"user","content":"task"}`+"\n"+line))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []blobstore.Digest{deep, inner, outer, h1, h2} {
		if !marks.Blob(d) {
			t.Errorf("%s not marked", d)
		}
	}
	if marks.Blob(orphan) || marks.Len() != 5 || !marks.Holder("h1") || marks.Holder("h2") {
		t.Errorf("marks: %d blobs, orphan %v", marks.Len(), marks.Blob(orphan))
	}
	if sc.Lines != 2 || sc.Nested != 4 {
		t.Errorf("scan %+v", sc)
	}
}

func TestUnreadableChunkAborts(t *testing.T) {
	ctx := context.Background()
	store := newClockStore(t0)
	gone := blobstore.Sum([]byte("never stored"))
	marks := retention.NewMarks(store)
	_, err := marks.Transcript(ctx, "s.jsonl", strings.NewReader("{}\n"+rolled(gone)))
	var ue *retention.UnreadableError
	if !errors.As(err, &ue) || ue.Line != 2 || ue.Blob != gone || !errors.Is(err, blobstore.ErrNotFound) {
		t.Fatalf("got %v, want an UnreadableError for line 2", err)
	}
	// A value that is only extracted is not read: its absence is no error.
	if _, err := marks.Transcript(ctx, "t.jsonl", strings.NewReader(extracted(gone))); err != nil || !marks.Blob(gone) {
		t.Fatalf("extracted reference: %v, marked %v", err, marks.Blob(gone))
	}
}

func TestDamagedReferenceAborts(t *testing.T) {
	for _, line := range []string{
		`{"_extracted":{"/content":{"blob":"sha256:zz","bytes":3}}}`,
		`{"_extracted":"x"}`,
		`{"_evicted":{"blobs":"nope"}}`,
		`{"_archived":{"id":"a","blobs":[],"bytes":0}}`,
	} {
		_, err := retention.NewMarks(newClockStore(t0)).Transcript(context.Background(), "s", strings.NewReader("{}\n"+line+"\n"))
		var de *retention.DamagedError
		if !errors.As(err, &de) || de.Line != 2 {
			t.Errorf("%s: got %v, want a DamagedError on line 2", line, err)
		}
	}
}

func TestBadLinesSkipped(t *testing.T) {
	store := newClockStore(t0)
	d, _ := store.Put(context.Background(), []byte(`"v"`))
	sc, err := retention.NewMarks(store).Transcript(context.Background(), "s", strings.NewReader(`{"_extracted": oops`+"\n"+extracted(d)+`{"a":1}{"_extracted"`+"\n"))
	if err != nil || sc.BadLines != 2 || sc.Refs != 1 {
		t.Fatalf("scan %+v, %v", sc, err)
	}
}

// TestCutLinesKeepTheirBlobs: a line cut short (or damaged) is no JSON,
// but each blob it names is kept, and a chunk it names is read for the
// references its lines hold, as if the line were whole.
func TestCutLinesKeepTheirBlobs(t *testing.T) {
	ctx := context.Background()
	store := newClockStore(t0)
	value, _ := store.Put(ctx, []byte(`"a value"`))
	deep, _ := store.Put(ctx, []byte(`"deep value"`))
	chunk, _ := store.Put(ctx, []byte(extracted(deep)))
	orphan, _ := store.Put(ctx, []byte("orphan"))
	gone := blobstore.Sum([]byte("never stored"))
	cut := func(line string) string { return line[:len(line)-4] + "\n" }
	in := "{}\n" + cut(extracted(value)) + cut(rolled(chunk, gone))
	marks := retention.NewMarks(store)
	sc, err := marks.Transcript(ctx, "s", strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []blobstore.Digest{value, chunk, deep, gone} {
		if !marks.Blob(d) {
			t.Errorf("%s not marked", d)
		}
	}
	if marks.Blob(orphan) || sc.BadLines != 2 {
		t.Errorf("orphan marked %v, scan %+v", marks.Blob(orphan), sc)
	}
}

// A writer re-uses an old unreferenced blob after the sweep listed it:
// the look just before Delete keeps it.
func TestReusedDuringSweepKept(t *testing.T) {
	ctx := context.Background()
	store := newClockStore(t0)
	d, _ := store.Put(ctx, []byte("old, then re-used"))
	other, _ := store.Put(ctx, []byte("old"))
	store.advance(48 * time.Hour)
	var mu sync.Mutex
	stats := 0
	store.onStat = func(x blobstore.Digest) {
		mu.Lock()
		defer mu.Unlock()
		if x == d {
			stats++
			if stats == 1 {
				store.Put(ctx, []byte("old, then re-used"))
			}
		}
	}
	res, err := retention.Sweep(ctx, store, retention.NewMarks(store), retention.SweepOptions{Cutoff: store.now.Add(-24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if ok, _ := store.Has(ctx, d); !ok || len(res.Removed) != 1 || res.Removed[0].Name != other.String() || res.Recent != 1 {
		t.Fatalf("re-used blob present %v; result %+v", ok, res)
	}
}

func TestHolders(t *testing.T) {
	const (
		live  = "0123456789abcdef"
		dead  = "fedcba9876543210"
		fresh = "1111111111111111"
		read  = "2222222222222222" // named like a holder, but read as a session
	)
	dir := t.TempDir()
	old := time.Now().Add(-48 * time.Hour)
	// Files not named like a holder id stay whatever their age: a live
	// session kept beside the holders, an id in capitals, a short one.
	for _, name := range []string{live + ".jsonl", dead + ".jsonl", fresh + ".jsonl", read + ".jsonl", "notes.txt",
		"session.jsonl", "FEDCBA9876543210.jsonl", "fedcba987654321.jsonl"} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("x\n"), 0o600)
		if name != fresh+".jsonl" {
			os.Chtimes(p, old, old)
		}
	}
	store := newClockStore(t0)
	h, _ := store.Put(context.Background(), []byte("{}\n"))
	marks := retention.NewMarks(store)
	line := fmt.Sprintf(`{"_archived":{"id":"%s","depth":1,"blobs":["%s"],"bytes":3,"from":0}}`+"\n", live, h)
	if _, err := marks.Transcript(context.Background(), "s", strings.NewReader(line)); err != nil {
		t.Fatal(err)
	}
	sessions := []string{filepath.Join(dir, ".", read+".jsonl"), filepath.Join(dir, "session.jsonl")}
	cutoff := time.Now().Add(-24 * time.Hour)
	items, err := retention.Holders(dir, marks, sessions, cutoff, true)
	if err != nil || len(items) != 1 || filepath.Base(items[0].Name) != dead+".jsonl" || items[0].Bytes != 2 {
		t.Fatalf("dry run: %v %v", items, err)
	}
	if _, err := os.Stat(filepath.Join(dir, dead+".jsonl")); err != nil {
		t.Fatal("the dry run deleted a holder")
	}
	if items, err = retention.Holders(dir, marks, sessions, cutoff, false); err != nil || len(items) != 1 {
		t.Fatalf("sweep: %v %v", items, err)
	}
	left, _ := os.ReadDir(dir)
	var names []string
	for _, e := range left {
		names = append(names, e.Name())
	}
	want := "0123456789abcdef.jsonl 1111111111111111.jsonl 2222222222222222.jsonl FEDCBA9876543210.jsonl fedcba987654321.jsonl notes.txt session.jsonl"
	if strings.Join(names, " ") != want {
		t.Errorf("left %v", names)
	}
}

func TestCheckpoints(t *testing.T) {
	d := checkpoint.Dir{Root: t.TempDir()}
	for key, n := range map[string]int{"a": 7, "b": 2} {
		os.MkdirAll(d.KeyDir(key), 0o700)
		for i := 1; i <= n; i++ {
			os.WriteFile(filepath.Join(d.KeyDir(key), fmt.Sprintf("cp_%03d.yaml", i)), bytes.Repeat([]byte("y"), i), 0o600)
		}
	}
	items, err := retention.Checkpoints(d, 3, true)
	if err != nil || len(items) != 4 {
		t.Fatalf("dry run: %v %v", items, err)
	}
	if list, _ := d.List("a"); len(list) != 7 {
		t.Fatal("the dry run deleted checkpoints")
	}
	items, err = retention.Checkpoints(d, 3, false)
	if err != nil || len(items) != 4 || items[3].Bytes != 4 {
		t.Fatalf("sweep: %v %v", items, err)
	}
	a, _ := d.List("a")
	b, _ := d.List("b")
	if len(a) != 3 || a[0].ID != "cp_005" || len(b) != 2 {
		t.Errorf("left a=%v b=%v", a, b)
	}
	if items, _ := retention.Checkpoints(d, 0, false); len(items) != 0 {
		t.Error("--keep 0 deleted checkpoints")
	}
}

// A member name written with a \u escape is the same member to the tree
// (and to restore): the line must be marked, not skipped by the prefilter.
func TestEscapedMemberName(t *testing.T) {
	ctx := context.Background()
	store := newClockStore(t0)
	d, _ := store.Put(ctx, []byte(`"value"`))
	for _, name := range []string{`\u005fextracted`, `_extr\u0061cted`, `\u005Fextracted`} {
		line := strings.Replace(extracted(d), `"_extracted"`, `"`+name+`"`, 1)
		marks := retention.NewMarks(store)
		if _, err := marks.Transcript(ctx, "live", strings.NewReader(line)); err != nil {
			t.Fatal(err)
		}
		if !marks.Blob(d) {
			t.Errorf("%s: the blob is not marked", name)
		}
	}
}

// TestMarkFiles: each file is marked in turn and reported; the first that
// cannot be read stops the marking and is named.
func TestMarkFiles(t *testing.T) {
	store := new(blobstore.Mem)
	d, err := store.Put(context.Background(), []byte("value"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	live := filepath.Join(dir, "live.jsonl")
	if err := os.WriteFile(live, []byte(extracted(d)+`{"_extracted": oops`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gone := filepath.Join(dir, "gone.jsonl")
	marks := retention.NewMarks(store)
	var seen []string
	path, err := marks.Files(context.Background(), []string{live, gone, live}, func(i int, path string, sc retention.Scan) {
		seen = append(seen, fmt.Sprintf("%d %s %d", i, filepath.Base(path), sc.BadLines))
	})
	if path != gone || !errors.Is(err, os.ErrNotExist) || fmt.Sprint(seen) != "[0 live.jsonl 1]" || !marks.Blob(d) {
		t.Errorf("stopped at %q (%v) after %v; %s marked: %v", path, err, seen, d, marks.Blob(d))
	}
}
