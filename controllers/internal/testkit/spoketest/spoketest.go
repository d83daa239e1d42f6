// Package spoketest runs the spoke controller inside a test: a manager between
// a hub and a managed cluster's local API servers, stopped when the test ends
// (Start), or for the whole of a package's tests (Run, from a TestMain). It is
// test support, imported by test files only.
package spoketest

import (
	"context"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/spoke"
)

// Running is a spoke started by Start.
type Running struct {
	done chan struct{}
	err  error
}

// Stopped reports whether the spoke's manager has returned, and its error.
func (r *Running) Stopped() (bool, error) {
	select {
	case <-r.done:
		return true, r.err
	default:
		return false, nil
	}
}

// Options are the spoke's test options for cluster — no metrics or probe
// listeners — which configure, when not nil, may change.
func Options(cluster string, configure func(*spoke.ManagerOptions)) spoke.ManagerOptions {
	o := spoke.DefaultManagerOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.ClusterName = cluster
	if configure != nil {
		configure(&o)
	}
	return o
}

// Run builds the spoke controller with o, between the hub at hubCfg and the
// managed cluster at managedCfg, and starts it until ctx ends. stopped
// receives what the manager's Start returned once it has stopped.
func Run(ctx context.Context, hubCfg, managedCfg *rest.Config, o spoke.ManagerOptions) (stopped <-chan error, err error) {
	mgr, err := spoke.NewManager(ctx, hubCfg, managedCfg, o)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return done, nil
}

// Start builds and starts the spoke controller of cluster, between the hub at
// hubCfg and the managed cluster at managedCfg, with test options (Options).
// It stops when the test ends.
func Start(t testing.TB, hubCfg, managedCfg *rest.Config, cluster string) *Running {
	t.Helper()
	return StartWith(t, hubCfg, managedCfg, cluster, nil)
}

// StartWith is Start with the test options changed by configure, when not nil.
func StartWith(t testing.TB, hubCfg, managedCfg *rest.Config, cluster string, configure func(*spoke.ManagerOptions)) *Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stopped, err := Run(ctx, hubCfg, managedCfg, Options(cluster, configure))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &Running{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = <-stopped
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}
