package xdg

import (
	"path/filepath"
	"testing"
)

// TestDirs: each directory is bs's under its variable when it is set, and
// under the variable's default in the home directory when it is not.
func TestDirs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, c := range []struct {
		env, fallback string
		dir           func() string
	}{
		{"XDG_DATA_HOME", ".local/share", Data},
		{"XDG_STATE_HOME", ".local/state", State},
		{"XDG_CONFIG_HOME", ".config", Config},
	} {
		t.Setenv(c.env, "/base")
		if got, want := c.dir(), filepath.Join("/base", "bs"); got != want {
			t.Errorf("with %s set, %q, want %q", c.env, got, want)
		}
		t.Setenv(c.env, "")
		if got, want := c.dir(), filepath.Join(home, filepath.FromSlash(c.fallback), "bs"); got != want {
			t.Errorf("without %s, %q, want %q", c.env, got, want)
		}
	}
}
