package blobstore_test

import (
	"strings"
	"testing"

	"github.com/bstools/bs/blobstore"
)

func TestDigestRoundTrip(t *testing.T) {
	// SHA-256 of the empty string, a well-known constant.
	const empty = "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	d := blobstore.Sum(nil)
	if got := d.String(); got != empty {
		t.Fatalf("Sum(nil).String() = %q, want %q", got, empty)
	}
	if got, want := d.Hex(), strings.TrimPrefix(empty, "sha256:"); got != want {
		t.Fatalf("Hex() = %q, want %q", got, want)
	}
	for _, data := range []string{"", "a", "hello, world\n"} {
		d := blobstore.Sum([]byte(data))
		got, err := blobstore.ParseDigest(d.String())
		if err != nil {
			t.Fatalf("ParseDigest(%q): %v", d, err)
		}
		if got != d {
			t.Fatalf("ParseDigest(%q) = %s", d, got)
		}
	}
}

func TestParseDigestRejects(t *testing.T) {
	hex := blobstore.Sum([]byte("x")).Hex()
	tests := map[string]string{
		"empty":            "",
		"no prefix":        hex,
		"wrong prefix":     "sha512:" + hex,
		"uppercase prefix": "SHA256:" + hex,
		"prefix only":      "sha256:",
		"uppercase hex":    "sha256:" + strings.ToUpper(hex),
		"short":            "sha256:" + hex[:63],
		"long":             "sha256:" + hex + "0",
		"non-hex":          "sha256:" + hex[:63] + "g",
		"space":            " sha256:" + hex,
		"trailing newline": "sha256:" + hex + "\n",
		"double prefix":    "sha256:sha256:" + hex,
		"multibyte":        "sha256:" + hex[:62] + "é",
		"missing colon":    "sha256" + hex,
	}
	for name, s := range tests {
		if d, err := blobstore.ParseDigest(s); err == nil {
			t.Errorf("%s: ParseDigest(%q) = %s, want an error", name, s, d)
		}
	}
}

func TestParseDigestErrorIsReadable(t *testing.T) {
	_, err := blobstore.ParseDigest("md5:" + strings.Repeat("0", 1000))
	if err == nil {
		t.Fatal("ParseDigest accepted an md5 digest")
	}
	if msg := err.Error(); len(msg) > 200 || !strings.HasPrefix(msg, "invalid digest") {
		t.Errorf("error message %q should be short and start with %q", msg, "invalid digest")
	}
}
