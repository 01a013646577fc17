package archive

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"time"
	"unicode/utf8"
)

// Summary styles.
const (
	Structured = "structured"
	Paragraph  = "paragraph"
)

// StructuredSummary is the structured summary of seed 002, derived
// mechanically from the turn.
type StructuredSummary struct {
	Outcome       string   `json:"outcome"`
	KeyFindings   []string `json:"key_findings"`
	FilesTouched  []string `json:"files_touched"`
	ToolsUsed     []string `json:"tools_used"`
	OpenQuestions []string `json:"open_questions"`
}

const maxFindings = 5

// structured builds the structured summary of a turn.
func (n *notes) structured(maxTurns bool) StructuredSummary {
	s := StructuredSummary{Outcome: n.outcome(maxTurns), KeyFindings: []string{}, FilesTouched: []string{}, ToolsUsed: []string{}, OpenQuestions: []string{}}
	final := ""
	if n.lastIsEnd {
		final = n.last
	}
	// Findings: the points the final reply lists, then the first sentence
	// of each earlier reply, newest last.
	for _, line := range strings.Split(final, "\n") {
		if len(s.KeyFindings) == maxFindings {
			break
		}
		if item, ok := listItem(line); ok && !contains(s.KeyFindings, item) {
			s.KeyFindings = append(s.KeyFindings, item)
		}
	}
	for _, t := range n.texts {
		if len(s.KeyFindings) == maxFindings {
			break
		}
		if !contains(s.KeyFindings, t) {
			s.KeyFindings = append(s.KeyFindings, t)
		}
	}
	if n.errors > 0 && len(s.KeyFindings) < maxFindings {
		s.KeyFindings = append(s.KeyFindings, fmt.Sprintf("%d of %d tool calls failed", n.errors, n.calls))
	}
	s.FilesTouched = append(s.FilesTouched, n.files...)
	for _, tc := range n.tools {
		s.ToolsUsed = append(s.ToolsUsed, tc.name)
	}
	for _, q := range questions(final) {
		if len(s.OpenQuestions) == maxFindings {
			break
		}
		s.OpenQuestions = append(s.OpenQuestions, q)
	}
	if maxTurns && len(s.OpenQuestions) < maxFindings {
		s.OpenQuestions = append(s.OpenQuestions, "The turn stopped at the max-turns limit; its work may be unfinished.")
	}
	return s
}

// outcome says how the turn ended, from its final reply.
func (n *notes) outcome(maxTurns bool) string {
	var o string
	switch {
	case n.lastIsEnd:
		para, _, _ := strings.Cut(strings.TrimSpace(n.last), "\n\n")
		o = gist(para, 300)
	case n.calls > 0:
		o = fmt.Sprintf("The turn ended without a text reply after %d tool calls.", n.calls)
	default:
		o = "The turn ended without a text reply."
	}
	if maxTurns && !strings.Contains(o, maxTurnsText) {
		o = "Stopped at the max-turns limit. " + o
	}
	return o
}

// paragraph is the paragraph summary: three to five sentences.
func (n *notes) paragraph(maxTurns bool) string {
	task := strings.TrimRight(n.task, ".!?… ")
	if task == "" {
		task = "(no text)"
	}
	parts := []string{fmt.Sprintf("The user asked: %s.", task)}
	if n.calls == 0 {
		parts = append(parts, "The assistant answered without tool calls.")
	} else {
		var tools []string
		for _, tc := range n.tools {
			tools = append(tools, fmt.Sprintf("%s ×%d", tc.name, tc.n))
		}
		s := fmt.Sprintf("The assistant made %d tool calls (%s)", n.calls, strings.Join(tools, ", "))
		if n.errors > 0 {
			s += fmt.Sprintf(", %d of which failed", n.errors)
		}
		parts = append(parts, s+".")
	}
	if len(n.files) > 0 {
		files := n.files
		more := ""
		if len(files) > 5 {
			files, more = files[:5], fmt.Sprintf(" and %d more", len(n.files)-5)
		}
		parts = append(parts, fmt.Sprintf("It touched %s%s.", strings.Join(files, ", "), more))
	}
	parts = append(parts, "Outcome: "+sentence(n.outcome(maxTurns)))
	final := ""
	if n.lastIsEnd {
		final = n.last
	}
	if q := questions(final); len(q) > 0 {
		parts = append(parts, "It left open: "+q[0])
	} else if maxTurns {
		parts = append(parts, "Its work may be unfinished.")
	}
	return strings.Join(parts, " ")
}

// sentence makes s one sentence: no inner sentence ends, a final period.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	s = strings.NewReplacer(". ", "; ", "! ", "; ", "? ", "; ").Replace(s)
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return s
}

// listItem returns the text of a Markdown list item.
func listItem(line string) (string, bool) {
	s := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(s, "- "), strings.HasPrefix(s, "* "), strings.HasPrefix(s, "• "):
		_, s, _ = strings.Cut(s, " ")
	default:
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i+1 >= len(s) || (s[i] != '.' && s[i] != ')') || s[i+1] != ' ' {
			return "", false
		}
		s = s[i+2:]
	}
	s = strings.Trim(strings.ReplaceAll(strings.TrimSpace(s), "**", ""), "*_`")
	if len(s) < 3 {
		return "", false
	}
	return gist(s, 200), true
}

// questions are the sentences of s that ask something.
func questions(s string) []string {
	var qs []string
	for _, line := range strings.Split(s, "\n") {
		line = strings.TrimSpace(line)
		start := 0
		for i := 0; i < len(line); i++ {
			c := line[i]
			if c != '.' && c != '!' && c != '?' {
				continue
			}
			if i+1 < len(line) && line[i+1] != ' ' {
				continue
			}
			if c == '?' {
				if q := strings.TrimSpace(line[start : i+1]); len(q) > 3 && !contains(qs, gist(q, 200)) {
					qs = append(qs, gist(q, 200))
				}
			}
			start = i + 1
		}
	}
	return qs
}

// mechanical is the summary text in the given style.
func (n *notes) mechanical(style string, maxTurns bool) string {
	if style == Paragraph {
		return n.paragraph(maxTurns)
	}
	b, _ := json.Marshal(n.structured(maxTurns))
	return string(b)
}

// maxCmdOutput bounds what a summarize command may print.
const maxCmdOutput = 64 << 10

// runSummarizer runs cmd with sh -c, the holder on standard input, and
// returns its standard output as the summary.
func runSummarizer(ctx context.Context, cmd string, timeout time.Duration, holder io.Reader, env []string) (string, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Stdin = holder
	out := &capped{max: maxCmdOutput}
	var errb capped
	errb.max = 4 << 10
	c.Stdout, c.Stderr = out, &errb
	c.Env = env
	setProcessGroup(c)
	c.WaitDelay = time.Second
	err := c.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return "", fmt.Errorf("timed out after %s", timeout)
	}
	if err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return "", fmt.Errorf("%v: %s", err, gist(msg, 200))
		}
		return "", err
	}
	s := strings.TrimSpace(out.String())
	switch {
	case s == "":
		return "", errors.New("it printed nothing")
	case !utf8.ValidString(s):
		return "", errors.New("its output is not UTF-8 text")
	case out.over:
		return "", fmt.Errorf("its output exceeds %d bytes", maxCmdOutput)
	}
	return s, nil
}

// capped is a buffer that keeps the first max bytes written to it.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); room < len(p) {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
