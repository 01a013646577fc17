package main

import (
	"bytes"
	"context"
	"testing"
)

// TestSignalMeansInterrupted: a filter stopped by a signal while it
// waited on a pipe reaches the end of its input without an error, but its
// output may be cut short, so the run exits 130 and says so; bs watch,
// which runs until it is stopped, ends cleanly.
func TestSignalMeansInterrupted(t *testing.T) {
	stopped, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		ctx  context.Context
		cmd  string
		want int
	}{
		{stopped, "extract", exitInterrupted},
		{stopped, "gauge", exitInterrupted},
		{stopped, "watch", exitOK},
		{context.Background(), "extract", exitOK},
	} {
		var stderr bytes.Buffer
		if got := exitCode(c.ctx, ui{&stderr}, c.cmd, nil); got != c.want {
			t.Errorf("%s, context done %v: exit %d, want %d", c.cmd, c.ctx.Err() != nil, got, c.want)
		}
		if said := stderr.String(); (c.want == exitInterrupted) != (said == "bs: "+c.cmd+": interrupted\n") {
			t.Errorf("%s: stderr %q", c.cmd, said)
		}
	}
}
