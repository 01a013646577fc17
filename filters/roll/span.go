package roll

import (
	"strconv"
	"time"
)

// span is the evicted range an eviction note names (seed 004: "Evicted
// range: <first_timestamp> to <last_timestamp>"): the earliest and the
// latest time the evicted messages carry. Entries need not be written in
// the order of their times (a BrainSurgeon session runs backwards, Claude
// Code writes hook progress late), so the times are compared, not taken
// in file order. Messages without a time that parses are named by their
// times as written, in file order, and failing any time by their lines.
type span struct {
	lo, hi         time.Time // the earliest and latest parsed times
	loText, hiText string    // as the entries write them
	first, last    string    // in file order: times as written, else "line N"
}

func (s *span) add(l line) {
	at := l.time
	if at == "" {
		at = "line " + strconv.Itoa(l.num)
	}
	if s.first == "" {
		s.first = at
	}
	s.last = at
	t, err := time.Parse(time.RFC3339Nano, l.time)
	if err != nil {
		return
	}
	if s.loText == "" || t.Before(s.lo) {
		s.lo, s.loText = t, l.time
	}
	if s.hiText == "" || t.After(s.hi) {
		s.hi, s.hiText = t, l.time
	}
}

// ends are the two ends of the range as the note names them.
func (s *span) ends() (first, last string) {
	if s.loText != "" {
		return s.loText, s.hiText
	}
	return s.first, s.last
}
