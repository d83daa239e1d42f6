package benchtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/functions/internal/krmtest"
)

// BenchmarkKitAgainstSDK is what package krm, which stands in for parts of
// kyaml and the kpt function SDK, earns over the SDK (issue 17): on the 10,000
// Policies of validate-dependencies' input, the kit's identity
// (internal/krmtest/identity) and validate-dependencies itself, each against
// the SDK's identity (internal/benchtest/sdkidentity, fn.AsMain changing
// nothing) on the same input, the two alternating run by run. Each is a built
// binary reading the ResourceList on stdin and writing it to a pipe, as the
// functions run. Figures: wall time (the SDK identity's is the floor,
// x-sdk-identity the ratio), peak RSS (sdk-identity-MiB-peak-rss, ratio
// x-sdk-identity-peak-rss), and CPU time, user and system
// (sdk-identity-cpu-s/run, ratio x-sdk-identity-cpu), which a loaded machine
// disturbs less than wall time. The target of the wall-time and peak-RSS
// ratios is at most 1: the kit no slower and no larger than the SDK it
// replaces.
func BenchmarkKitAgainstSDK(b *testing.B) {
	sdk := krmtest.BuildFunction(b, "internal/benchtest/sdkidentity")
	rl := resourceList([]byte(dependencyChains(10000)), []byte(config("ValidateDependencies", "")))
	for _, kit := range []string{"internal/krmtest/identity", "validate-dependencies"} {
		binary := krmtest.BuildFunction(b, kit)
		name := kit
		if kit == "internal/krmtest/identity" {
			name = "identity"
		}
		b.Run(name+"/10000", func(b *testing.B) {
			var kitRun, sdkRun measurement
			for range b.N {
				kitRun = kitRun.add(measure(b, binary, rl))
				sdkRun = sdkRun.add(measure(b, sdk, rl))
			}
			b.ReportMetric(kitRun.Wall.Seconds()/float64(b.N), "s/run")
			b.ReportMetric(sdkRun.Wall.Seconds()/float64(b.N), "floor-s/run")
			b.ReportMetric(float64(kitRun.Wall)/float64(sdkRun.Wall), "x-sdk-identity")
			b.ReportMetric(float64(kitRun.PeakRSS)/float64(b.N)/(1<<20), "MiB-peak-rss")
			b.ReportMetric(float64(sdkRun.PeakRSS)/float64(b.N)/(1<<20), "sdk-identity-MiB-peak-rss")
			b.ReportMetric(float64(kitRun.PeakRSS)/float64(sdkRun.PeakRSS), "x-sdk-identity-peak-rss")
			b.ReportMetric(kitRun.CPU.Seconds()/float64(b.N), "cpu-s/run")
			b.ReportMetric(sdkRun.CPU.Seconds()/float64(b.N), "sdk-identity-cpu-s/run")
			b.ReportMetric(float64(kitRun.CPU)/float64(sdkRun.CPU), "x-sdk-identity-cpu")
		})
	}
}

// measurement is the wall time, CPU time and peak RSS of one run of a binary,
// or the sums of several.
type measurement struct {
	Wall, CPU time.Duration
	PeakRSS   int64 // bytes
	// LauncherPeakRSS is the peak RSS of the launcher that started the binary.
	LauncherPeakRSS int64 `json:",omitempty"`
}

func (m measurement) add(o measurement) measurement {
	return measurement{Wall: m.Wall + o.Wall, CPU: m.CPU + o.CPU, PeakRSS: m.PeakRSS + o.PeakRSS}
}

// The launcher is this test binary run again with launchEnv set to the binary
// to measure and reportEnv to the file to write the measurement to.
const (
	launchEnv = "FLEETPOLICY_BENCH_LAUNCH"
	reportEnv = "FLEETPOLICY_BENCH_LAUNCH_REPORT"
)

func TestMain(m *testing.M) {
	if binary := os.Getenv(launchEnv); binary != "" {
		os.Exit(launch(binary, os.Getenv(reportEnv)))
	}
	os.Exit(m.Run())
}

// measure runs binary on the ResourceList rl through the launcher and returns
// the binary's wall time, CPU time and peak RSS.
//
// The peak is rusage's maxrss of the binary, taken by a launcher, a fresh
// process of a few MiB: Go starts a child with vfork semantics, and Linux
// carries the parent's peak into the child's maxrss at exec, so a binary
// started by the benchmark, which holds the input and the outputs, could
// report the benchmark's peak. Started by the launcher, it reports the larger
// of its own peak and the launcher's, and the run fails unless its own is the
// larger.
func measure(b *testing.B, binary string, rl []byte) measurement {
	launcher, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	report := b.TempDir() + "/measurement.json"
	cmd := exec.Command(launcher)
	cmd.Env = append(os.Environ(), launchEnv+"="+binary, reportEnv+"="+report)
	cmd.Stdin = bytes.NewReader(rl)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", binary, err, stderr.String())
	}
	if !bytes.HasPrefix(stdout.Bytes(), []byte("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\n")) {
		b.Fatalf("%s wrote no ResourceList:\n%.300s", binary, stdout.String())
	}
	raw, err := os.ReadFile(report)
	if err != nil {
		b.Fatal(err)
	}
	var m measurement
	if err := json.Unmarshal(raw, &m); err != nil {
		b.Fatalf("%s: %v", report, err)
	}
	if m.PeakRSS <= m.LauncherPeakRSS {
		b.Fatalf("%s: peak RSS %d bytes is no more than its launcher's (%d): it is not the binary's own", binary, m.PeakRSS, m.LauncherPeakRSS)
	}
	return m
}

// launch runs binary with the launcher's standard streams, writes its
// measurement to the file report, and returns its exit code.
func launch(binary, report string) int {
	cmd := exec.Command(binary)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	err := cmd.Run()
	m := measurement{Wall: time.Since(start)}
	if err != nil {
		fmt.Fprintf(os.Stderr, "launcher: %s: %v\n", binary, err)
		return 1
	}
	usage, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Fprintln(os.Stderr, "launcher: no rusage")
		return 1
	}
	m.PeakRSS = usage.Maxrss * 1024 // KiB on Linux
	m.CPU = time.Duration(usage.Utime.Nano() + usage.Stime.Nano())
	if m.LauncherPeakRSS, err = ownPeakRSS(); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 1
	}
	raw, _ := json.Marshal(m)
	if err := os.WriteFile(report, raw, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		return 1
	}
	return 0
}

// vmHWM is the peak RSS line of /proc/<pid>/status.
var vmHWM = regexp.MustCompile(`(?m)^VmHWM:\s*(\d+) kB$`)

// ownPeakRSS is this process's peak RSS in bytes: its memory's high-water
// mark, not rusage's maxrss, which counts the parent's peak at exec.
func ownPeakRSS() (int64, error) {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	match := vmHWM.FindSubmatch(status)
	if match == nil {
		return 0, fmt.Errorf("/proc/self/status has no VmHWM")
	}
	kib, err := strconv.ParseInt(string(match[1]), 10, 64)
	return kib * 1024, err
}
