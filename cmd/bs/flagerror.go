package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/internal/clidoc"
)

// flagError is the usage error of a flag urfave/cli refused. An unknown
// flag is named as the user typed it, with the nearest of flags when one
// is near: "unknown flag --formt (did you mean --format?)".
func flagError(c *cli.Context, flags []cli.Flag, err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return &usageError{msg: msg}
	}
	typed := "--" + name // as the usage lines write it, unless the line says otherwise
	if len(name) == 1 {
		typed = "-" + name
	}
	if c != nil {
		for _, a := range commandLine(c) {
			if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); strings.HasPrefix(a, "-") && n == name {
				typed, _, _ = strings.Cut(a, "=")
				break
			}
		}
	}
	msg = fmt.Sprintf(msgUnknownFlag, typed)
	if near := clidoc.NearestFlag(name, flags); near != "" {
		msg += fmt.Sprintf(msgDidYouMean, near)
	}
	return &usageError{msg: msg}
}
