package testkit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
)

// StartFleet starts a hub and n spokes for a test and stops them when the
// test ends. It fails the test when the control plane binaries are missing:
// run `make tools` (the Makefile's test targets do).
func StartFleet(t testing.TB, n int) *localplane.Fleet {
	t.Helper()
	f, err := localplane.StartFleet(context.Background(), n)
	FatalOrSkip(t, "starting local fleet", err)
	t.Cleanup(func() {
		if err := f.Stop(); err != nil {
			t.Logf("stopping local fleet: %v", err)
		}
	})
	return f
}

// FatalOrSkip ends a test whose API server or process did not start: skipped
// under go test -short (localplane.ErrShortTest), failed with what otherwise.
// A nil err does nothing.
func FatalOrSkip(t testing.TB, what string, err error) {
	t.Helper()
	if errors.Is(err, localplane.ErrShortTest) {
		t.Skipf("%s: %v", what, err)
	}
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// SkipsPackage says, in a TestMain whose package-wide API server did not
// start, whether the reason is go test -short; it then prints that the
// package's tests are skipped, and the TestMain exits 0 without running them.
func SkipsPackage(err error) bool {
	if !errors.Is(err, localplane.ErrShortTest) {
		return false
	}
	fmt.Println("skipping every test of the package:", err)
	return true
}

// RunPackage is the body of a TestMain whose package's tests share what
// start starts (API servers, controllers): it returns 0 without running the
// tests under go test -short, 1 with start's error on stderr when start
// fails, and otherwise m.Run()'s code. When it returns, start's context is
// cancelled (stopping the controllers started with it), then stop, when not
// nil, is called (stopping the API servers).
func RunPackage(m *testing.M, start func(ctx context.Context) (stop func(), err error)) int {
	ctx, cancel := context.WithCancel(context.Background())
	stop, err := start(ctx)
	defer func() {
		cancel()
		if stop != nil {
			stop()
		}
	}()
	if SkipsPackage(err) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// RunWithPlane is RunPackage for tests that share one API server: it starts
// the plane name, registers clusters on it (localplane.EnsureCluster) and
// calls setup, when not nil, to start what else the tests share (a
// controller, with ctx); the plane is stopped after the tests.
func RunWithPlane(m *testing.M, name string, clusters []string, setup func(ctx context.Context, p *localplane.Plane) error) int {
	return RunPackage(m, func(ctx context.Context) (func(), error) {
		p, err := localplane.Start(name)
		if err != nil {
			return nil, err
		}
		stop := func() {
			if err := p.Stop(); err != nil {
				fmt.Fprintln(os.Stderr, err)
			}
		}
		for _, cluster := range clusters {
			if err := localplane.EnsureCluster(ctx, p.Client, cluster); err != nil {
				return stop, err
			}
		}
		if setup != nil {
			err = setup(ctx, p)
		}
		return stop, err
	})
}

// LogStop waits for a controller started for a package's tests (hubtest.Run,
// spoketest.Run) to stop, and prints its error, if any, on stderr as what.
func LogStop(what string, stopped <-chan error) {
	if err := <-stopped; err != nil {
		fmt.Fprintln(os.Stderr, what+":", err)
	}
}

// Eventually polls check until it returns "" and fails the test with check's
// last answer when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, what string, check func() string) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if last = check(); last == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s: %s", what, last)
}

// NewManager is a controller-runtime manager against cfg for a test: the
// fleetpolicy scheme, no metrics or probe listeners, and controller names
// that may repeat within the process (a test may start a controller its
// TestMain runs too).
func NewManager(cfg *rest.Config) (ctrl.Manager, error) {
	return ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 scheme.New(),
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
}
