package bytesize

import "testing"

func TestParse(t *testing.T) {
	for s, want := range map[string]int64{"1024": 1024, "512K": 512 << 10, "100m": 100 << 20, "1G": 1 << 30, "0": 0, "-1": -1} {
		if got, err := Parse(s); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "G", "1T", "1.5G", "9999999999G", "x"} {
		if got, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) = %d, want an error", s, got)
		}
	}
}
