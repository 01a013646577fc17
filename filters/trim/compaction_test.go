package trim

import "testing"

// TestCompactionStartV1: a v1 compaction's firstKeptEntryIndex numbers the
// entries pi parses from 0, the header first; blank and bad lines get no
// number. Here line 1 is blank, so entry k is line k+1 from entry 1 on; an
// index past the entries keeps none of them.
func TestCompactionStartV1(t *testing.T) {
	recs := testRecords(t, []rec{{entry: true}, {}, {entry: true}, {entry: true}, {entry: true}, {entry: true}})
	for k, want := range map[int]int{0: 0, 1: 2, 3: 4, 4: 5, 9: 7} {
		if got, err := (keptStart{at: recs.n, index: k}).find(recs); err != nil || got != want {
			t.Errorf("firstKeptEntryIndex %d: context starts at line %d (%v), want %d", k, got, err, want)
		}
	}
}

// TestCompactionStartID: a compaction that names its first kept entry by
// id keeps from the last line before it with that id; an id it does not
// find keeps nothing from before it.
func TestCompactionStartID(t *testing.T) {
	recs := testRecords(t, []rec{{id: "a"}, {id: "b"}, {id: "a"}, {}, {id: "c"}})
	for id, want := range map[string]int{"a": 2, "b": 1, "c": 4, "x": 6} {
		if got, err := (keptStart{at: 5, id: id, index: -1}).find(recs); err != nil || got != want {
			t.Errorf("kept id %q: context starts at line %d (%v), want %d", id, got, err, want)
		}
	}
}

// testRecords keeps rs as a run's records.
func testRecords(t *testing.T, rs []rec) *records {
	t.Helper()
	recs, err := newRecords()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { recs.Close() })
	for i := range rs {
		if err := recs.add(&rs[i], nil); err != nil {
			t.Fatal(err)
		}
	}
	return recs
}
