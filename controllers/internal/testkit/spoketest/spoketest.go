// Package spoketest runs the spoke controller inside a test: a manager between
// a hub and a managed cluster's local API servers, stopped when the test ends.
// It is test support, imported by test files only.
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

// Start builds and starts the spoke controller of cluster, between the hub at
// hubCfg and the managed cluster at managedCfg, with test options — no metrics
// or probe listeners. It stops when the test ends.
func Start(t testing.TB, hubCfg, managedCfg *rest.Config, cluster string) *Running {
	t.Helper()
	return StartWith(t, hubCfg, managedCfg, cluster, nil)
}

// StartWith is Start with the test options changed by configure, when not nil.
func StartWith(t testing.TB, hubCfg, managedCfg *rest.Config, cluster string, configure func(*spoke.ManagerOptions)) *Running {
	t.Helper()
	o := spoke.DefaultManagerOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.ClusterName = cluster
	if configure != nil {
		configure(&o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	mgr, err := spoke.NewManager(ctx, hubCfg, managedCfg, o)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &Running{done: make(chan struct{})}
	go func() {
		defer close(r.done)
		r.err = mgr.Start(ctx)
	}()
	t.Cleanup(func() { cancel(); <-r.done })
	return r
}
