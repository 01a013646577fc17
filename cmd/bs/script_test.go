package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/gauge"
	"github.com/bstools/bs/internal/corpustest"
)

var update = flag.Bool("update", false, "rewrite golden files and the man page")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"bs": func() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) },
	})
}

func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		// testscript would leave an empty directory of its own in $TMPDIR
		// after every run.
		WorkdirRoot: t.TempDir(),
		Setup: func(env *testscript.Env) error {
			work := env.WorkDir
			env.Setenv("HOME", filepath.Join(work, "home"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(work, "home", ".local", "share"))
			env.Setenv("XDG_STATE_HOME", filepath.Join(work, "home", ".local", "state"))
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(work, "home", ".config"))
			env.Setenv("BS_STORE", filepath.Join(work, "store"))
			env.Setenv("BS_NOW", "2026-02-20T17:30:00Z")
			env.Setenv("CORPUS", corpustest.Dir())
			sample, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "sample"))
			env.Setenv("SAMPLE", sample)
			old, _ := filepath.Abs(filepath.Join("..", "..", "testdata", "oldstore"))
			env.Setenv("OLDSTORE", old)
			scripts, _ := filepath.Abs(filepath.Join("..", "..", "scripts"))
			env.Setenv("SCRIPTS", scripts)
			return setupS3(env)
		},
		Condition: func(cond string) (bool, error) {
			if cond == "corpus" {
				_, err := os.Stat(corpustest.Dir())
				return err == nil, nil
			}
			if cond == "s3" {
				return s3Configured()
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"blobcount": cmdBlobcount,
			"bigline":   cmdBigline,
			"linecount": cmdLinecount,
			"sizeratio": cmdSizeratio,
			"chomp":     cmdChomp,
			"deadport":  cmdDeadport,
			"damage":    cmdDamage,
			"tokens":    cmdTokens,
			"cptree":    cmdCptree,
			"agestore":  cmdAgestore,
		},
	})
}

// blobcount STORE N: the store (a directory or a URL) holds exactly N
// blobs, packed or loose.
func cmdBlobcount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: blobcount STORE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	spec := args[0]
	if !blobstore.IsURL(spec) {
		spec = ts.MkAbs(spec)
	}
	ctx := context.Background()
	n := 0
	s, err := blobstore.Open(ctx, spec, blobstore.OpenOptions{MustExist: true, IndexCache: ts.MkAbs("blobcount-index-cache")})
	if !errors.Is(err, blobstore.ErrNoStore) { // no store: no blobs, and none created
		ts.Check(err)
		ts.Check(s.List(ctx, func(blobstore.Digest) error { n++; return nil }))
	}
	if (n == want) == neg {
		ts.Fatalf("store holds %d blobs, want %d", n, want)
	}
}

// bigline FILE MIB ID: writes an OpenClaw toolResult line whose text is
// MIB mebibytes, preceded by a header and followed by four short messages.
func cmdBigline(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: bigline FILE MIB ID")
	}
	mib, err := strconv.Atoi(args[1])
	ts.Check(err)
	var b bytes.Buffer
	b.WriteString(`{"type":"session","version":3,"id":"big","timestamp":"2026-03-08T12:00:00.000Z","cwd":"/tmp"}` + "\n")
	b.WriteString(`{"type":"message","id":"` + args[2] + `","parentId":null,"timestamp":"2026-03-08T12:00:01.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"`)
	chunk := strings.Repeat("0123456789abcdef\\n\\\"quoted\\\" \\u00e9 ", 1024)
	for b.Len() < mib<<20 {
		b.WriteString(chunk)
	}
	b.WriteString(`"}],"isError":false,"timestamp":1772971201000}}` + "\n")
	parent := args[2] // a chain, as pi writes it: the big result is on the path
	for i := 0; i < 4; i++ {
		fmt.Fprintf(&b, `{"type":"message","id":"m%d","parentId":%q,"timestamp":"2026-03-08T12:00:0%d.000Z","message":{"role":"user","content":"next %d","timestamp":1772971202000}}`+"\n", i, parent, i+2, i)
		parent = fmt.Sprintf("m%d", i)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), b.Bytes(), 0o644))
}

// linecount FILE N: FILE has exactly N line feeds.
func cmdLinecount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: linecount FILE N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	n := strings.Count(ts.ReadFile(args[0]), "\n")
	if (n == want) == neg {
		ts.Fatalf("%s has %d lines, want %d", args[0], n, want)
	}
}

// sizeratio A B MAXPERCENT: size(A) <= MAXPERCENT% of size(B).
func cmdSizeratio(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: sizeratio A B MAXPERCENT")
	}
	a, b := len(ts.ReadFile(args[0])), len(ts.ReadFile(args[1]))
	max, err := strconv.Atoi(args[2])
	ts.Check(err)
	if (a*100 <= b*max) == neg {
		ts.Fatalf("%s is %d bytes, %d%% of %s (%d bytes); want at most %d%%", args[0], a, a*100/b, args[1], b, max)
	}
}

// tokens ENCODING FILE MAX: FILE's text is at most MAX tokens of the
// offline ENCODING (o200k, cl100k).
func cmdTokens(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 3 {
		ts.Fatalf("usage: tokens ENCODING FILE MAX")
	}
	tok, err := gauge.NewTokenizer(args[0])
	ts.Check(err)
	max, err := strconv.Atoi(args[2])
	ts.Check(err)
	if n := tok.TextTokens(ts.ReadFile(args[1])); (n <= max) == neg {
		ts.Fatalf("%s is %d %s tokens, want at most %d", args[1], n, args[0], max)
	}
}

// chomp FILE: removes FILE's final line feed (txtar cannot express a file
// without one).
func cmdChomp(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: chomp FILE")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	ts.Check(os.WriteFile(p, bytes.TrimSuffix(b, []byte("\n")), 0o644))
}
