//go:build unix

package output

import (
	"errors"
	"syscall"
)

// isQuotaError is whether err is a disk quota exceeded.
func isQuotaError(err error) bool { return errors.Is(err, syscall.EDQUOT) }
