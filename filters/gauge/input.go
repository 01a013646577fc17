package gauge

import (
	"io"
	"os"

	"github.com/bstools/bs/internal/spool"
)

// MeasureInput gauges input r, named name ("-" for standard input), as
// bs gauge does: a regular file from its end (MeasureFile), which skips
// most lines, unless every line must be read, to copy it to tee (not nil)
// or to check it (everyLine); then as a stream (Measure). Standard input
// redirected from a file is read from its end too, and left at its end,
// as a stream would leave it. A file read as a stream whose path leaves
// the line the reading started from (Result.OffPath) is gauged again from
// its end, along the path. streamed says the result is a stream's
// (Measure's), whose OffPath then says it could not be read again so.
func MeasureInput(name string, r io.Reader, tee io.Writer, everyLine bool, opt Options) (res Result, streamed bool, err error) {
	f, ok := r.(*os.File)
	if name == "-" {
		f, _, ok = spool.Regular(r)
	}
	if ok && tee == nil && !everyLine {
		res, err = MeasureFile(f, opt)
		if name == "-" {
			f.Seek(0, io.SeekEnd)
		}
		return res, false, err
	}
	res, err = Measure(name, r, tee, opt)
	if f, ok := r.(*os.File); ok && err == nil && res.OffPath {
		// A file read as a stream: every line was read; the figure is
		// the path's, from the end.
		if info, serr := f.Stat(); serr == nil && info.Mode().IsRegular() {
			res, err = MeasureFile(f, opt)
		}
	}
	return res, true, err
}
