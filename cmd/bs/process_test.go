package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// bsBinary is the bs command the tests run as a separate process: the test
// binary itself, which TestMain turns into bs when called so.
func bsBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bs")
	if err := os.Symlink(os.Args[0], bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

func bsEnv(dir string) []string {
	return append(os.Environ(), "XDG_STATE_HOME="+filepath.Join(dir, "state"), "BS_STORE="+filepath.Join(dir, "store"),
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "BS_NOW=2026-02-20T17:30:00Z")
}

const stressHeader = `{"type":"session","version":3,"id":"stress","timestamp":"2026-02-20T10:00:00.000Z","cwd":"/"}` + "\n"

// stressLine is an OpenClaw tool result of about size bytes, unique to i.
func stressLine(rng *rand.Rand, i, size int) []byte {
	text := make([]byte, size)
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789 .,;:-_"
	for j := range text {
		text[j] = alphabet[rng.IntN(len(alphabet))]
	}
	return fmt.Appendf(nil, `{"type":"message","id":"w%d","parentId":null,"timestamp":"2026-02-20T10:00:01.000Z","message":{"role":"toolResult","toolCallId":"c%d","toolName":"bash","content":[{"type":"text","text":"%d %s"}],"isError":false}}`+"\n", i, i, i, text)
}
