// Command bs keeps LLM-agent session transcripts lean without losing a
// byte: composable filters that read JSONL on stdin and write JSONL on
// stdout. See README.md and man/bs.1.
package main

import (
	"os"

	"github.com/bstools/bs/internal/gctune"
)

// gcHeadroom is the garbage the collector lets pile up beyond a small
// live heap (internal/gctune): on a 256 MiB session bs restore --all took
// 0.74-0.82 s with it against 0.92-1.13 s without (44 to 53 MiB at the
// peak), bs extract into a store holding its values 1.06-1.11 s against
// 1.07-1.34 (56-58 to 59 MiB); 24 MiB gained little more for twice that.
const gcHeadroom = 16 << 20

func main() {
	gctune.Start(gcHeadroom)
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
