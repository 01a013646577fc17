package main

import (
	"bufio"
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
	"github.com/bstools/bs/internal/bytesize"
	"github.com/bstools/bs/internal/progress"
	"github.com/bstools/bs/internal/storereport"
	"github.com/bstools/bs/internal/xdg"
)

// remoteJobs is extract's default -j for a remote store.
const remoteJobs = 16

// storeFlags choose and open the blob store; every filter takes them.
func storeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "store", Usage: "blob store: a directory (default $XDG_DATA_HOME/bs, ~/.local/share/bs) or an object-store URL, s3://BUCKET[/PREFIX]?region=R&endpoint=URL, gs://BUCKET, azblob://CONTAINER, file:///DIR (credentials come from each cloud's usual environment and files, never from flags)", EnvVars: []string{"BS_STORE"}},
		&cli.StringFlag{Name: "cache", Usage: "keep a read-through cache of a remote store's blobs in `DIR`", EnvVars: []string{"BS_CACHE"}},
		&cli.StringFlag{Name: "cache-size", Value: "1G", Usage: "bound the --cache to `SIZE` bytes (suffixes K, M, G)", EnvVars: []string{"BS_CACHE_SIZE"}},
		&cli.StringSliceFlag{Name: "encrypt-to", Usage: "encrypt new blobs to the age `RECIPIENT` (age1…; repeatable)", EnvVars: []string{"BS_ENCRYPT_TO"}},
		&cli.StringSliceFlag{Name: "identity", Usage: "decrypt blobs with the age identity `FILE` (repeatable)", EnvVars: []string{"BS_IDENTITY"}},
	}
}

// storeOptions reads --cache, --cache-size, --encrypt-to and --identity.
func storeOptions(c *cli.Context) (blobstore.OpenOptions, error) {
	opt := blobstore.OpenOptions{
		Recipients:    splitList(c.StringSlice("encrypt-to")),
		IdentityFiles: c.StringSlice("identity"),
		CacheDir:      c.String("cache"),
	}
	if s := c.String("cache-size"); s != "" { // commands without the flag get the default
		n, err := bytesize.Parse(s)
		if err != nil || n <= 0 {
			return opt, usagef(msgCacheSize, s)
		}
		opt.CacheSize = n
	}
	return opt, nil
}

// readStoreFlags reads --store (by default $XDG_DATA_HOME/bs) and the
// options that open it (storeOptions).
func (cm *common) readStoreFlags(c *cli.Context) error {
	if cm.storeDir = c.String("store"); cm.storeDir == "" {
		cm.storeDir = xdg.Data()
	}
	var err error
	cm.storeOpt, err = storeOptions(c)
	return err
}

// splitList splits values given as "a,b" or one per flag; an age
// recipient never holds a comma.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" {
				out = append(out, f)
			}
		}
	}
	return out
}

func storeCommand() *cli.Command {
	flags := func(extra ...cli.Flag) []cli.Flag {
		return append(append(extra,
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: remoteJobs, Usage: "check `N` blobs at a time"},
			logLevelFlag(),
		), storeFlags()...)
	}
	return &cli.Command{
		Name:  "store",
		Usage: "inspect and consolidate the blob store: stats, verify, list, cat, repack",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(msgStoreCommand, c.Args().First())
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: withUsageErrors(
			&cli.Command{
				Name:   "stats",
				Usage:  "blob count, bytes stored, layout, compression ratio",
				Flags:  flags(&cli.BoolFlag{Name: "json", Usage: "print a JSON object: store, blobs, stored_bytes, data_bytes, sized_blobs, unreadable, packed_blobs, loose_blobs, packs, pack_bytes, indexes, extra_copies, compression_ratio"}),
				Action: runStoreStats,
			},
			&cli.Command{
				Name:   "verify",
				Usage:  "re-hash every blob and report the corrupt ones",
				Flags:  flags(&cli.BoolFlag{Name: "json", Usage: "print a JSON object per problem and one summary object"}),
				Action: runStoreVerify,
			},
			&cli.Command{
				Name:  "list",
				Usage: "print the digest of every blob",
				Flags: flags(
					&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "also print where each copy is: pack ID and offset, or loose; its stored and data bytes"},
					&cli.BoolFlag{Name: "json", Usage: "print a JSON object per blob: blob, copies"},
				),
				Action: runStoreList,
			},
			&cli.Command{
				Name:      "cat",
				Usage:     "write a blob's bytes to standard output",
				ArgsUsage: "sha256:DIGEST",
				Flags:     flags(),
				Action:    runStoreCat,
			},
			&cli.Command{
				Name:  "repack",
				Usage: "merge small packs and pack loose blobs",
				Flags: flags(
					&cli.StringFlag{Name: "small", Value: "8M", Usage: "merge the packs smaller than `SIZE` (suffixes K, M, G)"},
					&cli.BoolFlag{Name: "dry-run", Usage: "say what would be done and change nothing"},
					&cli.BoolFlag{Name: "json", Usage: "print the report as one JSON object"},
				),
				Action: runStoreRepack,
			},
		),
	}
}

// parseStore gives a store subcommand its ui, logger and store options;
// args is how many arguments it takes.
func parseStore(c *cli.Context, args int) (*common, error) {
	cm, err := parseLogLevel(c)
	if err != nil {
		return nil, err
	}
	if c.NArg() != args {
		if args == 0 {
			return nil, usagef(msgStoreArgs, c.Command.Name)
		}
		return nil, usagef(msgStoreCatArgs)
	}
	if c.Int("jobs") < 1 {
		return nil, usagef(msgJobs)
	}
	if err = cm.readStoreFlags(c); err != nil {
		return nil, err
	}
	return cm, nil
}

// openExisting opens --store for a command that reads or prunes it: a
// store that is not there is the error noStore (naming the store), never
// a new empty one.
func openExisting(cm *common, noStore string) (blobstore.Store, error) {
	s, err := cm.openMustExist()
	if errors.Is(err, blobstore.ErrNoStore) {
		return nil, fmt.Errorf(noStore, cm.storeDir)
	}
	return s, err
}

func runStoreStats(c *cli.Context) error {
	cm, err := parseStore(c, 0)
	if err != nil {
		return err
	}
	cm.storeOpt.CacheDir = "" // stats are the store's, not the cache's
	s, err := openExisting(cm, msgNoStore)
	if err != nil {
		return err
	}
	sum, err := blobstore.Summarize(c.Context, s, c.Int("jobs"))
	if err != nil {
		return err
	}
	err = storereport.WriteStats(c.App.Writer, cm.storeDir, sum, c.Bool("json"))
	warnUnreadable(cm, sum)
	return err
}

// warnUnreadable points at bs store verify when stats met damaged blobs.
func warnUnreadable(cm *common, sum blobstore.Summary) {
	if sum.Unreadable > 0 {
		cm.ui.warnf(msgStatsUnreadable, sum.Unreadable)
	}
}

func runStoreVerify(c *cli.Context) error {
	cm, err := parseStore(c, 0)
	if err != nil {
		return err
	}
	cm.storeOpt.CacheDir = "" // verify what is stored, not a copy
	s, err := openExisting(cm, msgNoStore)
	if err != nil {
		return err
	}
	w := c.App.Writer
	asJSON := c.Bool("json")
	opt := blobstore.VerifyOptions{Workers: c.Int("jobs")}
	opt.OnProblem = func(p blobstore.Problem) { storereport.WriteProblem(w, p, asJSON) }
	// The line is cleared before the summary.
	bar := &progress.Phases{W: c.App.ErrWriter, Label: func(string) string { return prgVerify }, Unit: unitBlobs}
	opt.Progress = func(done, total int64) { bar.Set("", done, total) }
	res, err := blobstore.Verify(c.Context, s, opt)
	bar.Done()
	if err != nil {
		return err
	}
	storereport.WriteVerify(w, res, asJSON)
	if res.Damaged > 0 {
		cm.ui.errorf("store verify", msgVerifyDamaged, res.Damaged, cm.storeDir)
	}
	if res.Corrupt > 0 || res.Undecryptable > 0 {
		cm.ui.errorf("store verify", msgVerifyFailed, res.Corrupt, res.Undecryptable, cm.storeDir)
	}
	if res.Corrupt > 0 || res.Undecryptable > 0 || res.Damaged > 0 {
		if res.Undecryptable > 0 {
			cm.ui.hintf(hintNoIdentity)
		}
		return &reported{code: exitFailure}
	}
	return nil
}

func runStoreList(c *cli.Context) error {
	cm, err := parseStore(c, 0)
	if err != nil {
		return err
	}
	cm.storeOpt.CacheDir = ""
	s, err := openExisting(cm, msgNoStore)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(c.App.Writer, 64<<10)
	defer w.Flush()
	long, asJSON := c.Bool("long"), c.Bool("json")
	return s.List(c.Context, func(d blobstore.Digest) error {
		if !long && !asJSON {
			_, err := fmt.Fprintln(w, d)
			return err
		}
		copies, err := blobstore.Locate(c.Context, s, d)
		if errors.Is(err, blobstore.ErrNotFound) {
			return nil // deleted since it was listed
		}
		if err != nil && !isCorrupt(err) {
			return err
		}
		return storereport.WriteCopies(w, d, copies, asJSON)
	})
}

func runStoreCat(c *cli.Context) error {
	cm, err := parseStore(c, 1)
	if err != nil {
		return err
	}
	d, err := blobstore.ParseDigest(c.Args().First())
	if err != nil {
		return usagef("%v", err)
	}
	s, err := openExisting(cm, msgNoStore)
	if err != nil {
		return err
	}
	data, err := s.Get(c.Context, d)
	if err != nil {
		return err
	}
	_, err = c.App.Writer.Write(data)
	return err
}

func runStoreRepack(c *cli.Context) error {
	cm, err := parseStore(c, 0)
	if err != nil {
		return err
	}
	small, err := bytesize.Parse(c.String("small"))
	if err != nil || small <= 0 {
		return usagef(msgRepackSmall, c.String("small"))
	}
	cm.storeOpt.CacheDir = ""
	s, err := openExisting(cm, msgNoStore)
	if err != nil {
		return err
	}
	pk, ok := s.(blobstore.Packer)
	if !ok {
		return fmt.Errorf(msgRepackNoPacks, cm.storeDir)
	}
	opt := blobstore.RepackOptions{Small: small, DryRun: c.Bool("dry-run")}
	bar := &progress.Phases{W: c.App.ErrWriter, Label: func(string) string { return prgRepack }, Bytes: true} // bytes copied
	opt.Progress = func(done, total int64) { bar.Set("", done, total) }
	res, err := pk.Repack(c.Context, opt)
	bar.Done()
	for _, p := range res.Damaged {
		cm.ui.warnf(msgRepackDamaged, p.Err)
	}
	if err != nil {
		return err
	}
	return storereport.WriteRepack(c.App.Writer, res, opt.DryRun, c.Bool("json"))
}

func isCorrupt(err error) bool { return errors.Is(err, blobstore.ErrCorrupt) }
