package hub

import (
	"fmt"
	"net/http"
	"slices"
	"sync"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// controllerStarts is the hub's readiness check "controllers": the hub is
// ready when it can act, that is when every controller it registered has
// synced the caches of what it watches and started its workers, so that a
// user's write made after /readyz answers 200 is acted on at once.
//
// A controller's workers ask its queue for work only after controller-runtime
// has started every source of the controller and seen it synced, so the first
// such request, seen through the queue the controller is built with
// (controller.Options.NewQueue, controller-runtime's own priority queue), is
// the moment the controller can act.
//
// Under leader election the check is not registered (NewManager): every hub
// process serves the placement webhook and /explain, whose readiness is the
// placement engine's, and a standby that wins the election must not leave the
// webhook's Service without endpoints while its caches sync.
type controllerStarts struct {
	mu      sync.Mutex
	pending []string
}

// options returns o for the controller named name, with a queue that tells s
// when the controller starts; the hub is not ready until it has.
func (s *controllerStarts) options(name string, o controller.Options) controller.Options {
	s.mu.Lock()
	s.pending = append(s.pending, name)
	s.mu.Unlock()
	o.NewQueue = func(controllerName string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
		q := priorityqueue.New(controllerName, func(po *priorityqueue.Opts[reconcile.Request]) {
			po.RateLimiter = limiter
			po.Log = ctrl.Log.WithValues("controller", controllerName)
		})
		return &startSignallingQueue{PriorityQueue: q, started: func() { s.started(name) }}
	}
	return o
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

// startSignallingQueue is controller-runtime's priority queue that calls
// started once, the first time a worker asks it for work.
type startSignallingQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	once    sync.Once
	started func()
}

func (q *startSignallingQueue) GetWithPriority() (reconcile.Request, int, bool) {
	q.once.Do(q.started)
	return q.PriorityQueue.GetWithPriority()
}

func (q *startSignallingQueue) Get() (reconcile.Request, bool) {
	q.once.Do(q.started)
	return q.PriorityQueue.Get()
}
