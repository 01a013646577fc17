//go:build unix

package retention_test

import (
	"bytes"
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/retention"
)

// BenchmarkPrune100k is prune-retention over a local store of 100,000
// blobs: 50,000 referenced by 100 transcripts (some through roll chunks),
// 25,000 unreferenced and past the retention, which the sweep deletes,
// and 25,000 unreferenced and recent. The old ones share packs with the
// referenced ones, a third of each pack, so the sweep rewrites those
// packs. The target is under 5 s. The store's grace period is a
// nanosecond, so that blobs written a moment before the cutoff count as
// old.
func BenchmarkPrune100k(b *testing.B) {
	const total, sessions = 100_000, 100
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		s, err := blobstore.Open(ctx, dir, blobstore.OpenOptions{Grace: time.Nanosecond})
		if err != nil {
			b.Fatal(err)
		}
		store := s.(*blobstore.Local)
		digests := make([]blobstore.Digest, total)
		// Even blobs are referenced; of the odd ones, every other is old
		// (written first, with the referenced ones), the rest recent
		// (written after the cutoff).
		put := func(recent bool) {
			for i := range total {
				if (i%4 == 3) != recent {
					continue
				}
				data := fmt.Appendf(nil, `"stored value %d with some more bytes to compress"`, i)
				digests[i] = blobstore.Sum(data)
				if err := store.PutPending(ctx, digests[i], data); err != nil {
					b.Fatal(err)
				}
				if i%10000 == 9999 {
					if err := store.Commit(ctx); err != nil {
						b.Fatal(err)
					}
				}
			}
			if err := store.Commit(ctx); err != nil {
				b.Fatal(err)
			}
		}
		put(false)
		time.Sleep(10 * time.Millisecond)
		cutoff := time.Now()
		time.Sleep(10 * time.Millisecond)
		put(true)
		var transcripts [][]byte
		per := total / 2 / sessions
		for s := range sessions {
			var t bytes.Buffer
			for k := range per {
				d := digests[2*(s*per+k)]
				if k%50 == 0 {
					// Every 50th reference sits inside a roll chunk.
					chunk, err := store.Put(ctx, []byte(extracted(d)))
					if err != nil {
						b.Fatal(err)
					}
					t.WriteString(rolled(chunk))
					continue
				}
				fmt.Fprintf(&t, `{"type":"message","id":"m%d","message":{"role":"toolResult","content":[{"type":"text","text":"[[extracted-m%d]]"}]},"_extracted":{"/message/content/0/text":{"blob":"%s","bytes":40}}}`+"\n", k, k, d)
				t.WriteString(`{"type":"message","id":"u","message":{"role":"user","content":"a line with no reference, passed over"}}` + "\n")
			}
			transcripts = append(transcripts, t.Bytes())
		}
		// The store has been quiet a while, as one past its retention is:
		// the setup's writes are on disk, not flushed during the timing.
		syscall.Sync()
		b.StartTimer()

		start, cpu0 := time.Now(), cpuTime()
		marks := retention.NewMarks(store)
		for i, t := range transcripts {
			if _, err := marks.Transcript(ctx, fmt.Sprint(i), bytes.NewReader(t)); err != nil {
				b.Fatal(err)
			}
		}
		marked := time.Now()
		res, err := retention.Sweep(ctx, store, marks, retention.SweepOptions{Cutoff: cutoff})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Removed) != total/4 || res.Referenced < total/2 {
			b.Fatalf("removed %d, referenced %d", len(res.Removed), res.Referenced)
		}
		b.ReportMetric(float64(marked.Sub(start).Milliseconds()), "mark-ms")
		b.ReportMetric(float64(time.Since(marked).Milliseconds()), "sweep-ms")
		// CPU time, user and system: what the run costs when the
		// machine is shared and wall time measures the neighbours.
		b.ReportMetric(float64((cpuTime() - cpu0).Milliseconds()), "cpu-ms")
	}
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
