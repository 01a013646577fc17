package transcript

// Cost reports (ccusage and its kind) total the usage recorded on every
// line of a transcript, whether or not it is still in context. A filter
// that takes lines out of the file (roll evicts them, archive collapses a
// turn) would take their spend out of those totals; the runtimes' own
// compactions never do. So for each such line that carries what the
// reports read, the filter leaves a spend record in the file: what the
// reports count, in a shape the runtime keeps out of the context, marked
// with SpentField ({"by":"bs roll"}), which the gauge reads as nothing and
// restore --all takes away (the line itself comes back from the store).
//
//   - Claude Code: the assistant line's top-level bookkeeping, and of its
//     message the id, model and usage, without type, uuid or content:
//     Claude Code loads only lines of the types it knows. A progress
//     line's subagent answer likewise, under data.message.
//   - OpenClaw/pi: an assistant message with no content that stopped
//     "aborted", which pi never sends to a model; in a tree (v2+) off the
//     path, hung from an entry before the lines taken out.
//   - Codex: the token_count events and the turn_context lines (cost
//     reports price each count by the model of the turn before it) as
//     they were: Codex never gives an event to the model, and a later
//     turn_context replaces an earlier one.
const SpentField = "_spent"

// Spends reports whether line t of dialect d carries what cost reports
// read: a spend record must stand for it when it leaves the file.
func Spends(t *Tree, d Dialect) bool {
	if len(t.Nodes) == 0 || t.Nodes[0].Kind != '{' {
		return false
	}
	if t.Get(0, SpentField) >= 0 {
		return true // a record already: it stays one
	}
	str := func(names ...string) string { return t.Str(t.Path(0, names...)) }
	switch d {
	case ClaudeCode:
		// An answer, or a subagent's answer inside a progress line.
		return str("type") == "assistant" && t.Path(0, "message", "usage") >= 0 ||
			str("type") == "progress" && t.Path(0, "data", "message", "message", "usage") >= 0
	case OpenClaw:
		return str("type") == "message" && str("message", "role") == "assistant" && t.Path(0, "message", "usage") >= 0
	case Codex:
		return str("type") == "turn_context" || str("type") == "event_msg" && str("payload", "type") == "token_count"
	}
	return false
}

// SpendRecord is the spend record that stands for line t of dialect d
// (Spends), written by by. In a pi tree, id and parent are the record's
// own id and the entry it hangs from ("" for v1 files, which have none).
// A line that is a record already is its own.
func SpendRecord(t *Tree, d Dialect, by, id, parent string) []byte {
	if t.Get(0, SpentField) >= 0 {
		return append([]byte(nil), t.Src...)
	}
	tag := append(append([]byte(`{"by":`), AppendQuote(nil, by)...), '}')
	var b []byte
	member := func(name string, raw []byte) {
		if len(b) > 1 {
			b = append(b, ',')
		}
		b = AppendQuote(b, name)
		b = append(b, ':')
		b = append(b, raw...)
	}
	copyMembers := func(obj int, skip map[string]bool) {
		t.Children(obj, func(c, _ int) {
			if k := t.Key(c); !skip[k] {
				member(k, t.Raw(c))
			}
		})
	}
	switch d {
	case Codex:
		out, err := Splice(nil, t.Src, []Edit{t.InsertMember(0, SpentField, tag)})
		if err != nil {
			return nil
		}
		return out
	case ClaudeCode:
		b = append(b, '{')
		copyMembers(0, map[string]bool{"type": true, "uuid": true, "parentUuid": true, "logicalParentUuid": true, "message": true, "data": true,
			"toolUseResult": true, "sourceToolAssistantUUID": true, "toolUseID": true, "parentToolUseID": true,
			AdjustedField: true, "_extracted": true, "__id": true, "_restored": true})
		// only keeps the members of object obj named in keep, and the
		// object kept under name sub, if any.
		only := func(obj int, keep map[string]bool, sub string, inner []byte) []byte {
			o := []byte{'{'}
			t.Children(obj, func(c, _ int) {
				k := t.Key(c)
				v := t.Raw(c)
				switch {
				case k == sub && inner != nil:
					v = inner
				case !keep[k]:
					return
				}
				if len(o) > 1 {
					o = append(o, ',')
				}
				o = AppendQuote(o, k)
				o = append(o, ':')
				o = append(o, v...)
			})
			return append(o, '}')
		}
		answer := map[string]bool{"id": true, "model": true, "usage": true}
		if m := t.Get(0, "message"); m >= 0 {
			member("message", only(m, answer, "", nil))
		} else {
			// A progress line: the subagent's answer, as it stands there.
			dm := t.Path(0, "data", "message")
			inner := only(t.Get(dm, "message"), answer, "", nil)
			member("data", append(append([]byte(`{"message":`), only(dm, map[string]bool{"type": true, "timestamp": true, "requestId": true}, "message", inner)...), '}'))
		}
	case OpenClaw:
		b = append(b, '{')
		member("type", []byte(`"message"`))
		if id != "" {
			member("id", AppendQuote(nil, id))
			if parent == "" {
				member("parentId", []byte("null"))
			} else {
				member("parentId", AppendQuote(nil, parent))
			}
		}
		if ts := t.Get(0, "timestamp"); ts >= 0 {
			member("timestamp", t.Raw(ts))
		}
		outer := b
		b = []byte{'{'}
		member("role", []byte(`"assistant"`))
		member("content", []byte(`[]`))
		t.Children(t.Get(0, "message"), func(c, _ int) {
			switch k := t.Key(c); k {
			case "provider", "model", "usage", "timestamp":
				member(k, t.Raw(c))
			}
		})
		member("stopReason", []byte(`"aborted"`))
		msg := append(b, '}')
		b = outer
		member("message", msg)
	default:
		return nil
	}
	member(SpentField, tag)
	return append(b, '}')
}
