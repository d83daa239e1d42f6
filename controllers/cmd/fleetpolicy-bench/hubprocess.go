package main

import (
	"fmt"
	"net/http"
	"os/exec"
	"syscall"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
)

// hubProcess is the hub controller running as a child process, so that its CPU
// and memory are its own.
type hubProcess struct {
	cmd *exec.Cmd
	// startup is the time from starting the process until /readyz answered 200.
	startup time.Duration
}

// startHub starts bin/fleetpolicy-hub against the bench plane without policy-based
// placement (no webhook), with args after the bench's own arguments, and returns
// when its /readyz answers 200, as a user (or a Deployment's readiness probe)
// would wait: the hub is ready when its caches are synced and its controllers
// started, so what the benchmark writes next is timed from when the hub can act.
func (b *bench) startHub(args ...string) (*hubProcess, error) {
	probes, err := localplane.FreeAddress()
	if err != nil {
		return nil, err
	}
	all := append([]string{"--kubeconfig", b.plane.KubeconfigPath, "--metrics-bind-address", "0",
		"--health-probe-bind-address", probes, "--placement=false", "--zap-log-level", "error"}, b.hubArgs...)
	cmd := exec.Command(b.hubBin, append(all, args...)...)
	cmd.Stdout, cmd.Stderr = b.hubLog, b.hubLog
	started := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	h := &hubProcess{cmd: cmd}
	if err := waitReady("http://"+probes+"/readyz", time.Minute); err != nil {
		h.stop()
		return nil, fmt.Errorf("hub: %w (its output is in the hub log)", err)
	}
	h.startup = time.Since(started)
	return h, nil
}

// waitReady polls url every 10ms until it answers 200.
func waitReady(url string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := "no answer"
	probe := &http.Client{Timeout: time.Second} // a hung probe must not outlast timeout
	for time.Now().Before(deadline) {
		resp, err := probe.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(10 * time.Millisecond)
	}
	return fmt.Errorf("%s not ready after %s: %s", url, timeout, last)
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
