// Package xdg is where bs keeps its files by default: its directory, bs,
// under each XDG base directory (the XDG Base Directory Specification),
// or under the base directory's default in the home directory when the
// variable is not set.
package xdg

import (
	"os"
	"path/filepath"
)

// Data is $XDG_DATA_HOME/bs, else ~/.local/share/bs: the blob store.
func Data() string { return dir("XDG_DATA_HOME", ".local/share") }

// State is $XDG_STATE_HOME/bs, else ~/.local/state/bs: the index,
// checkpoints, locks, watch's state.
func State() string { return dir("XDG_STATE_HOME", ".local/state") }

// Config is $XDG_CONFIG_HOME/bs, else ~/.config/bs: the configuration.
func Config() string { return dir("XDG_CONFIG_HOME", ".config") }

// dir is bs's directory under the base directory named by env, or under
// fallback in the home directory (relative to the working directory when
// there is no home).
func dir(env, fallback string) string {
	if d := os.Getenv(env); d != "" {
		return filepath.Join(d, "bs")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = ""
	}
	return filepath.Join(home, filepath.FromSlash(fallback), "bs")
}
