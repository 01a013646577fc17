package searchqueue

import (
	"strconv"

	"github.com/bstools/bs/filters/transcript"
)

// appendQueued appends q to b as one line of a queue file: the members
// encoding/json gives a queued, in its order and with its omitempty, but
// appended by hand, as a filter queues a row for every value it moves
// (json.Encoder's reflection was a twentieth of a forced roll's CPU).
// A text that is not nil goes in as Text's raw JSON string, as the
// transcript had it (addRaw); otherwise q.Text is quoted.
func appendQueued(b []byte, q *queued, text []byte) []byte {
	r := &q.Row
	b = appendMember(append(b, '{'), "Session", r.Session)
	b = appendMember(append(b, ','), "EntryID", r.EntryID)
	b = appendMember(append(b, ','), "Pointer", r.Pointer)
	b = appendMember(append(b, ','), "Blob", r.Blob)
	b = appendMember(append(b, ','), "Kind", r.Kind)
	b = appendMember(append(b, ','), "Tool", r.Tool)
	b = appendMember(append(b, ','), "Time", r.Time)
	if r.SessionID != "" {
		b = appendMember(append(b, ','), "SessionID", r.SessionID)
	}
	if r.Store != "" {
		b = appendMember(append(b, ','), "Store", r.Store)
	}
	if text != nil {
		b = append(append(b, `,"Text":`...), text...)
	} else {
		b = appendMember(append(b, ','), "Text", r.Text)
	}
	if q.From != "" {
		b = appendMember(append(b, ','), "From", q.From)
	}
	if q.At != 0 {
		b = strconv.AppendInt(append(b, `,"At":`...), q.At, 10)
	}
	if q.Len != 0 {
		b = strconv.AppendInt(append(b, `,"Len":`...), int64(q.Len), 10)
	}
	if q.Value {
		b = append(b, `,"Value":true`...)
	}
	return append(b, "}\n"...)
}

// appendMember appends "name":value, value quoted.
func appendMember(b []byte, name, value string) []byte {
	b = append(append(append(b, '"'), name...), `":`...)
	return transcript.AppendQuote(b, value)
}
