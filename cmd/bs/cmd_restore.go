package main

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/filters/restore"
)

func restoreCommand() *cli.Command {
	return &cli.Command{
		Name:      "restore",
		Usage:     "put extracted values back, byte for byte",
		ArgsUsage: "[FILE...]",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "id", Usage: "restore the entry with this `ID`"},
			&cli.StringFlag{Name: "keys", Usage: "with --id: only these comma-separated keys (JSON Pointers or last names)"},
			&cli.BoolFlag{Name: "all", Usage: "restore every extracted value"},
			&cli.BoolFlag{Name: "keep-restore-calls", Usage: "do not mark restore and purge_control tool calls _redacted"},
			&cli.StringSliceFlag{Name: "set-extractable", Usage: "set _extractable on an entry: `ID=VALUE` with true, false or N (repeatable)"},
			&cli.StringFlag{Name: "result", Usage: "write the result object to `FILE` (default: stderr)"},
		}, commonFlags()...),
		Action: runRestore,
	}
}

func runRestore(c *cli.Context) error {
	cm, err := parseCommon(c)
	if err != nil {
		return err
	}
	cm.ShowReading = true
	opt := restore.Options{
		ID:               c.String("id"),
		All:              c.Bool("all"),
		KeepRestoreCalls: c.Bool("keep-restore-calls"),
		Now:              cm.now,
		Format:           cm.Format,
		Log:              cm.log,
		OnBadLine:        cm.onBadLine,
	}
	if k := c.String("keys"); k != "" {
		if opt.ID == "" {
			return usagef(msgKeysWithoutID)
		}
		opt.Keys = strings.Split(k, ",")
	}
	if opt.ID != "" && opt.All {
		return usagef(msgRestoreBoth)
	}
	for _, s := range c.StringSlice("set-extractable") {
		id, raw, ok := restore.ParseSetExtractable(s)
		if !ok {
			return usagef(msgSetExtractable, s)
		}
		if opt.SetExtractable == nil {
			opt.SetExtractable = map[string][]byte{}
		}
		opt.SetExtractable[id] = raw
	}
	if opt.ID == "" && !opt.All && opt.SetExtractable == nil {
		return usagef(msgRestoreWhat)
	}
	if opt.ID != "" || opt.All {
		if opt.Store, err = cm.openReading(); err != nil {
			return err
		}
	}
	var resultW io.Writer = c.App.ErrWriter
	if p := c.String("result"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return err
		}
		defer f.Close()
		resultW = f
	}
	failed := false
	err = cm.Each(c.Context, func(ctx context.Context, name string, r io.Reader, w io.Writer) error {
		o := opt
		o.Session = sessionName(name)
		res, _, err := restore.Run(ctx, name, r, w, o)
		if res != nil {
			b, _ := json.Marshal(res)
			resultW.Write(append(b, '\n'))
		}
		var blobErr *restore.BlobError
		var nf *restore.NotFoundError
		if err != nil && (errors.As(err, &blobErr) || errors.As(err, &nf)) {
			// Per-entry failures: the stream was written whole; report each.
			for _, e := range unjoin(err) {
				cm.ui.errorf(cm.cmd, "%s: %v", name, e)
			}
			if errors.Is(err, blobstore.ErrNoIdentity) {
				cm.ui.hintf(hintNoIdentity)
			} else if errors.Is(err, blobstore.ErrNotFound) {
				cm.ui.hintf(hintMissingBlob)
			} else if errors.Is(err, blobstore.ErrCorrupt) {
				cm.ui.hintf(hintCorruptBlob)
			}
			failed = true
			return nil
		}
		return err
	})
	if err != nil {
		return err
	}
	if failed {
		return &reported{code: exitFailure}
	}
	return nil
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
