//go:build !unix

package archive

import "os/exec"

func setProcessGroup(c *exec.Cmd) {}
