package trim

import "testing"

// TestCompactionStartV1: a v1 compaction's firstKeptEntryIndex numbers the
// entries pi parses from 0, the header first; blank and bad lines get no
// number. Here line 1 is blank, so entry k is line k+1 from entry 1 on; an
// index past the entries keeps none of them.
func TestCompactionStartV1(t *testing.T) {
	recs := []rec{{entry: true}, {}, {entry: true}, {entry: true}, {entry: true}, {entry: true}}
	for k, want := range map[int]int{0: 0, 1: 2, 3: 4, 4: 5, 9: 7} {
		if got := compactionStart(recs, facts{keptIndex: k}, len(recs)); got != want {
			t.Errorf("firstKeptEntryIndex %d: context starts at line %d, want %d", k, got, want)
		}
	}
}
