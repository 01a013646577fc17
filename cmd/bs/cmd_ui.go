package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/filters/webui"
	"github.com/bstools/bs/internal/sessions"
)

func uiCommand() *cli.Command {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "addr", Value: "127.0.0.1:0", Usage: "listen on `HOST:PORT` (default: 127.0.0.1 on a free port; another address is reachable by others and is warned about)"},
		&cli.StringSliceFlag{Name: "allow-host", Usage: "also answer requests for `HOST[:PORT]` (the Host header; repeatable), e.g. the name others reach a non-loopback --addr by"},
		&cli.BoolFlag{Name: "open", Usage: "open the app in the default browser"},
		&cli.BoolFlag{Name: "read-only", Usage: "serve no actions: nothing can be changed from the browser"},
		&cli.IntFlag{Name: "context-window", Usage: "the context window in tokens for the gauge (default: from the transcript or the model)"},
		checkpointDirFlag("checkpoint-dir"),
	}
	flags = append(flags, indexFlags()...)
	// bs ui changes files only as -i does, and offers no --force.
	flags = append(flags, commonFlagsWhere(func(name string) bool {
		return !slices.Contains([]string{"in-place", "force", "min-savings", "idle", "strict"}, name)
	})...)
	return &cli.Command{
		Name:      "ui",
		Usage:     "a local web app: where the tokens go, a session entry by entry, restore with a click",
		ArgsUsage: "[PATH...]",
		Flags:     flags,
		Action:    runUI,
	}
}

func runUI(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	roots := cm.Files
	if len(roots) == 0 {
		if roots = sessions.DefaultRoots(); len(roots) == 0 {
			return usagef(msgUINoRoots, homeDirs(sessions.DefaultDirs()))
		}
	}
	if err := notNegative(c, "context-window"); err != nil {
		return err
	}
	store, err := cm.openStore()
	if err != nil {
		return err
	}
	cpDir := checkpointDirOf(c.String("checkpoint-dir"))
	ln, err := net.Listen("tcp", c.String("addr"))
	if err != nil {
		return fmt.Errorf(msgUIListen, c.String("addr"), err)
	}
	defer ln.Close()
	addr := ln.Addr().(*net.TCPAddr)
	if !addr.IP.IsLoopback() {
		cm.ui.warnf(msgUINotLoopback, addr)
	}
	hosts := webui.Hosts(c.String("addr"), addr, c.StringSlice("allow-host"))
	token := webui.NewToken()
	srv := webui.New(webui.Options{
		List:        func() ([]string, error) { return findSessions(roots, false) },
		Store:       store,
		Search:      searchIndex(indexPath(c)),
		Checkpoints: cpDir,
		Format:      cm.Format,
		Window:      c.Int("context-window"),
		Commands:    webui.CommandLines{Run: newUICommands(c).run},
		ReadOnly:    c.Bool("read-only"),
		Token:       token,
		Hosts:       hosts,
		Log:         cm.log,
	})
	url := fmt.Sprintf("http://%s/?token=%s", webui.URLHost(addr), token)
	fmt.Fprintln(c.App.Writer, url)
	cm.log.Info("serving bs ui", "addr", addr.String(), "roots", strings.Join(roots, ","), "read_only", c.Bool("read-only"))
	if c.Bool("open") {
		if err := webui.OpenBrowser(url); err != nil {
			cm.ui.warnf(msgUIOpen, err)
		}
	}
	return webui.Serve(c.Context, ln, srv) // a signal stops it: a clean end
}

// uiCommands runs the app's actions as bs command lines, in this process
// and through the same code as on the command line: the filters' -i, with
// its locks, quiet period and refusals, and their messages.
type uiCommands struct {
	bs    []string            // selfLine
	flags map[string][]string // the ui's own flags a command takes too, by name, as --name=value
}

// uiForwardFlags are the flags of bs ui that the commands it runs are
// given as they were given to it.
var uiForwardFlags = []string{"store", "cache", "cache-size", "encrypt-to", "identity", "format", "now", "log-level", "lock-timeout", "quiet-period", "index"}

func newUICommands(c *cli.Context) *uiCommands {
	u := &uiCommands{bs: selfLine(c), flags: map[string][]string{}}
	for _, name := range uiForwardFlags {
		if !c.IsSet(name) {
			continue
		}
		switch name {
		case "encrypt-to", "identity":
			for _, v := range c.StringSlice(name) {
				u.flags[name] = append(u.flags[name], "--"+name+"="+v)
			}
		default:
			u.flags[name] = []string{"--" + name + "=" + c.Generic(name).(fmt.Stringer).String()}
		}
	}
	return u
}

// run runs 'bs CMD ARGS... FILE' with the forwarded flags CMD takes
// (except those named in skip), standard output going to stdout. A
// failure is a *webui.CommandError with what bs would print on standard
// error.
func (u *uiCommands) run(ctx context.Context, cmd string, args []string, file string, stdout *bytes.Buffer, skip ...string) error {
	line := append(slices.Clone(u.bs), cmd)
	for _, c := range newApp(nil, nil, nil).Commands {
		if c.Name != cmd {
			continue
		}
		for _, f := range c.Flags {
			if name := f.Names()[0]; !slices.Contains(skip, name) {
				line = append(line, u.flags[name]...)
			}
		}
	}
	line = append(append(line, args...), "--", file)
	var stderr bytes.Buffer
	err := runLine(ctx, line, stdout, &stderr)
	if err == nil {
		return nil
	}
	// What the command printed before it failed, and its error as bs
	// shows it (a command that printed its own error returns none).
	exitCode(ctx, ui{&stderr}, cmd, err)
	var busy *busyError
	return &webui.CommandError{Message: strings.TrimSpace(stderr.String()), Busy: errors.As(err, &busy)}
}

// homeDirs spells directories relative to the home directory as a user
// writes them: "~/" before each, joined by commas.
func homeDirs(dirs []string) string {
	for i, d := range dirs {
		dirs[i] = "~/" + d
	}
	return strings.Join(dirs, ", ")
}
