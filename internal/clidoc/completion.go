package clidoc

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// completable is a command as completion sees it.
type completable struct {
	path  string // "extract", "store verify"
	usage string
	flags []completableFlag
	subs  []string
}

type completableFlag struct {
	names  []string // as written: --format, -i
	usage  string
	values bool // takes a value
}

// completionTree lists every command and subcommand, sorted by path.
func completionTree(cmds []*cli.Command) []completable {
	var out []completable
	Walk(cmds, func(path string, c *cli.Command) error {
		if c.Hidden {
			return SkipCommand
		}
		cc := completable{path: path, usage: c.Usage}
		for _, f := range c.Flags {
			cf := completableFlag{}
			for _, n := range f.Names() {
				cf.names = append(cf.names, Dashed(n))
			}
			if d, ok := f.(cli.DocGenerationFlag); ok {
				cf.usage, cf.values = d.GetUsage(), d.TakesValue()
			}
			cc.flags = append(cc.flags, cf)
		}
		cc.flags = append(cc.flags, completableFlag{names: []string{"--help", "-h"}, usage: "show help"})
		for _, s := range c.Subcommands {
			if s.Name != "help" {
				cc.subs = append(cc.subs, s.Name)
			}
		}
		out = append(out, cc)
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// topLevel is the names of the commands with no parent.
func topLevel(tree []completable) []string {
	var names []string
	for _, c := range tree {
		if !strings.Contains(c.path, " ") {
			names = append(names, c.path)
		}
	}
	return names
}

// Completion makes the completion scripts of bs's Commands, which
// complete the values of --format (Formats) and --types (Kinds, a
// comma-separated list).
type Completion struct {
	Commands       []*cli.Command
	Formats, Kinds []string
}

// Bash writes the bash completion script to w.
func (c Completion) Bash(w io.Writer) error { return c.writeBash(w, completionTree(c.Commands)) }

// Zsh writes the zsh completion script to w.
func (c Completion) Zsh(w io.Writer) error { return c.writeZsh(w, completionTree(c.Commands)) }

// Fish writes the fish completion script to w.
func (c Completion) Fish(w io.Writer) error { return c.writeFish(w, completionTree(c.Commands)) }

func (comp Completion) writeBash(w io.Writer, tree []completable) error {
	var b strings.Builder
	b.WriteString("# bash completion for bs (bs completion bash)\n")
	b.WriteString("_bs() {\n")
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= w i\n")
	b.WriteString("\tCOMPREPLY=()\n")
	// The command path: the words before the cursor that are commands.
	b.WriteString("\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tw=${COMP_WORDS[i]}\n\t\tcase \"$w\" in\n\t\t-*) continue ;;\n\t\tesac\n")
	b.WriteString("\t\tcase \"$cmd\" in\n")
	b.WriteString("\t\t\"\") case \" " + strings.Join(topLevel(tree), " ") + " \" in *\" $w \"*) cmd=$w ;; esac ;;\n")
	for _, c := range tree {
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "\t\t%q) case \" %s \" in *\" $w \"*) cmd=\"$cmd $w\" ;; esac ;;\n", c.path, strings.Join(c.subs, " "))
		}
	}
	b.WriteString("\t\tesac\n\tdone\n")
	fmt.Fprintf(&b, "\tcase \"$prev\" in\n\t--format) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", strings.Join(comp.Formats, " "))
	fmt.Fprintf(&b, "\t--types)\n\t\tlocal pre=\n\t\t[[ $cur == *,* ]] && pre=${cur%%,*},\n\t\tCOMPREPLY=($(compgen -P \"$pre\" -W %q -- \"${cur##*,}\"))\n\t\tcompopt -o nospace 2>/dev/null\n\t\treturn ;;\n\tesac\n", strings.Join(comp.Kinds, " "))
	b.WriteString("\tcase \"$cmd\" in\n")
	fmt.Fprintf(&b, "\t\"\") COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", strings.Join(append(topLevel(tree), "--config", "--help", "--version"), " "))
	for _, c := range tree {
		var words []string
		for _, f := range c.flags {
			words = append(words, f.names...)
		}
		fmt.Fprintf(&b, "\t%q)\n\t\tif [[ $cur == -* ]]; then COMPREPLY=($(compgen -W %q -- \"$cur\")); return; fi\n", c.path, strings.Join(words, " "))
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "\t\tCOMPREPLY=($(compgen -W %q -- \"$cur\") $(compgen -f -- \"$cur\")); return ;;\n", strings.Join(c.subs, " "))
		} else {
			b.WriteString("\t\t;;\n")
		}
	}
	b.WriteString("\tesac\n")
	b.WriteString("\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n}\n")
	b.WriteString("complete -o filenames -o bashdefault -F _bs bs\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeZshCompletion is the bash script under zsh's bash completion layer,
// which completes the same words the same way.
func (comp Completion) writeZsh(w io.Writer, tree []completable) error {
	if _, err := io.WriteString(w, "#compdef bs\n# zsh completion for bs (bs completion zsh), through zsh's bash completion layer\nautoload -U +X bashcompinit && bashcompinit\n"); err != nil {
		return err
	}
	return comp.writeBash(w, tree)
}

func (comp Completion) writeFish(w io.Writer, tree []completable) error {
	var b strings.Builder
	b.WriteString("# fish completion for bs (bs completion fish)\n")
	b.WriteString("complete -c bs -e\n")
	// The commands before the cursor, as one path: "store verify".
	// A word is part of it when it names a command (a flag's value, a file
	// name is not).
	var names []string
	for _, c := range tree {
		names = append(names, c.path[strings.LastIndex(c.path, " ")+1:])
	}
	slices.Sort(names)
	fmt.Fprintf(&b, "function __bs_path\n\tset -l path\n\tfor w in (commandline -opc)[2..-1]\n\t\tcontains -- $w %s; or continue\n\t\tset -a path $w\n\tend\n\techo $path\nend\n",
		strings.Join(slices.Compact(names), " "))
	b.WriteString("function __bs_at\n\tset -l p (__bs_path)\n\tbegin; test -z \"$argv\"; and test -z \"$p\"; end; or test \"$p\" = \"$argv\"\nend\n")
	for _, name := range topLevel(tree) {
		for _, c := range tree {
			if c.path == name {
				fmt.Fprintf(&b, "complete -c bs -f -n '__bs_at' -a %s -d %s\n", name, fishQuote(c.usage))
			}
		}
	}
	for _, c := range tree {
		for _, s := range c.subs {
			for _, sc := range tree {
				if sc.path == c.path+" "+s {
					fmt.Fprintf(&b, "complete -c bs -f -n '__bs_at %s' -a %s -d %s\n", c.path, s, fishQuote(sc.usage))
				}
			}
		}
		for _, f := range c.flags {
			spec := ""
			for _, n := range f.names {
				if strings.HasPrefix(n, "--") {
					spec += " -l " + n[2:]
				} else {
					spec += " -s " + n[1:]
				}
			}
			switch {
			case slices.Contains(f.names, "--format"):
				spec += " -x -a " + fishQuote(strings.Join(comp.Formats, " "))
			case slices.Contains(f.names, "--types"):
				spec += " -x -a " + fishQuote(strings.Join(comp.Kinds, " "))
			case f.values:
				spec += " -r"
			}
			fmt.Fprintf(&b, "complete -c bs -n '__bs_at %s'%s -d %s\n", c.path, spec, fishQuote(firstClause(f.usage)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// firstClause is a usage line up to its first colon or semicolon, for a
// completion menu.
func firstClause(s string) string {
	s = strings.ReplaceAll(s, "`", "")
	if i := strings.IndexAny(s, ";:"); i > 0 {
		s = s[:i]
	}
	return s
}

func fishQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
