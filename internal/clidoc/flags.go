package clidoc

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// NearestFlag is the flag of flags whose name is nearest to name, as it is
// written (--format, -i), or "" when none is near: within a third of its
// length in edits (at least one), or name is the start of one.
func NearestFlag(name string, flags []cli.Flag) string {
	if len(name) < 2 {
		return "" // one letter is near every other
	}
	best, bestD := "", -1
	for _, f := range flags {
		for _, n := range f.Names() {
			if n == "help" || n == "h" {
				continue
			}
			d := editDistance(name, n)
			if strings.HasPrefix(n, name) && len(name) >= 2 {
				d = min(d, 1)
			}
			if d > max(1, len(n)/3) || bestD >= 0 && d >= bestD {
				continue
			}
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	if len(best) == 1 {
		return "-" + best
	}
	return "--" + best
}

// editDistance is the number of edits (insertions, deletions,
// substitutions and swaps of two neighbours) from a to b.
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// moveDefault takes the default a flag's usage states in words out of
// it, with the white space before it, as the flag's default text unless
// it has one: "… (default: from the transcript's model, else 200000)".
// The words may hold parentheses one deep.
func moveDefault(usage, text string) (string, string) {
	for from := 0; ; from++ {
		i := strings.Index(usage[from:], "(default")
		if i < 0 {
			return usage, text
		}
		from += i
		words, end, ok := statedDefault(usage[from+len("(default"):])
		if !ok {
			continue
		}
		if text == "" {
			text = words
		}
		start := len(strings.TrimRight(usage[:from], " \t\n\f\r"))
		return usage[:start] + usage[from+len("(default")+end:], text
	}
}

// statedDefault reads what follows "(default" in a usage: an optional
// colon, a space, the words and the closing parenthesis; end is just past
// it.
func statedDefault(s string) (words string, end int, ok bool) {
	at := len(s) - len(strings.TrimPrefix(s, ":"))
	if !strings.HasPrefix(s[at:], " ") {
		return "", 0, false
	}
	at++
	depth := 0
	for j := at; j < len(s); j++ {
		switch s[j] {
		case '(':
			if depth++; depth > 1 {
				return "", 0, false
			}
		case ')':
			if depth == 0 {
				return s[at:j], j + 1, true
			}
			depth--
		}
	}
	return "", 0, false
}

// tidyFlags gives each flag one true default in --help and the man pages:
// a default stated in the usage becomes the flag's default text (urfave
// would add its zero value after it), and a switch that is off by default
// says nothing of it ("(default: false)" only repeats what a switch is).
func tidyFlags(flags []cli.Flag) {
	for _, f := range flags {
		switch f := f.(type) {
		case *cli.BoolFlag:
			f.DisableDefaultText = !f.Value
			continue
		case *cli.StringFlag:
			f.Usage, f.DefaultText = moveDefault(f.Usage, f.DefaultText)
		case *cli.IntFlag:
			f.Usage, f.DefaultText = moveDefault(f.Usage, f.DefaultText)
		case *cli.Float64Flag:
			f.Usage, f.DefaultText = moveDefault(f.Usage, f.DefaultText)
		case *cli.DurationFlag:
			f.Usage, f.DefaultText = moveDefault(f.Usage, f.DefaultText)
		case *cli.StringSliceFlag:
			f.Usage, f.DefaultText = moveDefault(f.Usage, f.DefaultText)
		}
	}
}

// Tidy tidies the flags of c and of its subcommands (tidyFlags).
func Tidy(c *cli.Command) {
	tidyFlags(c.Flags)
	for _, sub := range c.Subcommands {
		Tidy(sub)
	}
}
