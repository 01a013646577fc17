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
	"github.com/bstools/bs/internal/output"
	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/spool"
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
		if fh, _, ok := spool.Regular(r); ok {
			defer progress.File(cm.ui.w, fmt.Sprintf(prgRead, cm.cmd, path), fh)()
		} else if bar := progress.New(cm.ui.w, fmt.Sprintf(prgRead, cm.cmd, path), -1, true, ""); bar != nil {
			defer bar.Done()
			r = &progress.Reader{R: r, Bar: bar}
		}
	}
	return cm.checked(path, r, true, func(r io.Reader) error { return f(path, r) })
}

// checked runs f over the transcript r, named name (linecheck.Run), and
// then says what the warnings of its bad lines left out, and whether a
// forced --format matches it; one that held no valid JSON line at all
// (when r is the whole of it) is no transcript: an error.
func (cm *common) checked(name string, r io.Reader, whole bool, f func(io.Reader) error) error {
	chk, err := cm.badLines.Run(name, r, cm.format, whole, f)
	if chk.Detected != transcript.Unknown {
		cm.ui.warnf(msgFormatNoMatch, name, cm.format, chk.Detected)
	}
	if chk.Unwarned > 0 {
		cm.ui.warnf(msgMoreBadLines, name, chk.Unwarned)
	}
	if err == nil && chk.NoTranscript {
		return fmt.Errorf(msgNotTranscript, name, chk.Lines)
	}
	return err
}
