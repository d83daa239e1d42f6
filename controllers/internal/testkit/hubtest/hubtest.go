// Package hubtest runs the hub controller inside a test: a manager against a
// local API server, stopped when the test ends or when the test asks (Start),
// or for the whole of a package's tests (Run, from a TestMain). It is test
// support, imported by test files only.
package hubtest

import (
	"context"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
)

// Running is a hub started by Start.
type Running struct {
	// Manager is the hub's manager (for Elected, say).
	Manager ctrl.Manager
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// Stop stops the hub and waits until it has stopped; later calls do nothing.
func (r *Running) Stop() {
	r.once.Do(func() {
		r.cancel()
		<-r.done
	})
}

// Options are the hub's test options — no metrics or probe listeners,
// restartable within one process, placement off (it needs webhook
// certificates), replica status gathered for 50ms — which configure, when not
// nil, may change.
func Options(configure func(*hub.ManagerOptions)) hub.ManagerOptions {
	o := hub.DefaultManagerOptions()
	o.MetricsAddr, o.ProbeAddr = "0", "0"
	o.SkipControllerNameValidation = true
	o.Placement = false
	o.StatusBatchDelay = 50 * time.Millisecond
	if configure != nil {
		configure(&o)
	}
	return o
}

// Run builds the hub against cfg with o and starts it until ctx ends. stopped
// receives what the manager's Start returned once it has stopped.
func Run(ctx context.Context, cfg *rest.Config, o hub.ManagerOptions) (mgr ctrl.Manager, stopped <-chan error, err error) {
	mgr, err = hub.NewManager(ctx, cfg, o)
	if err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	return mgr, done, nil
}

// Start builds and starts the hub against cfg with Options(configure). The
// hub stops when the test ends.
func Start(t testing.TB, cfg *rest.Config, configure func(*hub.ManagerOptions)) *Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	mgr, stopped, err := Run(ctx, cfg, Options(configure))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	r := &Running{Manager: mgr, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		if err := <-stopped; err != nil {
			// A runnable that outlived the grace period: show where it hangs.
			var stacks strings.Builder
			_ = pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Errorf("hub: %v\ngoroutines:\n%s", err, stacks.String())
		}
	}()
	t.Cleanup(r.Stop)
	return r
}
