package gauge

import (
	"encoding/json"
	"fmt"
	"io"
)

// WriteReport prints what bs gauge says of the input name, a Result or a
// Calibration: as one JSON object that says first which file it is of
// ("-": standard input), as every per-file object bs prints does; or as
// its line, after "name: " when named (bs gauge read more than one file).
// A write that fails is w's to record, as bs's standard output does.
func WriteReport(w io.Writer, name string, r fmt.Stringer, asJSON, named bool) {
	switch {
	case asJSON:
		b, _ := json.Marshal(r)
		file, _ := json.Marshal(name)
		head := append([]byte(`{"file":`), file...)
		if len(b) > 2 {
			head = append(head, ',')
		}
		b = append(head, b[1:]...)
		fmt.Fprintf(w, "%s\n", b)
	case named:
		fmt.Fprintf(w, "%s: %s\n", name, r)
	default:
		fmt.Fprintln(w, r)
	}
}
