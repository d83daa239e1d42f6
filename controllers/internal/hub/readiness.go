package hub

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// controllerStarts is the hub's readiness check "controllers": the hub is
// ready when it can act, that is when every controller it registered has
// synced the caches of what it watches and started its workers, so that a
// user's write made after /readyz answers 200 is acted on at once.
//
// A controller's workers take requests from its queue only once
// controller-runtime has started every source of the controller and seen it
// synced: its Start waits for all of them before it launches the workers.
// So each controller registered here (complete) gets one more source, which
// puts startProbe on the controller's queue when the sources start, and a
// reconciler that takes startProbe, when a worker hands it over, as the
// moment the controller can act; it reaches no other reconciler. The probe
// is a request for no object (no object's name has a slash), handled once
// per controller (controller-runtime's reconcile metrics count it); the
// controller's queue is controller-runtime's default, built by
// controller-runtime.
//
// Under leader election the check is not registered (NewManager): every hub
// process serves the placement webhook and /explain, whose readiness is the
// placement engine's, and a standby that wins the election must not leave the
// webhook's Service without endpoints while its caches sync.
type controllerStarts struct {
	mu      sync.Mutex
	pending []string
}

// startProbe is the request that tells a controller's reconciler that its
// sources synced and its workers run.
var startProbe = reconcile.Request{NamespacedName: types.NamespacedName{Name: "fleetpolicy.io/controller-started"}}

// complete builds b as the controller named name, reconciling with r, and
// makes the hub not ready until the controller has started.
func (s *controllerStarts) complete(name string, b *builder.Builder, r reconcile.Reconciler) error {
	s.expect(name)
	return b.Named(name).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
			q.Add(startProbe)
			return nil
		})).
		Complete(s.reconciler(name, r))
}

// reconciler is r for the controller named name, but for startProbe, which
// marks the controller started and reaches no further.
func (s *controllerStarts) reconciler(name string, r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		if req == startProbe {
			s.started(name)
			return reconcile.Result{}, nil
		}
		return r.Reconcile(ctx, req)
	})
}

// expect makes the hub not ready until the controller named name has started.
func (s *controllerStarts) expect(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, name)
}

func (s *controllerStarts) started(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = slices.DeleteFunc(s.pending, func(n string) bool { return n == name })
}

// Check is the readiness check (healthz.Checker).
func (s *controllerStarts) Check(*http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		return fmt.Errorf("controllers not started yet (caches syncing): %v", s.pending)
	}
	return nil
}
