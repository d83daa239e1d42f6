package hub

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// settledRoots lets a reconcile of a root policy that only its replicas'
// compliance reports brought back keep to the root's status.
//
// Every event the propagator watches but a replica's status report bumps the
// epoch of each root it enqueues, before enqueuing it. A full reconcile reads
// the epoch before it reads anything else and, when it ended with every
// replica as it should be and nothing to retry, marks the root settled at
// that epoch. A later reconcile that finds the root settled at the current
// epoch, with the same uid and generation, knows that since then only
// replica statuses changed. Unless the root has hub templates (which may read
// anything), reports change what its replicas should be only by making the
// rollout step reach clusters; a step that reaches none changes the root's
// status alone, so the reconcile skips the RolloutPlan comparison and the
// replica plan (see Propagator.reconcile) and, after the first status-only
// reconcile of an epoch, resolving the bindings (keep). An event missed here
// costs at most one reconcile: the event's own request runs with the bumped
// epoch.
type settledRoots struct {
	mu      sync.Mutex
	epochs  map[types.NamespacedName]uint64
	settled map[types.NamespacedName]settledAt
}

// settledAt is the epoch, uid and generation a root settled at, and what its
// bindings resolved to at that epoch once a status-only reconcile kept it.
type settledAt struct {
	epoch      uint64
	uid        types.UID
	generation int64
	bound      *boundInputs
}

func (a settledAt) same(b settledAt) bool {
	return a.epoch == b.epoch && a.uid == b.uid && a.generation == b.generation
}

func newSettledRoots() *settledRoots {
	return &settledRoots{epochs: map[types.NamespacedName]uint64{}, settled: map[types.NamespacedName]settledAt{}}
}

// bump records an event that may change what a reconcile of root writes.
func (s *settledRoots) bump(root types.NamespacedName) {
	s.mu.Lock()
	s.epochs[root]++
	s.mu.Unlock()
}

// epoch is root's current epoch.
func (s *settledRoots) epoch(root types.NamespacedName) uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.epochs[root]
}

// isSettled reports whether the root settled at epoch, as it is now.
func (s *settledRoots) isSettled(epoch uint64, root *policyv1.Policy) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.settled[client.ObjectKeyFromObject(root)].same(settledAt{epoch: epoch, uid: root.UID, generation: root.Generation})
}

// bound is what root's bindings resolved to at epoch, if root is settled at
// epoch and a status-only reconcile kept it; nil otherwise.
func (s *settledRoots) bound(epoch uint64, root *policyv1.Policy) *boundInputs {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := s.settled[client.ObjectKeyFromObject(root)]
	if !at.same(settledAt{epoch: epoch, uid: root.UID, generation: root.Generation}) {
		return nil
	}
	return at.bound
}

// keep records what root's bindings resolved to at epoch, for the next
// status-only reconcile, if root is still settled at epoch. Nothing they
// resolve from has changed since then: every such change bumps the epoch.
func (s *settledRoots) keep(root *policyv1.Policy, epoch uint64, bound *boundInputs) {
	key := client.ObjectKeyFromObject(root)
	s.mu.Lock()
	defer s.mu.Unlock()
	if at := s.settled[key]; at.same(settledAt{epoch: epoch, uid: root.UID, generation: root.Generation}) {
		at.bound = bound
		s.settled[key] = at
	}
}

// settle marks root settled at epoch (keeping what a status-only reconcile
// kept at that epoch), or not settled.
func (s *settledRoots) settle(root *policyv1.Policy, epoch uint64, settled bool) {
	key := client.ObjectKeyFromObject(root)
	s.mu.Lock()
	defer s.mu.Unlock()
	if !settled {
		delete(s.settled, key)
		return
	}
	at := settledAt{epoch: epoch, uid: root.UID, generation: root.Generation}
	if was := s.settled[key]; was.same(at) {
		at.bound = was.bound
	}
	s.settled[key] = at
}

// forget drops what is known of a root that is gone. Its epoch is dropped
// with its settled mark, so that no later root of the name finds both again.
func (s *settledRoots) forget(root types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.epochs, root)
	delete(s.settled, root)
}

// bumping is mapFn that first bumps the epoch of every root it maps to.
func (s *settledRoots) bumping(mapFn handler.MapFunc) handler.MapFunc {
	return func(ctx context.Context, o client.Object) []reconcile.Request {
		requests := mapFn(ctx, o)
		for _, r := range requests {
			s.bump(r.NamespacedName)
		}
		return requests
	}
}

// itself maps an object to the root policy of its own namespace and name.
func itself(_ context.Context, o client.Object) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKeyFromObject(o)}}
}
