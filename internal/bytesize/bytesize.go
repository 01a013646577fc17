// Package bytesize reads the sizes bs's flags take: 1024, 512K, 100M, 1G.
package bytesize

import (
	"fmt"
	"strconv"
)

// Parse parses a number of bytes with an optional suffix K, M or G
// (either case; powers of 1024).
func Parse(s string) (int64, error) {
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
