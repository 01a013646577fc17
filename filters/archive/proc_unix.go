//go:build unix

package archive

import (
	"os/exec"
	"syscall"
)

// setProcessGroup runs the command in its own process group, so a timeout
// ends the shell and everything it started.
func setProcessGroup(c *exec.Cmd) {
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error {
		if c.Process == nil {
			return nil
		}
		return syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
	}
}
