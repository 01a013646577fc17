package linecheck

import (
	"io"
	"os"

	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/spool"
)

// Check is what Run found of an input besides the bad lines already
// warned about one by one.
type Check struct {
	// Detected is what the input's first lines read as when a format was
	// forced and they read as another: a filter finds none of its entries.
	// Unknown otherwise.
	Detected transcript.Dialect
	// Unwarned counts the bad lines past those warned about.
	Unwarned int
	// NoTranscript says that none of the input's Lines is a valid JSON
	// entry (told only of a whole input that f read without error).
	NoTranscript bool
	Lines        int
}

// Run runs f over the transcript r, named name, counting the lines f
// reports to b.Warn, and says what the warnings of its bad lines left out,
// whether a forced format (not transcript.Unknown) matches it, and
// whether it held no valid JSON line at all (when r is the whole of it).
// f reads the reader it is given, which counts the lines of r unless r is
// a regular file read from its start (counted again only if it has bad
// lines: a filter may read it twice, or seek in it, so it stays an
// *os.File).
func (b *BadLines) Run(name string, r io.Reader, format transcript.Dialect, whole bool, f func(io.Reader) error) (Check, error) {
	var chk Check
	fc := b.start(name)
	var lc *counter
	if _, _, ok := spool.Regular(r); !ok {
		lc = newCounter(r, format != transcript.Unknown)
		r = lc
	}
	err := f(r)
	if err == nil && format != transcript.Unknown {
		if d := transcript.DetectIn(head(r, lc)); d != transcript.Unknown && d != format {
			chk.Detected = d
		}
	}
	bad, warned := b.end(fc)
	chk.Unwarned = bad - warned
	if err != nil || bad == 0 || !whole {
		return chk, err
	}
	if lc != nil {
		chk.Lines = lc.total()
	} else {
		chk.Lines = countFile(r.(*os.File))
	}
	chk.NoTranscript = bad >= chk.Lines
	return chk, nil
}

// head is the first sniffBytes of the input: what lc kept, or read again
// from the file r.
func head(r io.Reader, lc *counter) []byte {
	if lc != nil {
		return lc.head
	}
	h := make([]byte, sniffBytes)
	n, _ := r.(*os.File).ReadAt(h, 0)
	return h[:n]
}
