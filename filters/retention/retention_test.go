package retention_test

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/archive"
	"github.com/bstools/bs/filters/extract"
	"github.com/bstools/bs/filters/restore"
	"github.com/bstools/bs/filters/retention"
	"github.com/bstools/bs/filters/roll"
	"github.com/bstools/bs/filters/trim"
)

// clockStore is an in-memory Store with a clock the test moves: a Put (or
// re-Put) stamps the blob with the clock's time.
type clockStore struct {
	mu   sync.Mutex
	now  time.Time
	m    map[blobstore.Digest][]byte
	mod  map[blobstore.Digest]time.Time
	gets map[blobstore.Digest]bool // recorded while record is set
	rec  bool
	// onStat, if set, runs before each Stat (to race a writer).
	onStat func(blobstore.Digest)
}

func newClockStore(now time.Time) *clockStore {
	return &clockStore{now: now, m: map[blobstore.Digest][]byte{}, mod: map[blobstore.Digest]time.Time{}, gets: map[blobstore.Digest]bool{}}
}

func (s *clockStore) Put(_ context.Context, data []byte) (blobstore.Digest, error) {
	d := blobstore.Sum(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[d]; !ok {
		s.m[d] = bytes.Clone(data)
	}
	s.mod[d] = s.now
	return d, nil
}

func (s *clockStore) Get(_ context.Context, d blobstore.Digest) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[d]
	if !ok {
		return nil, fmt.Errorf("blob %s: %w", d, blobstore.ErrNotFound)
	}
	if s.rec {
		s.gets[d] = true
	}
	return bytes.Clone(b), nil
}

func (s *clockStore) Has(_ context.Context, d blobstore.Digest) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[d]
	return ok, nil
}

func (s *clockStore) Stat(_ context.Context, d blobstore.Digest) (blobstore.Info, error) {
	if s.onStat != nil {
		s.onStat(d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.m[d]
	if !ok {
		return blobstore.Info{}, blobstore.ErrNotFound
	}
	return blobstore.Info{Size: int64(len(b)), ModTime: s.mod[d]}, nil
}

func (s *clockStore) List(_ context.Context, fn func(blobstore.Digest) error) error {
	s.mu.Lock()
	all := slices.Collect(maps.Keys(s.m))
	s.mu.Unlock()
	for _, d := range all {
		if err := fn(d); err != nil {
			return err
		}
	}
	return nil
}

func (s *clockStore) Delete(_ context.Context, d blobstore.Digest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[d]; !ok {
		return blobstore.ErrNotFound
	}
	delete(s.m, d)
	delete(s.mod, d)
	return nil
}

// snapshot is the store's blobs and their times.
func (s *clockStore) snapshot() map[blobstore.Digest]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.mod)
}

func (s *clockStore) advance(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

var t0 = time.Date(2026, 2, 20, 12, 0, 0, 0, time.UTC)

// session is a random OpenClaw v3 session: turns of a user message, tool
// calls and their results (some long), a reply; usage grows.
func session(r *rand.Rand, name string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `{"type":"session","version":3,"id":%q,"timestamp":"2026-02-18T12:00:00.000Z","cwd":"/"}`+"\n", name)
	b.WriteString(`{"type":"model_change","id":"m0","parentId":null,"timestamp":"2026-02-18T12:00:00.000Z","provider":"anthropic","modelId":"claude-sonnet-4-5"}` + "\n")
	n, usage := 0, 1000
	// ids gives the next entry its id and makes it the child of the one
	// before, as pi appends them.
	ids := func() string {
		parent := "m0"
		if n > 0 {
			parent = fmt.Sprintf("%s%05d", name, n)
		}
		n++
		return fmt.Sprintf(`"id":"%s%05d","parentId":%q`, name, n, parent)
	}
	word := func() string {
		return []string{"alpha", "beta", "gamma", "delta", "grep", "log", "error", "ok", "\\\"q\\\"", "\\n"}[r.IntN(10)]
	}
	text := func(words int) string {
		var t strings.Builder
		for range words {
			t.WriteString(word())
			t.WriteByte(' ')
		}
		return t.String()
	}
	turns := 3 + r.IntN(8)
	for i := range turns {
		fmt.Fprintf(&b, `{"type":"message",%s,"timestamp":"2026-02-18T12:%02d:00.000Z","message":{"role":"user","content":[{"type":"text","text":"task %d %s"}],"timestamp":1}}`+"\n", ids(), i%60, i, text(3))
		for c := range r.IntN(4) {
			usage += 400 + r.IntN(3000)
			call := fmt.Sprintf("call%d_%d", i, c)
			fmt.Fprintf(&b, `{"type":"message",%s,"timestamp":"2026-02-18T12:%02d:01.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"%s","thinkingSignature":"s"},{"type":"toolCall","id":"%s","name":"bash","arguments":{"command":"%s"}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":20,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"toolUse","timestamp":1}}`+"\n",
				ids(), i%60, text(r.IntN(200)), call, text(2+r.IntN(60)), usage, usage+20)
			fmt.Fprintf(&b, `{"type":"message",%s,"timestamp":"2026-02-18T12:%02d:02.000Z","message":{"role":"toolResult","toolCallId":"%s","toolName":"bash","content":[{"type":"text","text":"%s"}],"isError":false,"timestamp":1}}`+"\n",
				ids(), i%60, call, text(r.IntN(1500)))
		}
		usage += 100
		fmt.Fprintf(&b, `{"type":"message",%s,"timestamp":"2026-02-18T12:%02d:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"done %s"}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{"input":%d,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":%d},"stopReason":"stop","timestamp":1}}`+"\n",
			ids(), i%60, text(r.IntN(100)), usage, usage+5)
	}
	if r.IntN(4) == 0 {
		b.WriteString(`{"not json` + "\n") // a line retention must skip
	}
	return []byte(b.String())
}

// ops run the filters in a random order with random settings; each output
// is the next one's input.
func pipeline(t *testing.T, r *rand.Rand, store blobstore.Store, in []byte) ([]byte, []string) {
	ctx := context.Background()
	var done []string
	cur := in
	for range 1 + r.IntN(5) {
		var out bytes.Buffer
		var err error
		op := []string{"extract", "trim", "roll", "archive"}[r.IntN(4)]
		switch op {
		case "extract":
			o := extract.Defaults()
			o.Store, o.Now, o.KeepRecent, o.MinLength = store, t0, r.IntN(4), 20+r.IntN(600)
			_, err = extract.Run(ctx, "p", bytes.NewReader(cur), &out, o)
		case "trim":
			o := trim.Defaults()
			o.Store, o.Now, o.Window, o.KeepLastAssistants = store, t0, 500+r.IntN(3000), r.IntN(2)
			o.SoftMax, o.SoftHead, o.SoftTail, o.MinPrunableChars = 100+r.IntN(2000), 20, 20, r.IntN(2000)
			_, err = trim.Run(ctx, "p", bytes.NewReader(cur), &out, o)
		case "roll":
			o := roll.Defaults()
			o.Store, o.Now, o.Window, o.MinKeep = store, t0, 2000+r.IntN(20000), 2+r.IntN(6)
			_, err = roll.Run(ctx, "p", bytes.NewReader(cur), &out, o)
		case "archive":
			o := archive.Defaults()
			o.Store, o.Now, o.ToolCallThreshold, o.TokenThreshold, o.KeepRecent = store, t0, 1+r.IntN(2), r.IntN(3000), r.IntN(2)
			_, err = archive.Run(ctx, "p", bytes.NewReader(cur), &out, o)
		}
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		if !bytes.Equal(out.Bytes(), cur) {
			done = append(done, op)
		}
		cur = bytes.Clone(out.Bytes())
	}
	return cur, done
}

func restoreAll(t *testing.T, store blobstore.Store, in []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	if _, _, err := restore.Run(context.Background(), "p", bytes.NewReader(in), &out, restore.Options{All: true, Store: store}); err != nil {
		t.Fatalf("restore --all: %v", err)
	}
	return out.Bytes()
}

// TestRetentionProperty: over random transcripts run through random
// pipelines of extract, trim, roll and archive, and random stores, no blob
// a live transcript needs is ever deleted (restore --all still gives back
// what it gave before), every unreferenced blob older than the retention
// is deleted and no other, and a dry run changes nothing.
func TestRetentionProperty(t *testing.T) {
	ctx := context.Background()
	seen := map[string]int{}
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		store := newClockStore(t0)
		var live, dead [][]byte
		for s := range 1 + r.IntN(5) {
			out, ops := pipeline(t, r, store, session(r, fmt.Sprintf("s%d-", s)))
			for _, op := range ops {
				seen[op]++
			}
			if len(ops) > 1 {
				seen[strings.Join(ops[:2], "+")]++
			}
			if r.IntN(3) == 0 {
				dead = append(dead, out) // a transcript no longer named
			} else {
				live = append(live, out)
			}
			store.advance(time.Duration(r.IntN(30)) * time.Hour)
		}
		for range r.IntN(20) { // orphans, old and new
			store.Put(ctx, fmt.Appendf(nil, "orphan %d", r.Int()))
			store.advance(time.Duration(r.IntN(5)) * time.Hour)
		}
		// A live transcript re-uses an old blob: the re-Put refreshes it.
		if len(live) > 0 && r.IntN(2) == 0 {
			store.Put(ctx, []byte("orphan re-used"))
		}

		// What restore --all reads is what the live transcripts need.
		store.rec = true
		before := make([][]byte, len(live))
		for i, l := range live {
			before[i] = restoreAll(t, store, l)
		}
		store.rec = false
		need := store.gets

		olderThan := time.Duration(1+r.IntN(48)) * time.Hour
		start := store.now
		cutoff := start.Add(-olderThan)
		snap := store.snapshot()
		want := map[blobstore.Digest]bool{}
		for d, mod := range snap {
			if !need[d] && mod.Before(cutoff) {
				want[d] = true
			}
		}

		marks := retention.NewMarks(store)
		for i, l := range live {
			if _, err := marks.Transcript(ctx, fmt.Sprint(i), bytes.NewReader(l)); err != nil {
				t.Fatalf("seed %d: mark: %v", seed, err)
			}
		}
		for d := range need {
			if !marks.Blob(d) {
				t.Fatalf("seed %d: %s is needed by restore --all but not marked", seed, d)
			}
		}

		// A dry run lists exactly what would go and changes nothing.
		dry, err := retention.Sweep(ctx, store, marks, retention.SweepOptions{Cutoff: cutoff, DryRun: true, Workers: 1 + r.IntN(8)})
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(store.snapshot(), snap) {
			t.Fatalf("seed %d: the dry run changed the store", seed)
		}
		checkRemoved(t, seed, "dry run", dry, want)

		res, err := retention.Sweep(ctx, store, marks, retention.SweepOptions{Cutoff: cutoff, Workers: 1 + r.IntN(8)})
		if err != nil {
			t.Fatal(err)
		}
		checkRemoved(t, seed, "sweep", res, want)
		for d := range snap {
			if _, err := store.Stat(ctx, d); (err == nil) == want[d] {
				t.Fatalf("seed %d: %s present %v, want deleted %v", seed, d, err == nil, want[d])
			}
		}
		if res.Listed != len(snap) || res.Referenced+res.Recent+len(res.Removed) != len(snap) {
			t.Errorf("seed %d: counts %+v do not add up to %d blobs", seed, res, len(snap))
		}
		for i, l := range live {
			if after := restoreAll(t, store, l); !bytes.Equal(after, before[i]) {
				t.Fatalf("seed %d: restore --all of a live transcript changed after the sweep", seed)
			}
		}
	}
	// The pipelines must have exercised every filter and some nesting.
	for _, op := range []string{"extract", "trim", "roll", "archive"} {
		if seen[op] == 0 {
			t.Errorf("no pipeline changed anything with %s", op)
		}
	}
	nested := 0
	for k, n := range seen {
		if strings.HasSuffix(k, "+roll") || strings.HasSuffix(k, "+archive") {
			nested += n
		}
	}
	if nested == 0 {
		t.Error("no pipeline rolled or archived what an earlier filter had changed")
	}
	t.Logf("pipelines: %v", seen)
}

func checkRemoved(t *testing.T, seed uint64, what string, res retention.SweepResult, want map[blobstore.Digest]bool) {
	t.Helper()
	got := map[string]bool{}
	var bytes int64
	for _, it := range res.Removed {
		got[it.Name] = true
		bytes += it.Bytes
	}
	if bytes != res.Bytes {
		t.Errorf("seed %d: %s: bytes %d, items sum to %d", seed, what, res.Bytes, bytes)
	}
	for d := range want {
		if !got[d.String()] {
			t.Errorf("seed %d: %s: %s is unreferenced and old but was kept", seed, what, d)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("seed %d: %s: removed %d blobs, want %d", seed, what, len(got), len(want))
	}
}
