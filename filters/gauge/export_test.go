package gauge

import "io"

// MeasureRuntime estimates the context of the transcript in r as its
// runtime would load it, ignoring every usage (Options.runtime).
func MeasureRuntime(name string, r io.Reader, opt Options) (Result, error) {
	opt.runtime = true
	return Measure(name, r, nil, opt)
}
