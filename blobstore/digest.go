package blobstore

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Digest is the SHA-256 of a blob's uncompressed bytes.
type Digest [32]byte

// digestPrefix names the hash algorithm in a digest's string form, so the
// form stays unambiguous should another algorithm ever be added.
const digestPrefix = "sha256:"

// Sum returns the digest of data.
func Sum(data []byte) Digest {
	return Digest(sha256.Sum256(data))
}

// ParseDigest parses the form produced by [Digest.String]: "sha256:"
// followed by exactly 64 lowercase hex digits. Anything else, including
// uppercase hex, is an error, so that each digest has exactly one spelling.
func ParseDigest(s string) (Digest, error) {
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok {
		return Digest{}, fmt.Errorf("invalid digest %q: missing %q prefix", clip(s), digestPrefix)
	}
	d, err := parseHex(hexPart)
	if err != nil {
		return Digest{}, fmt.Errorf("invalid digest %q: %w", clip(s), err)
	}
	return d, nil
}

// String returns "sha256:" followed by the 64 lowercase hex digits of d.
func (d Digest) String() string {
	return digestPrefix + d.Hex()
}

// Hex returns the 64 lowercase hex digits of d, without the "sha256:" prefix.
func (d Digest) Hex() string {
	return hex.EncodeToString(d[:])
}

// parseHex decodes exactly 64 lowercase hex digits.
func parseHex(s string) (Digest, error) {
	var d Digest
	if len(s) != 2*len(d) {
		return d, fmt.Errorf("want %d hex digits, got %d characters", 2*len(d), len(s))
	}
	if !isLowerHex(s) {
		return d, errors.New("not lowercase hex")
	}
	// Cannot fail: length and alphabet were checked above.
	_, _ = hex.Decode(d[:], []byte(s))
	return d, nil
}

// isLowerHex reports whether s is non-empty and consists only of 0-9 and a-f.
func isLowerHex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// clip shortens s for inclusion in an error message, since ParseDigest may
// be handed arbitrary (possibly huge) input.
func clip(s string) string {
	const maxLen = 80
	if len(s) <= maxLen {
		return s
	}
	return s[:maxLen] + "..."
}
