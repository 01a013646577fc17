// Command bs keeps LLM-agent session transcripts lean without losing a
// byte: composable filters that read JSONL on stdin and write JSONL on
// stdout. See README.md and man/bs.1.
package main

import "os"

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
