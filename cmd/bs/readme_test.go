package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestReadmeQuickStart runs the README's quick start as written, in a
// copy of the checkout's sample, with bs on the PATH and the default
// store: the gauge drops, the restore is identical, stats runs.
func TestReadmeQuickStart(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(data)
	start := strings.Index(readme, "## Quick start")
	end := strings.Index(readme, "Run the whole test suite")
	if start < 0 || end < start {
		t.Fatal("README has no quick start")
	}
	var lines []string
	for _, l := range strings.Split(readme[start:end], "\n") {
		if strings.HasPrefix(l, "    bs ") {
			lines = append(lines, strings.TrimPrefix(l, "    "))
		}
	}
	if len(lines) < 5 || !strings.Contains(lines[0], "testdata/sample/session.jsonl") {
		t.Fatalf("the quick start's first lines are not the sample's: %q", lines)
	}
	lines = lines[:5] // the rest are on a corpus session, with their output
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "testdata", "sample"), os.DirFS(filepath.Join("..", "..", "testdata", "sample"))); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Dir(bsBinary(t))
	home := filepath.Join(dir, "home")
	cmd := exec.Command("bash", "-e", "-c", strings.Join(lines, "\n"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOME="+home,
		"XDG_DATA_HOME=", "XDG_STATE_HOME=", "XDG_CONFIG_HOME=", "BS_STORE=", "BS_INDEX=", "BS_NOW=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	gauges := regexp.MustCompile(`\[Context: \d+% \| (\d+)k/200k tokens\]`).FindAllStringSubmatch(string(out), 2)
	if len(gauges) != 2 {
		t.Fatalf("not two gauges:\n%s", out)
	}
	before, _ := strconv.Atoi(gauges[0][1])
	after, _ := strconv.Atoi(gauges[1][1])
	if before <= after {
		t.Errorf("the gauge does not drop: %q", gauges)
	}
	if !strings.Contains(string(out), "\nidentical\n") || !strings.Contains(string(out), "lean.jsonl: ") {
		t.Errorf("no identical restore or no stats:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(home, ".local", "share", "bs")); err != nil {
		t.Errorf("the store is not where the README says: %v", err)
	}
}

// TestReadmeMCPSnippets checks the integration snippets of the agents
// document: each gives a command line that starts bs mcp with valid flags,
// which then answers initialize and tools/list.
func TestReadmeMCPSnippets(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(data)

	type snippet struct {
		from    string
		command string
		args    []string
	}
	var snippets []snippet
	// claude mcp add ... -- COMMAND ARGS...
	for _, line := range strings.Split(section, "\n") {
		if l := strings.TrimSpace(line); strings.HasPrefix(l, "claude mcp add ") {
			_, cmd, ok := strings.Cut(l, " -- ")
			if !ok {
				t.Fatalf("claude mcp add without --: %s", l)
			}
			f := strings.Fields(cmd)
			snippets = append(snippets, snippet{"claude mcp add", f[0], f[1:]})
		}
	}
	// JSON: every object with command and args.
	var walk func(string, any)
	walk = func(from string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if c, ok := x["command"].(string); ok {
				var args []string
				for _, a := range x["args"].([]any) {
					args = append(args, a.(string))
				}
				snippets = append(snippets, snippet{from, c, args})
				return
			}
			for _, e := range x {
				walk(from, e)
			}
		}
	}
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1) {
		var v any
		if err := json.Unmarshal([]byte(m[1]), &v); err != nil {
			t.Fatalf("a JSON snippet does not parse: %v\n%s", err, m[1])
		}
		walk("json", v)
	}
	// TOML: command = "..." and args = [...] (a JSON array).
	for _, m := range regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(section, -1) {
		var s snippet
		s.from = "toml"
		for _, line := range strings.Split(m[1], "\n") {
			k, v, ok := strings.Cut(line, " = ")
			switch {
			case !ok:
			case k == "command":
				if err := json.Unmarshal([]byte(v), &s.command); err != nil {
					t.Fatalf("toml command %q: %v", v, err)
				}
			case k == "args":
				if err := json.Unmarshal([]byte(v), &s.args); err != nil {
					t.Fatalf("toml args %q: %v", v, err)
				}
			}
		}
		snippets = append(snippets, s)
	}
	if len(snippets) != 4 {
		t.Fatalf("found %d snippets, want 4 (claude mcp add, .mcp.json, Codex, OpenClaw): %+v", len(snippets), snippets)
	}

	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, "state"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
	t.Setenv("BS_STORE", filepath.Join(home, "store"))
	rpc := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readme","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n"
	for _, s := range snippets {
		if s.command != "bs" || len(s.args) == 0 || s.args[0] != "mcp" {
			t.Errorf("%s: %s %v does not start bs mcp", s.from, s.command, s.args)
			continue
		}
		args := []string{"bs"}
		for i, a := range s.args {
			a = strings.Replace(a, "/home/you", home, 1)
			if strings.HasPrefix(a, "~/") {
				a = filepath.Join(home, a[2:])
			}
			if i > 0 && s.args[i-1] == "--sessions-dir" {
				if err := os.MkdirAll(a, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			args = append(args, a)
		}
		var stdout, stderr bytes.Buffer
		if code := run(args, strings.NewReader(rpc), &stdout, &stderr); code != 0 {
			t.Errorf("%s: %v: exit %d: %s", s.from, args, code, stderr.String())
			continue
		}
		out := stdout.String()
		for _, want := range []string{`"id":1,"result":{`, `"serverInfo":{"name":"bs"`, `"id":2,"result":{`, `"name":"purge_control"`, `"name":"restore"`, `"name":"search"`, `"name":"checkpoint"`} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: %v: the answers lack %s:\n%s", s.from, args, want, out)
			}
		}
	}
}
