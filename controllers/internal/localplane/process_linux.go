//go:build linux

package localplane

import (
	"os/exec"
	"syscall"
)

// dieWithParent makes the process of cmd get SIGKILL when the process that
// started it dies, even when a test binary is killed.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
