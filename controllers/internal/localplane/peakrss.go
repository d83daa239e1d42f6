package localplane

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// PeakRSS is the peak resident set size, in bytes, of the running process pid
// (VmHWM in /proc/pid/status), for benchmarks of controller processes. Read it
// before the process ends: rusage's maxrss of a child is no use here, because Go
// starts children with vfork semantics and Linux carries the parent's peak into
// the child's maxrss at exec, so a child of a benchmark that holds more memory
// than the child would report the benchmark's peak.
func PeakRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		value, ok := strings.CutPrefix(lines.Text(), "VmHWM:")
		if !ok {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/%d/status: VmHWM %q: %w", pid, value, err)
		}
		return kib * 1024, nil
	}
	if err := lines.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("/proc/%d/status has no VmHWM", pid)
}
