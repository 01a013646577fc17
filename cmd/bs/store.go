package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/bstools/bs/blobstore"
)

// remoteJobs is extract's default -j for a remote store.
const remoteJobs = 16

// remote reports whether a store is reached over the network.
func remote(s blobstore.Store) bool {
	r, ok := s.(interface{ Remote() bool })
	return ok && r.Remote()
}

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
		n, err := parseByteSize(s)
		if err != nil || n <= 0 {
			return opt, usagef(msgCacheSize, s)
		}
		opt.CacheSize = n
	}
	return opt, nil
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

// parseByteSize parses 1024, 512K, 100M or 1G (powers of 1024).
func parseByteSize(s string) (int64, error) {
	mult := int64(1)
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1 << 10
		case 'm', 'M':
			mult = 1 << 20
		case 'g', 'G':
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return v * mult, nil
}

func storeCommand() *cli.Command {
	flags := func(extra ...cli.Flag) []cli.Flag {
		return append(append(extra,
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Value: remoteJobs, Usage: "check `N` blobs at a time"},
			&cli.StringFlag{Name: "log-level", Value: "warn", Usage: "log records on stderr at this level and above: debug, info, warn, error"},
		), storeFlags()...)
	}
	return &cli.Command{
		Name:  "store",
		Usage: "inspect the blob store: stats, verify",
		Description: "bs store stats counts the blobs and the bytes they take, and the compression ratio over the blobs " +
			"whose size the store records (the zstd header for a plain local blob, object metadata for a remote one; " +
			"an encrypted local blob's size is not known without decrypting it). It reads no blob data: one stat per " +
			"blob; a blob whose file or metadata is damaged is counted as unreadable and the others are still counted. bs store verify reads every blob back and re-hashes it, bypassing --cache, prints each corrupt " +
			"blob (and each it cannot decrypt) on standard output and exits 1 if there was any; on a terminal it " +
			"shows its progress on standard error.",
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				return usagef(msgStoreCommand, c.Args().First())
			}
			return cli.ShowSubcommandHelp(c)
		},
		Subcommands: withUsageErrors(
			&cli.Command{
				Name:   "stats",
				Usage:  "blob count, bytes stored, compression ratio",
				Flags:  flags(&cli.BoolFlag{Name: "json", Usage: "print a JSON object: store, blobs, stored_bytes, data_bytes, sized_blobs, unreadable, compression_ratio"}),
				Action: runStoreStats,
			},
			&cli.Command{
				Name:   "verify",
				Usage:  "re-hash every blob and report the corrupt ones",
				Flags:  flags(&cli.BoolFlag{Name: "json", Usage: "print a JSON object per problem blob and one summary object"}),
				Action: runStoreVerify,
			},
		),
	}
}

// parseStore gives a store subcommand its ui, logger and store options.
func parseStore(c *cli.Context) (*common, error) {
	cm, err := parseLogLevel(c)
	if err != nil {
		return nil, err
	}
	if c.NArg() > 0 {
		return nil, usagef(msgStoreArgs)
	}
	if c.Int("jobs") < 1 {
		return nil, usagef(msgJobs)
	}
	if cm.storeDir = c.String("store"); cm.storeDir == "" {
		cm.storeDir = defaultStoreDir()
	}
	if cm.storeOpt, err = storeOptions(c); err != nil {
		return nil, err
	}
	return cm, nil
}

// openExisting opens --store for a command that reads or prunes it: a
// store that is not there is the error noStore (naming the store), never
// a new empty one.
func openExisting(cm *common, noStore string) (blobstore.Store, error) {
	opt := cm.storeOpt
	opt.MustExist = true
	s, err := blobstore.Open(context.Background(), cm.storeDir, opt)
	if errors.Is(err, blobstore.ErrNoStore) {
		return nil, fmt.Errorf(noStore, cm.storeDir)
	}
	if err != nil {
		return nil, fmt.Errorf(msgStoreOpen, cm.storeDir, err)
	}
	return s, nil
}

func runStoreStats(c *cli.Context) error {
	cm, err := parseStore(c)
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
	w := c.App.Writer
	if c.Bool("json") {
		b, _ := json.Marshal(struct {
			Store string `json:"store"`
			blobstore.Summary
			Ratio float64 `json:"compression_ratio"`
		}{cm.storeDir, sum, round2(sum.CompressionRatio())})
		warnUnreadable(cm, sum)
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	}
	fmt.Fprintf(w, "store        %s\n", cm.storeDir)
	fmt.Fprintf(w, "blobs        %d\n", sum.Blobs)
	fmt.Fprintf(w, "stored       %d bytes\n", sum.StoredBytes)
	fmt.Fprintf(w, "data         %d bytes in the %d blobs of known size\n", sum.DataBytes, sum.SizedBlobs)
	if sum.SizedBlobs > 0 {
		fmt.Fprintf(w, "compression  %.2f\n", sum.CompressionRatio())
	} else {
		fmt.Fprintf(w, "compression  unknown\n")
	}
	if sum.Unreadable > 0 {
		fmt.Fprintf(w, "unreadable   %d blobs\n", sum.Unreadable)
	}
	warnUnreadable(cm, sum)
	return nil
}

// warnUnreadable points at bs store verify when stats met damaged blobs.
func warnUnreadable(cm *common, sum blobstore.Summary) {
	if sum.Unreadable > 0 {
		cm.ui.warnf(msgStatsUnreadable, sum.Unreadable)
	}
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

func runStoreVerify(c *cli.Context) error {
	cm, err := parseStore(c)
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
	opt.OnProblem = func(p blobstore.Problem) {
		if asJSON {
			kind := "corrupt"
			if !isCorrupt(p.Err) {
				kind = "undecryptable"
			}
			b, _ := json.Marshal(map[string]string{"blob": p.Digest.String(), "problem": kind, "error": p.Err.Error()})
			fmt.Fprintf(w, "%s\n", b)
		} else {
			fmt.Fprintln(w, p.Err)
		}
	}
	tty := isTerminal(c.App.ErrWriter)
	if tty {
		opt.Progress = func(done, total int64) {
			fmt.Fprintf(c.App.ErrWriter, "\rbs: store verify: %d/%d blobs", done, total)
		}
	}
	res, err := blobstore.Verify(c.Context, s, opt)
	if tty {
		fmt.Fprintln(c.App.ErrWriter)
	}
	if err != nil {
		return err
	}
	if asJSON {
		b, _ := json.Marshal(res)
		fmt.Fprintf(w, "%s\n", b)
	} else {
		fmt.Fprintf(w, "checked %d blobs: %d corrupt, %d undecryptable\n", res.Checked, res.Corrupt, res.Undecryptable)
	}
	if res.Corrupt > 0 || res.Undecryptable > 0 {
		cm.ui.errorf("store verify", msgVerifyFailed, res.Corrupt, res.Undecryptable, cm.storeDir)
		if res.Undecryptable > 0 {
			cm.ui.hintf(hintNoIdentity)
		}
		return &reported{code: exitFailure}
	}
	return nil
}

func isCorrupt(err error) bool { return errors.Is(err, blobstore.ErrCorrupt) }
