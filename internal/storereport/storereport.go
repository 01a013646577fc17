// Package storereport prints what bs store finds: the summary of stats,
// the problems and the count of verify, the blobs of list and the result
// of repack, each as text or as JSON. The warnings and errors about them
// are the command line's.
package storereport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/bstools/bs/blobstore"
)

// WriteStats prints the summary of the store named store.
func WriteStats(w io.Writer, store string, sum blobstore.Summary, asJSON bool) error {
	if asJSON {
		b, _ := json.Marshal(struct {
			Store string `json:"store"`
			blobstore.Summary
			Ratio float64 `json:"compression_ratio"`
		}{store, sum, round2(sum.CompressionRatio())})
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}
	fmt.Fprintf(w, "store        %s\n", store)
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
	fmt.Fprintf(w, "packed       %d blobs in %d packs (%d bytes), %d index files, %d extra copies\n", sum.Packed, sum.Packs, sum.PackBytes, sum.Indexes, sum.Copies)
	_, err := fmt.Fprintf(w, "loose        %d blobs\n", sum.Loose)
	return err
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }

// WriteProblem prints a problem verify found: a line naming the pack of a
// blob's copy, or a JSON object with its kind (corrupt, undecryptable, or
// damaged: an index file or a pack trailer).
func WriteProblem(w io.Writer, p blobstore.Problem, asJSON bool) {
	kind := "corrupt"
	switch {
	case p.Digest == blobstore.Digest{}:
		kind = "damaged"
	case !errors.Is(p.Err, blobstore.ErrCorrupt):
		kind = "undecryptable"
	}
	if asJSON {
		m := map[string]string{"problem": kind, "error": p.Err.Error()}
		for k, v := range map[string]string{"blob": digestOrEmpty(p.Digest), "pack": p.Pack, "index": p.Index} {
			if v != "" {
				m[k] = v
			}
		}
		b, _ := json.Marshal(m)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	if p.Pack != "" && kind != "damaged" {
		fmt.Fprintf(w, "%v (in pack %s)\n", p.Err, p.Pack)
	} else {
		fmt.Fprintln(w, p.Err)
	}
}

// digestOrEmpty is d's string, or "" for the zero digest (a problem of
// an index or a pack trailer, not of a blob).
func digestOrEmpty(d blobstore.Digest) string {
	if d == (blobstore.Digest{}) {
		return ""
	}
	return d.String()
}

// WriteVerify prints what verify counted.
func WriteVerify(w io.Writer, res blobstore.VerifyResult, asJSON bool) {
	if asJSON {
		b, _ := json.Marshal(res)
		fmt.Fprintf(w, "%s\n", b)
		return
	}
	fmt.Fprintf(w, "checked %d blobs: %d corrupt, %d undecryptable", res.Checked, res.Corrupt, res.Undecryptable)
	if res.Damaged > 0 {
		fmt.Fprintf(w, ", %d index files, pack trailers or packs damaged or missing", res.Damaged)
	}
	fmt.Fprintln(w)
}

// WriteCopies prints where blob d's copies are: a JSON object, or a line
// a copy (digest, stored bytes, data bytes or ?, and its pack and offset
// or loose).
func WriteCopies(w io.Writer, d blobstore.Digest, copies []blobstore.Copy, asJSON bool) error {
	if asJSON {
		b, _ := json.Marshal(struct {
			Blob   string           `json:"blob"`
			Copies []blobstore.Copy `json:"copies"`
		}{d.String(), copies})
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}
	for _, cp := range copies {
		where := "loose"
		if cp.Pack != "" {
			where = fmt.Sprintf("pack %s @%d", cp.Pack, cp.Offset)
		}
		size := "?"
		if cp.Size >= 0 {
			size = strconv.FormatInt(cp.Size, 10)
		}
		if _, err := fmt.Fprintf(w, "%s %d %s %s\n", d, cp.Stored, size, where); err != nil {
			return err
		}
	}
	return nil
}

// WriteRepack prints what repack did, or with dryRun would do.
func WriteRepack(w io.Writer, res blobstore.RepackResult, dryRun, asJSON bool) error {
	if asJSON {
		b, _ := json.Marshal(struct {
			DryRun bool `json:"dry_run"`
			blobstore.RepackResult
			Damaged int `json:"damaged"`
		}{dryRun, res, len(res.Damaged)})
		_, err := fmt.Fprintf(w, "%s\n", b)
		return err
	}
	verb := "repacked"
	if dryRun {
		verb = "would repack"
	}
	_, err := fmt.Fprintf(w, "%s: %d small packs merged, %d loose blobs packed, %d packs indexed from their trailers; packs %d -> %d, index files %d -> 1, bytes %d -> %d\n",
		verb, res.Merged, res.Loose, res.Reindexed, res.PacksBefore, res.PacksAfter, res.IndexBefore, res.BytesBefore, res.BytesAfter)
	return err
}
