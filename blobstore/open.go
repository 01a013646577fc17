package blobstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	gcaws "gocloud.dev/aws"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/fileblob" // file:// URLs
	_ "gocloud.dev/blob/memblob"  // mem:// URLs
	"gocloud.dev/blob/s3blob"
)

// OpenOptions configures [Open].
type OpenOptions struct {
	// Recipients are age recipients (age1… public keys): when any is
	// given, new blobs are stored encrypted to all of them.
	Recipients []string
	// IdentityFiles name age identity files, used to decrypt encrypted
	// blobs. Reading an encrypted blob without a matching identity is an
	// error matching ErrNoIdentity.
	IdentityFiles []string
	// CacheDir, when set, keeps a local read-through cache of a remote
	// store's blobs there, at most CacheSize bytes (DefaultCacheSize when
	// zero). It is not used for a store that is a local directory.
	CacheDir  string
	CacheSize int64
	// allowMem lets Open accept mem://, a store that dies with the
	// process. Only tests set it (WithMem, in export_test.go).
	allowMem bool
	// Grace is how young a packed copy must be for a Put of the same data
	// to rely on it rather than write a fresh copy; retention keeps every
	// packed copy at least twice as long. 0 means DefaultRefreshAfter.
	// For a store reached by URL it is also the loose objects'
	// CloudOptions.RefreshAfter.
	Grace time.Duration
	// IndexCache is where a store reached by URL keeps copies of its
	// index files; "" means DefaultIndexCache of the store's URL.
	IndexCache string
	// MustExist makes Open fail, creating nothing, when a local
	// directory holds no store (no blobs/sha256 in it) or a file URL's
	// directory does not exist: for commands that only read.
	MustExist bool
}

// ErrNoStore is matched by Open's error for a local directory that holds
// no store when OpenOptions.MustExist is set.
var ErrNoStore = errors.New("no blob store")

// optionalDrivers are the object stores whose gocloud drivers are compiled
// in only under a build tag: Google's and Azure's client libraries cost
// every bs process, whatever its store, about 20 and 7 MiB of resident
// memory and 30 ms of start-up, against a budget of 64 MiB for extract.
// driver_gcs.go and driver_azure.go mark them built.
var optionalDrivers = map[string]*struct {
	name  string
	built bool
}{
	"gs":     {name: "gcs"},
	"azblob": {name: "azure"},
}

// IsRemote reports whether s is reached over the network (a [Cloud]
// store, or a [Cache] over one): its writes wait on the network more than
// on the CPUs.
func IsRemote(s Store) bool {
	r, ok := s.(interface{ Remote() bool })
	return ok && r.Remote()
}

// IsURL reports whether spec names a store by URL (scheme://…) rather
// than as a directory.
func IsURL(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok || scheme == "" {
		return false
	}
	for _, c := range scheme {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// Open opens the store named by spec: a directory for a [Local] store, or
// a URL for a [Cloud] store:
//
//	s3://bucket[/prefix]?region=R&endpoint=URL   S3 or an S3-compatible server
//	gs://bucket[/prefix]                          Google Cloud Storage
//	azblob://container[/prefix]                   Azure Blob Storage
//	file:///dir                                   a directory, through gocloud's fileblob
//	mem://                                        memory, for tests (only in tests)
//
// Credentials come from each cloud's usual environment variables and files
// (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_PROFILE and ~/.aws;
// GOOGLE_APPLICATION_CREDENTIALS; AZURE_STORAGE_ACCOUNT and
// AZURE_STORAGE_KEY or the Azure default credential), never from the URL.
// For an s3 URL with an endpoint, path-style addressing is the default
// (use_path_style=false turns it off). A file URL gets no_tmp_dir,
// create_dir and dir_file_mode=0700 unless it sets them.
func Open(ctx context.Context, spec string, opt OpenOptions) (Store, error) {
	if !IsURL(spec) {
		if opt.MustExist {
			if fi, err := os.Stat(filepath.Join(spec, "blobs", "sha256")); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("%w at %s", ErrNoStore, spec)
			}
		}
		l, err := OpenLocal(spec)
		if err != nil {
			return nil, err
		}
		c, err := newCrypter(opt.Recipients, opt.IdentityFiles)
		if err != nil {
			return nil, err
		}
		l.setCrypter(c)
		if opt.Grace > 0 {
			l.packs.grace = opt.Grace
		}
		return l, nil
	}
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("store URL: %w", err)
	}
	name := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
	var b *blob.Bucket
	prefix := strings.Trim(u.Path, "/")
	switch u.Scheme {
	case "s3":
		b, err = openS3(ctx, u)
	case "gs", "azblob":
		if tag, ok := optionalDrivers[u.Scheme]; ok && !tag.built {
			return nil, fmt.Errorf("store URL %s: this bs is built without %s:// (it adds about 20 MiB to every run's memory); build it with: go install -tags %s ./cmd/bs", name, u.Scheme, tag.name)
		}
		v := *u
		v.Path = ""
		b, err = blob.OpenBucket(ctx, v.String())
	case "mem":
		if !opt.allowMem {
			return nil, errors.New("mem:// keeps blobs only in memory, lost when bs exits; use a directory or file:///ABS/DIR")
		}
		b, err = blob.OpenBucket(ctx, "mem://")
		prefix = ""
	case "file":
		if err := checkFileURL(u, opt.CacheDir); err != nil {
			return nil, err
		}
		if opt.MustExist {
			if fi, err := os.Stat(filepath.FromSlash(u.Path)); err != nil || !fi.IsDir() {
				return nil, fmt.Errorf("%w at %s", ErrNoStore, name)
			}
		}
		q := u.Query()
		for k, v := range map[string]string{"no_tmp_dir": "1", "create_dir": "1", "dir_file_mode": "0700"} {
			if !q.Has(k) {
				q.Set(k, v)
			}
		}
		v := *u
		v.RawQuery = q.Encode()
		b, err = blob.OpenBucket(ctx, v.String())
		prefix = ""
	default:
		return nil, fmt.Errorf("store URL %s: unsupported scheme %q (want s3, gs, azblob, file or mem)", name, u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", name, err)
	}
	if prefix != "" {
		b = blob.PrefixedBucket(b, prefix+"/")
	}
	indexCache := opt.IndexCache
	if indexCache == "" && u.Scheme != "mem" {
		indexCache = DefaultIndexCache(spec) // the endpoint included
	}
	c, err := NewCloud(b, CloudOptions{Name: name, Recipients: opt.Recipients, IdentityFiles: opt.IdentityFiles, CloseBucket: true, IndexCache: indexCache, RefreshAfter: opt.Grace})
	if err != nil {
		b.Close()
		return nil, err
	}
	if opt.CacheDir == "" {
		return c, nil
	}
	return NewCache(c, opt.CacheDir, opt.CacheSize)
}

// checkFileURL refuses a file URL that fileblob would take to mean
// something else than it says: a host (file://name/dir is /dir, whatever
// the name), an empty path (the current directory), and a cache directory
// that overlaps the store's, whose eviction would delete blob files.
func checkFileURL(u *url.URL, cacheDir string) error {
	if u.Host != "" && u.Host != "localhost" {
		return fmt.Errorf("a file URL names no host: write file:///ABS/DIR (three slashes), e.g. file:///%s%s", u.Host, u.Path)
	}
	if u.Path == "" || u.Path == "/" {
		return errors.New("a file URL needs a directory: write file:///ABS/DIR (three slashes)")
	}
	if cacheDir == "" {
		return nil
	}
	store, err := realPath(filepath.FromSlash(u.Path))
	if err != nil {
		return err
	}
	cache, err := realPath(cacheDir)
	if err != nil {
		return err
	}
	if within(cache, store) || within(store, cache) {
		return fmt.Errorf("the cache directory %s overlaps the store's directory: its eviction would delete blobs; give --cache a directory of its own", cacheDir)
	}
	return nil
}

// realPath is p absolute, with symbolic links resolved as far as the
// path exists.
func realPath(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), nil
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(append([]string{p}, rest...)...), nil
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// within reports whether path p is dir or inside it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// openS3 opens an s3:// bucket as s3blob's URL opener does, but with
// the SDK's own retries off, since Cloud retries every call itself, and
// with path-style addressing by default when an endpoint is given, as
// S3-compatible servers on a host and port need.
func openS3(ctx context.Context, u *url.URL) (*blob.Bucket, error) {
	if u.Host == "" {
		return nil, errors.New("s3 URL names no bucket")
	}
	q := u.Query()
	pathStyle := q.Has("endpoint")
	var opts []func(*s3.Options)
	for _, k := range []string{"use_path_style", "s3ForcePathStyle"} {
		if v := q.Get(k); v != "" {
			q.Del(k)
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("invalid value for %s: %w", k, err)
			}
			pathStyle = b
		}
	}
	if v := q.Get("disable_https"); v != "" {
		q.Del("disable_https")
		b, err := strconv.ParseBool(v)
		if err != nil {
			return nil, fmt.Errorf("invalid value for disable_https: %w", err)
		}
		opts = append(opts, func(o *s3.Options) { o.EndpointOptions.DisableHTTPS = b })
	}
	// Every blob's digest is verified on read, so the SDK's own CRC of
	// each request and response body is only a cost (a fifth of the CPU
	// of bs extract) unless the URL asks for it.
	for _, k := range []string{"request_checksum_calculation", "response_checksum_validation"} {
		if !q.Has(k) {
			q.Set(k, "when_required")
		}
	}
	cfg, err := gcaws.V2ConfigFromURLParams(ctx, q)
	if err != nil {
		return nil, err
	}
	cfg.Retryer = func() aws.Retryer { return aws.NopRetryer{} }
	// bs extract keeps many Puts in flight; keep as many connections
	// open rather than dialing anew for each request.
	cfg.HTTPClient = awshttp.NewBuildableClient().WithTransportOptions(func(t *http.Transport) {
		t.MaxIdleConns = 256
		t.MaxIdleConnsPerHost = 64
	})
	cfg.RetryMaxAttempts = 0
	opts = append(opts, func(o *s3.Options) { o.UsePathStyle = pathStyle })
	client := s3.NewFromConfig(cfg, opts...)
	return s3blob.OpenBucket(ctx, client, u.Host, &s3blob.Options{RequestChecksumCalculation: cfg.RequestChecksumCalculation})
}
