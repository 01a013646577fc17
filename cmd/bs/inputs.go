package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/bstools/bs/filters/rules"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/linecheck"
	"github.com/bstools/bs/internal/output"
	"github.com/bstools/bs/internal/progress"
)

// openInput opens a transcript named on the command line. Its errors
// name the file and the cause ("x.jsonl: no such file or directory",
// "dir: is a directory"), the same for every command.
func openInput(path string) (*os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s: %w", path, pe.Err)
		}
		return nil, err
	}
	if info, err := f.Stat(); err == nil && info.IsDir() {
		f.Close()
		return nil, fmt.Errorf(msgIsDirectory, path)
	}
	return f, nil
}

// fileErrors are the failures of several files: each is shown on a line
// of its own (exitCode).
type fileErrors []error

func (e fileErrors) Error() string   { return errors.Join(e...).Error() }
func (e fileErrors) Unwrap() []error { return e }

// stopsRun is whether a file's error ends the run rather than the file:
// --strict's bad line, a bad rule, an interruption, output that cannot be
// written.
func stopsRun(err error) bool {
	var bad *transcript.BadLineError
	var rule *rules.CompileError
	var write *output.WriteError
	return errors.As(err, &bad) || errors.As(err, &rule) || errors.As(err, &write) || errors.Is(err, context.Canceled)
}

// eachInput runs f over standard input, or over each named file ("-" is
// standard input), for a command that only reads them. A file that
// cannot be opened or read is an error of its own and the run goes on to
// the next, as cm.each does.
func (cm *common) eachInput(f func(name string, r io.Reader) error) error {
	files := cm.files
	if len(files) == 0 {
		files = []string{"-"}
	}
	return eachFile(files, func(path string) error { return cm.readInput(path, f) })
}

// eachFile runs f for each file, on to the next after a failure unless it
// stops the run, and returns the failures.
func eachFile(files []string, f func(path string) error) error {
	var errs fileErrors
	for _, path := range files {
		if err := f(path); err != nil {
			if stopsRun(err) {
				return err
			}
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// readInput runs f over one input, "-" being standard input, and checks
// what it held (cm.checked).
func (cm *common) readInput(path string, f func(name string, r io.Reader) error) error {
	var r io.Reader = cm.stdin
	if path != "-" {
		fh, err := openInput(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	if cm.showInput {
		if fh, ok := r.(*os.File); ok && isRegularAtStart(fh) {
			defer progress.File(cm.ui.w, fmt.Sprintf(prgRead, cm.cmd, path), fh)()
		} else if bar := progress.New(cm.ui.w, fmt.Sprintf(prgRead, cm.cmd, path), -1, true, ""); bar != nil {
			defer bar.Done()
			r = &progress.Reader{R: r, Bar: bar}
		}
	}
	return cm.checked(path, r, true, func(r io.Reader) error { return f(path, r) })
}

// checked runs f over the transcript r, named name, and then says what
// the warnings of its bad lines left out, and whether it held no valid
// JSON line at all, which makes it no transcript: an error (when r is the
// whole of it).
func (cm *common) checked(name string, r io.Reader, whole bool, f func(io.Reader) error) error {
	fc := cm.badLines.Start(name)
	var lc *linecheck.Counter
	if !isRegularAtStart(r) {
		// A regular file is counted again only if it has bad lines (a
		// filter may read it twice, or seek in it: it stays an *os.File).
		lc = linecheck.NewCounter(r, cm.format != transcript.Unknown)
		r = lc
	}
	err := f(r)
	if err == nil && cm.format != transcript.Unknown {
		cm.checkFormat(name, r, lc)
	}
	bad, warned := cm.badLines.End(fc)
	if bad > warned {
		cm.ui.warnf(msgMoreBadLines, name, bad-warned)
	}
	if err != nil || bad == 0 || !whole {
		return err
	}
	var lines int
	if lc != nil {
		lines = lc.Total()
	} else {
		lines = linecheck.CountFile(r.(*os.File))
	}
	if bad >= lines {
		return fmt.Errorf(msgNotTranscript, name, lines)
	}
	return nil
}

// checkFormat warns when a forced --format is not what the transcript's
// first lines say it is: a filter would find none of its entries.
func (cm *common) checkFormat(name string, r io.Reader, lc *linecheck.Counter) {
	var head []byte
	if lc != nil {
		head = lc.Head()
	} else {
		head = make([]byte, linecheck.SniffBytes)
		n, _ := r.(*os.File).ReadAt(head, 0)
		head = head[:n]
	}
	if d := transcript.DetectIn(head); d != transcript.Unknown && d != cm.format {
		cm.ui.warnf(msgFormatNoMatch, name, cm.format, d)
	}
}

// isRegularAtStart is whether r is a regular file read from its start:
// one the filters may seek in.
func isRegularAtStart(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	off, err := f.Seek(0, io.SeekCurrent)
	return err == nil && off == 0
}
