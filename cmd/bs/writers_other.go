//go:build !linux

package main

import "io"

// openWriters cannot see other processes' descriptors on this system: the
// runtime's lock and the catch-up after the rename are the only guards.
func openWriters(dev, ino uint64) []string { return nil }

// outputPath would name the file standard output is redirected to; this
// system does not say, so the search index records no transcript for rows
// of a run that writes standard output.
func outputPath(io.Writer) string { return "" }
