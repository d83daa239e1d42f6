//go:build !linux

package localplane

import "os/exec"

// dieWithParent does nothing where the kernel cannot tie a process's life to
// its parent's: Process.Stop ends it.
func dieWithParent(*exec.Cmd) {}
