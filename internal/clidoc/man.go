// Package clidoc makes bs's documents from its command definitions, the
// ones --help shows: the man pages, one per command (bs-extract(1), the
// convention of git and restic) and bs(1), with the same usage lines,
// descriptions, flags and examples, and the shell completion scripts. It
// also gives --help the same descriptions and examples, tidies those
// definitions' flags (one default each), reads urfave/cli's refusals (an
// unknown flag, a ratio that is not a number), makes an app that only
// checks its command lines, and finds the flag a mistyped one was meant to
// be, a flag written after the arguments, the command a command line
// runs, and the build's version.
package clidoc

import (
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// Manual is what the man pages say besides the command definitions.
type Manual struct {
	// Synopsis is the main page's synopsis, and Note a paragraph after
	// its description (roff).
	Synopsis, Note string
	// GlobalFlags are the main page's options.
	GlobalFlags []cli.Flag
	// Examples are each command's examples, by its name.
	Examples map[string][]string
	// Docs are the Markdown files of DocFiles each command's page carries
	// after its description, by its name.
	Docs     map[string][]string
	DocFiles fs.ReadFileFS
	// Environment is what every command reads from the environment,
	// besides its flags' variables; Files the places bs reads and writes.
	Environment, Files []Item
	// ExitStatus is every exit code.
	ExitStatus []Exit
}

// Item is a variable or a file, and what it is.
type Item struct{ Name, What string }

// Exit is an exit code and what it means.
type Exit struct {
	Code    int
	Meaning string
}

// Pages returns each page's file name and text: bs.1 and bs-CMD.1.
func (m *Manual) Pages(app *cli.App) map[string]string {
	pages := map[string]string{"bs.1": m.mainPage(app)}
	for _, c := range app.Commands {
		if c.Name == "help" || c.Hidden {
			continue
		}
		pages["bs-"+c.Name+".1"] = m.commandPage(c)
	}
	return pages
}

// roff escapes text for a man page: backslashes, and a dot or quote that
// would start a line.
func roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "`", "")
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		if strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'") {
			b.WriteString(`\&`)
		}
		b.WriteString(line)
	}
	return b.String()
}

// paragraphs writes text, split on blank lines, as roff paragraphs.
func paragraphs(b *strings.Builder, text string) {
	for i, p := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		b.WriteString(roff(p) + "\n")
	}
}

func header(b *strings.Builder, name, summary string) {
	fmt.Fprintf(b, ".TH %s 1 \"\" \"bs\" \"bs manual\"\n.nh\n.ad l\n", strings.ToUpper(name))
	fmt.Fprintf(b, ".SH NAME\n%s \\- %s\n", name, roff(summary))
}

func (m *Manual) mainPage(app *cli.App) string {
	var b strings.Builder
	header(&b, "bs", app.Usage)
	b.WriteString(".SH SYNOPSIS\n" + m.Synopsis)
	b.WriteString(".SH DESCRIPTION\n")
	desc, _, _ := strings.Cut(app.Description, "\n\nEXIT STATUS")
	paragraphs(&b, desc)
	b.WriteString(".PP\n" + m.Note)
	b.WriteString(".SH COMMANDS\n")
	for _, c := range app.Commands {
		if c.Name == "help" || c.Hidden {
			continue
		}
		fmt.Fprintf(&b, ".TP\n.BR bs\\-%s (1)\n%s\n", c.Name, roff(c.Usage))
	}
	b.WriteString(".SH OPTIONS\n")
	writeFlags(&b, m.GlobalFlags)
	m.writeEnvironment(&b, nil)
	m.writeFiles(&b)
	m.writeExitStatus(&b)
	b.WriteString(".SH SEE ALSO\n")
	var see []string
	for _, c := range app.Commands {
		if c.Name != "help" && !c.Hidden {
			see = append(see, fmt.Sprintf(".BR bs\\-%s (1)", c.Name))
		}
	}
	b.WriteString(strings.Join(see, ",\n") + "\n")
	return b.String()
}

func (m *Manual) commandPage(c *cli.Command) string {
	var b strings.Builder
	header(&b, "bs-"+c.Name, c.Usage)
	b.WriteString(".SH SYNOPSIS\n")
	fmt.Fprintf(&b, ".B bs %s\n[\\fIOPTIONS\\fR] %s\n", c.Name, roff(c.ArgsUsage))
	for _, s := range c.Subcommands {
		if s.Name != "help" {
			fmt.Fprintf(&b, ".br\n.B bs %s %s\n[\\fIOPTIONS\\fR] %s\n", c.Name, s.Name, roff(s.ArgsUsage))
		}
	}
	b.WriteString(".SH DESCRIPTION\n")
	paragraphs(&b, c.Description)
	for _, f := range m.Docs[c.Name] {
		md, err := m.DocFiles.ReadFile(f)
		if err != nil {
			panic(err) // embedded: a name here that is not there
		}
		b.WriteString(markdownRoff(string(md)))
	}
	if len(c.Subcommands) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, s := range c.Subcommands {
			if s.Name == "help" {
				continue
			}
			fmt.Fprintf(&b, ".SS bs %s %s\n%s\n", c.Name, s.Name, roff(s.Usage))
			if s.Description != "" {
				b.WriteString(".PP\n")
				paragraphs(&b, s.Description)
			}
			if len(s.Flags) > 0 {
				b.WriteString(".PP\nOptions:\n")
				writeFlags(&b, s.Flags)
			}
		}
	}
	if len(c.Flags) > 0 {
		b.WriteString(".SH OPTIONS\n")
		writeFlags(&b, c.Flags)
	}
	if ex := m.Examples[c.Name]; len(ex) > 0 {
		b.WriteString(".SH EXAMPLES\n.nf\n.RS 4\n")
		for _, l := range ex {
			b.WriteString(roff(l) + "\n")
		}
		b.WriteString(".RE\n.fi\n")
	}
	m.writeEnvironment(&b, c)
	m.writeFiles(&b)
	m.writeExitStatus(&b)
	fmt.Fprintf(&b, ".SH SEE ALSO\n.BR bs (1)\n")
	return b.String()
}

func writeFlags(b *strings.Builder, flags []cli.Flag) {
	for _, f := range flags {
		d, ok := f.(cli.DocGenerationFlag)
		if !ok {
			continue
		}
		placeholder, usage := unquoteUsage(d.GetUsage())
		if d.TakesValue() && placeholder == "" {
			placeholder = "value"
		}
		var names []string
		for _, n := range f.Names() {
			dash := "\\-\\-"
			if len(n) == 1 {
				dash = "\\-"
			}
			names = append(names, "\\fB"+dash+strings.ReplaceAll(n, "-", "\\-")+"\\fR")
		}
		line := strings.Join(names, ", ")
		if d.TakesValue() {
			line += " \\fI" + placeholder + "\\fR"
		}
		fmt.Fprintf(b, ".TP\n%s\n%s", line, roff(usage))
		if bf, isBool := f.(*cli.BoolFlag); !isBool || !bf.DisableDefaultText {
			if def := d.GetDefaultText(); def != "" {
				fmt.Fprintf(b, " (default: %s)", roff(def))
			}
		}
		if env := d.GetEnvVars(); len(env) > 0 {
			fmt.Fprintf(b, " [%s]", strings.Join(env, ", "))
		}
		b.WriteString("\n")
	}
}

// writeEnvironment lists the variables of c's flags (and its
// subcommands'), then those every command reads.
func (m *Manual) writeEnvironment(b *strings.Builder, c *cli.Command) {
	b.WriteString(".SH ENVIRONMENT\n")
	vars := map[string]string{}
	var walk func(c *cli.Command)
	walk = func(c *cli.Command) {
		for _, f := range c.Flags {
			if d, ok := f.(cli.DocGenerationFlag); ok {
				for _, e := range d.GetEnvVars() {
					if _, seen := vars[e]; !seen {
						vars[e] = "\\-\\-" + strings.ReplaceAll(f.Names()[0], "-", "\\-")
					}
				}
			}
		}
		for _, s := range c.Subcommands {
			walk(s)
		}
	}
	if c != nil {
		walk(c)
	}
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(b, ".TP\n.B %s\nas %s\n", n, vars[n])
	}
	for _, e := range m.Environment {
		if !slices.Contains(names, e.Name) {
			fmt.Fprintf(b, ".TP\n.B %s\n%s\n", e.Name, roff(e.What))
		}
	}
}

func (m *Manual) writeFiles(b *strings.Builder) {
	b.WriteString(".SH FILES\n")
	for _, f := range m.Files {
		fmt.Fprintf(b, ".TP\n.I %s\n%s\n", roff(f.Name), roff(f.What))
	}
}

func (m *Manual) writeExitStatus(b *strings.Builder) {
	b.WriteString(".SH EXIT STATUS\n")
	for _, e := range m.ExitStatus {
		fmt.Fprintf(b, ".TP\n.B %d\n%s\n", e.Code, roff(e.Meaning))
	}
}

// unquoteUsage takes the placeholder out of a flag's usage, as urfave/cli
// does for --help: the first `word` in backquotes names the flag's value.
func unquoteUsage(usage string) (placeholder, text string) {
	i := strings.IndexByte(usage, '`')
	if i < 0 {
		return "", usage
	}
	j := strings.IndexByte(usage[i+1:], '`')
	if j < 0 {
		return "", usage
	}
	placeholder = usage[i+1 : i+1+j]
	return placeholder, usage[:i] + placeholder + usage[i+2+j:]
}

var (
	mdLink   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
	mdStrong = regexp.MustCompile(`\*\*([^*]+)\*\*`)
)

// markdownRoff turns the Markdown of docs/ into man page text: its title
// is left out (the page has its own), a heading becomes a subsection,
// paragraphs and list items are filled, indented and fenced code stays as
// it is, a link keeps its text and an image goes.
func markdownRoff(md string) string {
	var b strings.Builder
	inline := func(s string) string {
		s = mdLink.ReplaceAllStringFunc(s, func(m string) string {
			if strings.HasPrefix(m, "!") {
				return ""
			}
			return mdLink.FindStringSubmatch(m)[1]
		})
		return roff(mdStrong.ReplaceAllString(s, "$1"))
	}
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.WriteString(".PP\n" + inline(strings.Join(para, " ")) + "\n")
			para = nil
		}
	}
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "# "):
			flush() // the title
		case strings.HasPrefix(l, "#"):
			flush()
			b.WriteString(".SS " + inline(strings.TrimLeft(l, "# ")) + "\n")
		case strings.HasPrefix(l, "```"):
			flush()
			b.WriteString(".PP\n.nf\n.RS 4\n")
			for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
				b.WriteString(roff(lines[i]) + "\n")
			}
			b.WriteString(".RE\n.fi\n")
		case strings.HasPrefix(l, "    ") && len(para) == 0:
			b.WriteString(".PP\n.nf\n.RS 4\n")
			for ; i < len(lines) && (strings.HasPrefix(lines[i], "    ") || strings.TrimSpace(lines[i]) == "" && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ")); i++ {
				b.WriteString(roff(strings.TrimPrefix(lines[i], "    ")) + "\n")
			}
			i--
			b.WriteString(".RE\n.fi\n")
		case strings.HasPrefix(l, "- "):
			flush()
			b.WriteString(".IP \\(bu 2\n")
			para = append(para, strings.TrimPrefix(l, "- "))
			for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "  ") && !strings.HasPrefix(lines[i+1], "    ") {
				i++
				para = append(para, strings.TrimSpace(lines[i]))
			}
			b.WriteString(inline(strings.Join(para, " ")) + "\n")
			para = nil
		case strings.TrimSpace(l) == "":
			flush()
		default:
			para = append(para, l)
		}
	}
	flush()
	return b.String()
}
