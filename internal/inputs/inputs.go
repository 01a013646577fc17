// Package inputs runs a command over its transcripts as every bs filter
// takes them: standard input, each named file into standard output ("-"
// being standard input), or each named file rewritten in place
// (internal/inplace). A file that fails is an error of its own and the
// run goes on to the next, unless the failure stops the run (StopsRun);
// what each input held is checked as it is read (internal/linecheck).
//
// It says nothing to the user itself: the command words what Checked and
// Refused are given.
package inputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/bstools/bs/filters/rules"
	"github.com/bstools/bs/filters/transcript"
	"github.com/bstools/bs/internal/inplace"
	"github.com/bstools/bs/internal/linecheck"
	"github.com/bstools/bs/internal/output"
	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/spool"
)

// Inputs are a command's transcripts and how it goes over them.
type Inputs struct {
	Files  []string // the named files; none is standard input
	Stdin  io.Reader
	Stdout io.Writer
	// Format is the dialect --format forces, or transcript.Unknown to
	// detect it.
	Format transcript.Dialect
	// InPlace rewrites each named file under Rewrite instead of writing
	// Stdout.
	InPlace bool
	Rewrite inplace.Options
	// BadLines counts, per input, the lines that are not valid JSON that
	// the work reports to it.
	BadLines linecheck.BadLines
	// ShowReading shows on Progress how far the reading of each input
	// has got, labelled ReadLabel(path) (on a terminal: internal/progress).
	ShowReading bool
	Progress    io.Writer
	ReadLabel   func(path string) string
	// Checked is given what each input held (linecheck.Check), for the
	// command to word its warnings; an error it returns is the input's.
	// Nil ignores it.
	Checked func(name string, chk linecheck.Check) error
	// Refused words the failure of an in-place rewrite of path; nil is a
	// file left alone on purpose, not an error. Nil keeps the failure.
	Refused func(path string, err error) error
}

// Func transforms one transcript, named name, from r to w.
type Func func(ctx context.Context, name string, r io.Reader, w io.Writer) error

// ResumingFunc is a Func that can resume an in-place run where the last
// one's output became final (inplace.Resume): it reads the file from
// start on and reports its watermark.
type ResumingFunc func(ctx context.Context, name string, start inplace.Start, r io.Reader, w io.Writer) (inplace.Final, error)

// Each runs f over standard input, over each named file into standard
// output, or over each named file in place.
func (in *Inputs) Each(ctx context.Context, f Func) error {
	return in.EachResuming(ctx, nil, func(ctx context.Context, name string, _ inplace.Start, r io.Reader, w io.Writer) (inplace.Final, error) {
		return inplace.Final{}, f(ctx, name, r, w)
	})
}

// EachResuming is Each for a filter that resumes in-place runs under res
// (nil: it does not).
func (in *Inputs) EachResuming(ctx context.Context, res *inplace.Resume, f ResumingFunc) error {
	if !in.InPlace {
		return in.Read(func(name string, r io.Reader) error {
			_, err := f(ctx, name, inplace.Start{}, r, in.Stdout)
			return err
		})
	}
	ip := in.Rewrite
	if in.ShowReading {
		ip.ReadLabel = in.ReadLabel
	}
	return EachFile(in.Files, func(path string) error {
		transform := func(start inplace.Start, r io.Reader, w io.Writer) (final inplace.Final, err error) {
			// A resumed run reads only what follows the lines it keeps.
			err = in.checked(path, r, start.From == 0, func(r io.Reader) error {
				var ferr error
				final, ferr = f(ctx, path, start, r, w)
				return ferr
			})
			return final, err
		}
		var err error
		if res != nil {
			err = inplace.RewriteResuming(ctx, path, ip, *res, transform)
		} else {
			err = inplace.Rewrite(ctx, path, ip, func(r io.Reader, w io.Writer) error {
				_, err := transform(inplace.Start{}, r, w)
				return err
			})
		}
		if err != nil && in.Refused != nil {
			err = in.Refused(path, err)
		}
		return err
	})
}

// Read runs f over standard input, or over each named file ("-" is
// standard input), for a command that only reads them.
func (in *Inputs) Read(f func(name string, r io.Reader) error) error {
	files := in.Files
	if len(files) == 0 {
		files = []string{"-"}
	}
	return EachFile(files, func(path string) error { return in.read(path, f) })
}

// read runs f over one input, "-" being standard input, and checks what
// it held.
func (in *Inputs) read(path string, f func(name string, r io.Reader) error) error {
	var r io.Reader = in.Stdin
	if path != "-" {
		fh, err := Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		r = fh
	}
	if in.ShowReading {
		label := in.ReadLabel(path)
		if fh, _, ok := spool.Regular(r); ok {
			defer progress.File(in.Progress, label, fh)()
		} else if bar := progress.New(in.Progress, label, -1, true, ""); bar != nil {
			defer bar.Done()
			r = &progress.Reader{R: r, Bar: bar}
		}
	}
	return in.checked(path, r, true, func(r io.Reader) error { return f(path, r) })
}

// checked runs f over the transcript r, named name, counting its bad
// lines (linecheck), and gives Checked what it held; whole says r is the
// whole of it.
func (in *Inputs) checked(name string, r io.Reader, whole bool, f func(io.Reader) error) error {
	chk, err := in.BadLines.Run(name, r, in.Format, whole, f)
	if in.Checked != nil {
		if cerr := in.Checked(name, chk); err == nil {
			err = cerr
		}
	}
	return err
}

// Open opens a transcript named on the command line. Its errors name the
// file and the cause ("x.jsonl: no such file or directory", "dir: is a
// directory"), the same for every command.
func Open(path string) (*os.File, error) {
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
		return nil, fmt.Errorf("%s: %w", path, syscall.EISDIR)
	}
	return f, nil
}

// FileErrors are the failures of several files, each to be shown on a
// line of its own.
type FileErrors []error

func (e FileErrors) Error() string   { return errors.Join(e...).Error() }
func (e FileErrors) Unwrap() []error { return e }

// StopsRun is whether a file's error ends the run rather than the file:
// --strict's bad line, a bad rule, an interruption, output that cannot be
// written.
func StopsRun(err error) bool {
	var bad *transcript.BadLineError
	var rule *rules.CompileError
	var write *output.WriteError
	return errors.As(err, &bad) || errors.As(err, &rule) || errors.As(err, &write) || errors.Is(err, context.Canceled)
}

// EachFile runs f for each file, on to the next after a failure unless it
// stops the run, and returns the failures (FileErrors).
func EachFile(files []string, f func(path string) error) error {
	var errs FileErrors
	for _, path := range files {
		if err := f(path); err != nil {
			if StopsRun(err) {
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
