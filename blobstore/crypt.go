package blobstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
)

// ErrNoIdentity is matched (via [errors.Is]) by the error returned when a
// blob is encrypted and none of the store's identities can decrypt it, or
// the store was opened with none. It is not [ErrCorrupt]: the blob may be
// intact, the reader just lacks the key.
var ErrNoIdentity = errors.New("no identity can decrypt the blob")

// ageMagic starts every age file; a zstd frame starts with 28 b5 2f fd, so
// the two stored forms cannot be mistaken for each other.
var ageMagic = []byte("age-encryption.org/")

// crypter seals stored forms to age recipients and opens them with age
// identities. A nil *crypter seals nothing and can open nothing encrypted.
type crypter struct {
	recipients []age.Recipient
	identities []age.Identity
}

// newCrypter parses recipients (age1… public keys, as age -r takes them)
// and reads identities from files (age -i key files: AGE-SECRET-KEY-1…
// lines, # comments). It returns nil when both are empty.
func newCrypter(recipients, identityFiles []string) (*crypter, error) {
	if len(recipients) == 0 && len(identityFiles) == 0 {
		return nil, nil
	}
	c := &crypter{}
	for _, r := range recipients {
		rs, err := age.ParseRecipients(strings.NewReader(r))
		if err != nil {
			return nil, fmt.Errorf("recipient %q: %w", clip(r), err)
		}
		c.recipients = append(c.recipients, rs...)
	}
	for _, name := range identityFiles {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("identity file: %w", err)
		}
		ids, err := age.ParseIdentities(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("identity file %s: %w", name, err)
		}
		c.identities = append(c.identities, ids...)
	}
	return c, nil
}

// encrypts reports whether Put encrypts.
func (c *crypter) encrypts() bool { return c != nil && len(c.recipients) > 0 }

// canOpen reports whether the store holds identities to decrypt with.
func (c *crypter) canOpen() bool { return c != nil && len(c.identities) > 0 }

// seal returns the stored form of compressed data: itself, or its age
// encryption when the store has recipients.
func (c *crypter) seal(compressed []byte) ([]byte, error) {
	if !c.encrypts() {
		return compressed, nil
	}
	var buf bytes.Buffer
	buf.Grow(len(compressed) + 256 + len(c.recipients)*128)
	w, err := age.Encrypt(&buf, c.recipients...)
	if err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if _, err := w.Write(compressed); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("encrypt: %w", err)
	}
	return buf.Bytes(), nil
}

// isEncrypted reports whether a stored form is age-encrypted.
func isEncrypted(stored []byte) bool { return bytes.HasPrefix(stored, ageMagic) }

// open returns the compressed form of blob d from its stored form,
// decrypting it if it is encrypted. A blob encrypted to none of the
// identities is ErrNoIdentity; a damaged one (header or payload fails
// authentication) is ErrCorrupt.
func (c *crypter) open(d Digest, stored []byte) ([]byte, error) {
	if !isEncrypted(stored) {
		return stored, nil
	}
	r, err := c.decrypt(d, bytes.NewReader(stored))
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(stored))
	buf := bytes.NewBuffer(out)
	if _, err := io.Copy(buf, r); err != nil {
		return nil, corrupt(d, "cannot decrypt: "+err.Error(), err)
	}
	return buf.Bytes(), nil
}

// decrypt opens the age file stored (blob d's stored form) for reading,
// with open's errors.
func (c *crypter) decrypt(d Digest, stored io.Reader) (io.Reader, error) {
	if c == nil || len(c.identities) == 0 {
		return nil, &blobError{d: d, kind: ErrNoIdentity, detail: "it is encrypted and no identity was given"}
	}
	r, err := age.Decrypt(stored, c.identities...)
	var noMatch *age.NoIdentityMatchError
	if errors.As(err, &noMatch) {
		return nil, &blobError{d: d, kind: ErrNoIdentity, detail: "it is encrypted to none of the identities given", cause: err}
	}
	if err != nil {
		return nil, corrupt(d, "cannot decrypt: "+err.Error(), err)
	}
	return r, nil
}
