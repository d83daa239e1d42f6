package main

import (
	"os/exec"
	"syscall"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

// hubProcess is the hub controller running as a child process, so that its CPU
// and memory are its own.
type hubProcess struct {
	cmd *exec.Cmd
}

// startHub starts bin/fleetpolicy-hub against the bench plane without policy-based
// placement (no webhook), with args after the bench's own arguments, and gives it
// two seconds to start and sync its caches.
func (b *bench) startHub(args ...string) (*hubProcess, error) {
	all := append([]string{"--kubeconfig", b.plane.KubeconfigPath, "--metrics-bind-address", "0",
		"--health-probe-bind-address", "0", "--placement=false", "--zap-log-level", "error"}, b.hubArgs...)
	cmd := exec.Command(b.hubBin, append(all, args...)...)
	cmd.Stdout, cmd.Stderr = b.hubLog, b.hubLog
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	time.Sleep(2 * time.Second)
	return &hubProcess{cmd: cmd}, nil
}

// stop ends the hub with SIGTERM and returns its CPU time (user + system) and
// peak RSS in bytes (localplane.PeakRSS, read just before) over its whole life.
// It may be called again (returns zero).
func (h *hubProcess) stop() (cpu time.Duration, rssBytes int64) {
	if h.cmd.ProcessState == nil {
		rssBytes, _ = localplane.PeakRSS(h.cmd.Process.Pid) // 0 if it has died: the run fails anyway
		_ = h.cmd.Process.Signal(syscall.SIGTERM)
		_ = h.cmd.Wait()
		if ru, ok := h.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		}
	}
	return cpu, rssBytes
}
