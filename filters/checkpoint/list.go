package checkpoint

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteKeys prints each session key of d with its number of checkpoints
// and the latest one's id, as bs checkpoint list does: tab-separated, or
// one JSON object a line.
func (d Dir) WriteKeys(w io.Writer, asJSON bool) error {
	keys, err := d.Keys()
	if err != nil {
		return err
	}
	for _, k := range keys {
		list, err := Dir{Root: d.Root}.List(k)
		if err != nil {
			return err
		}
		latest := ""
		if len(list) > 0 {
			latest = list[len(list)-1].ID
		}
		if asJSON {
			b, _ := json.Marshal(map[string]any{"key_dir": k, "checkpoints": len(list), "latest": latest})
			fmt.Fprintf(w, "%s\n", b)
		} else {
			fmt.Fprintf(w, "%s\t%d\t%s\n", k, len(list), latest)
		}
	}
	return nil
}

// WriteList prints the checkpoints of key, oldest first, as bs
// checkpoint list does: id, time, trigger, input tokens, utilization and
// path, tab-separated, or one JSON object a line. A checkpoint that
// cannot be read goes to unreadable and is skipped.
func (d Dir) WriteList(w io.Writer, key string, asJSON bool, unreadable func(error)) error {
	list, err := d.List(key)
	if err != nil {
		return err
	}
	for _, e := range list {
		cp, err := readFile(e.Path)
		if err != nil {
			unreadable(err)
			continue
		}
		m := cp.Meta
		if asJSON {
			b, _ := json.Marshal(map[string]any{"checkpoint_id": m.CheckpointID, "created_at": m.CreatedAt, "trigger": m.Trigger,
				"input_tokens": m.TokenUsage.InputTokens, "utilization": m.TokenUsage.Utilization, "path": e.Path})
			fmt.Fprintf(w, "%s\n", b)
		} else {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%.2f\t%s\n", m.CheckpointID, m.CreatedAt, m.Trigger, m.TokenUsage.InputTokens, m.TokenUsage.Utilization, e.Path)
		}
	}
	return nil
}
