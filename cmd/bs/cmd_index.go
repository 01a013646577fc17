package main

import (
	"context"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/internal/inputs"
	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/searchqueue"
)

func indexCommand() *cli.Command {
	return &cli.Command{
		Name:      "index",
		Usage:     "(re)build search index rows from transcripts and the blob store",
		ArgsUsage: "FILE...",
		// It reads transcripts and the store: no -i, and a store that is
		// not there is an error, not a new empty one.
		Flags: append(append(append([]cli.Flag{}, indexFlags()...), storeFlags()...), readFlags()...),
		Action: func(c *cli.Context) error {
			cm, err := parseCommon(c)
			if err != nil {
				return err
			}
			if len(cm.Files) == 0 {
				return usagef(msgIndexArgs)
			}
			store, err := openExisting(cm, msgNoStore)
			if err != nil {
				return err
			}
			w := openIndexWriter(c, cm)
			if !w.OK() {
				return &reported{code: exitFailure}
			}
			total, done, read := 0, 0, 0
			bar := progress.New(c.App.ErrWriter, prgIndex, int64(len(cm.Files)), false, unitFiles)
			// A file that cannot be read is an error of its own; the
			// others are indexed.
			ferr := inputs.EachFile(cm.Files, func(path string) error {
				n, err := indexFile(c.Context, path, store, cm, w)
				total += n
				done++
				if err == nil {
					read++
				}
				bar.Set(int64(done))
				return err
			})
			bar.Done()
			w.Close()
			if w.Failed() {
				return &reported{code: exitFailure}
			}
			if inputs.StopsRun(ferr) {
				return ferr
			}
			ix, err := openIndex(c.Context, indexPath(c), cm.ui)
			if err != nil {
				return &hinted{err, hintIndex}
			}
			ix.Close()
			fmt.Fprintf(c.App.Writer, "indexed %d values from %d transcripts\n", total, read)
			return ferr
		},
	}
}

// indexFile queues the rows of one transcript.
func indexFile(ctx context.Context, path string, store blobstore.Store, cm *common, w *searchqueue.Writer) (int, error) {
	f, err := inputs.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return searchqueue.Rebuild(ctx, path, f, cm.Format, cm.onBadLine, store, w, queueWarnings(cm.ui))
}
