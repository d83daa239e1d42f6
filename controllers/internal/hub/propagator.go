package hub

import (
	"context"
	"fmt"

	"golang.org/x/sync/semaphore"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/events"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// Event reasons on root policies.
const (
	reasonBindingInvalid = "BindingInvalid"
	// reasonPlacementDecisionInvalid: a PlacementDecision of a placement the
	// root is bound to has a decision-group-index label that is no index.
	reasonPlacementDecisionInvalid = "PlacementDecisionInvalid"
	reasonPropagationFailed        = "PropagationFailed"
	reasonClusterNamespace         = "ClusterNamespaceMissing"
	reasonRolloutInvalid           = "RolloutInvalid"
	reasonRolloutWave              = "RolloutWave"
	reasonRolloutNote              = "RolloutNote"
)

// Propagator reconciles root policies: their replicas and their status.
// NewPropagator makes one.
//
// Reconcile (this file) reads the root and its replicas and hands off to
// reconcile (reconcile.go), which reads as the sequence of a live root's
// reconcile: the root's validity (invalid.go), its bindings (bindings.go),
// the rollout step (rolloutstep.go), the replica plan (replicaplan.go: spec
// writes and rollout status patches), the writes (writes.go) and the root's
// status and conditions (status.go); or to reconcileDelete (delete.go) for a
// root that is gone.
type Propagator struct {
	Client client.Client
	// Replicas finds a root's replicas in the cache (replicasOf): the Policy
	// informer's indexer.
	Replicas replicaIndex
	// Policies writes replicas and root statuses as raw JSON and does not
	// decode the server's answer: the informer brings the stored policy back
	// anyway, and skipping the decode saves a third of the hub's CPU per
	// replica write (and the decode of a root's whole status per status write).
	Policies rest.Interface
	Recorder events.EventRecorder
	// Writers bounds the replica writes in flight for one root policy.
	Writers int
	// writeSlots bounds the replica writes in flight across every root
	// policy; nil: only Writers does.
	writeSlots *semaphore.Weighted
	// Clock is the propagator's only source of time: rollout steps, and how
	// long its own writes have been in flight (not nil).
	Clock clock.PassiveClock
	// Templates resolves hub templates; nil: a root with hub templates gets no
	// replica and says so.
	Templates *hubTemplates

	// What the propagator remembers of each root between reconciles: only
	// shortcuts, which a new process starts without (all rollout state lives
	// in API objects), forgotten when the root is gone (reconcileDelete).
	//
	// settled says which roots only replica status reports changed since
	// their last full reconcile.
	settled *settledRoots
	// ownWrites holds the propagator's own writes the cache has not brought
	// back yet: a reconcile does not make them again, nor write the root's
	// status over the version its last status write replaced.
	ownWrites *ownWrites
	// failures counts the consecutive failed writes of each replica that may
	// pass by themselves, which the root names in ReplicasFailed only once
	// they persist.
	failures *failureStreaks
}

// NewPropagator returns a Propagator that reads through c and finds replicas
// in replicas (policyIndex), writes Policies through policies, records Events
// with recorder and reads time from clk, with one replica writer per root
// (Writers), no hub-wide bound on writes and no hub templates until the caller
// sets them, and nothing remembered of any root yet.
func NewPropagator(c client.Client, replicas replicaIndex, policies rest.Interface, recorder events.EventRecorder, clk clock.PassiveClock) *Propagator {
	return &Propagator{Client: c, Replicas: replicas, Policies: policies, Recorder: recorder, Writers: 1, Clock: clk,
		settled: newSettledRoots(), ownWrites: newOwnWrites(), failures: newFailureStreaks()}
}

// Reconcile reads a root policy and its replicas and hands off: to reconcile,
// which brings a live root's replicas and status in line with its bindings,
// or to reconcileDelete for a root that is gone or being deleted. A replica's
// own request (a Policy's events enqueue the Policy itself, a replica's its
// root too) is no work. A live root whose last status write the cache has not
// brought back yet is looked at again soon (ownWrites): a status computed
// over the old one would be refused as a conflict.
func (p *Propagator) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	now := p.Clock.Now()
	key := req.NamespacedName
	epoch := p.settled.epoch(key) // before anything is read
	root := &policyv1.Policy{}
	if err := p.Client.Get(ctx, key, root); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		root = nil
	}
	switch {
	case root != nil && replication.IsReplica(root):
		return ctrl.Result{}, nil
	case root != nil && !root.DeletionTimestamp.IsZero():
		root = nil
	case root != nil:
		if behind, age := p.ownWrites.rootStatusBehind(root, p.Clock.Now()); behind {
			return ctrl.Result{RequeueAfter: cacheCatchUp(age)}, nil
		}
	}
	existing, err := p.replicasOf(key)
	if err != nil {
		return ctrl.Result{}, err
	}
	if root == nil {
		return p.reconcileDelete(ctx, key, existing)
	}
	return p.reconcile(ctx, &rootReconcile{root: root, key: key, epoch: epoch, now: now, existing: existing})
}

// replicasOf finds a root policy's replicas in the cache's index, by cluster
// namespace. The replicas are the cache's own objects: read, never modified.
// (A List through the cache would copy each replica's struct into a new
// PolicyList, even without a deep copy: a few MiB per root of 3,000 replicas
// for every reconcile in flight.)
func (p *Propagator) replicasOf(root types.NamespacedName) (map[string]*policyv1.Policy, error) {
	objs, err := p.Replicas.ByIndex(fieldIndexPrefix+indexReplicaRoot, allNamespacesKey+replication.Name(root.Namespace, root.Name))
	if err != nil {
		return nil, err
	}
	out := make(map[string]*policyv1.Policy, len(objs))
	for _, o := range objs {
		replica, ok := o.(*policyv1.Policy)
		if !ok {
			return nil, fmt.Errorf("the Policy index holds a %T", o)
		}
		out[replica.Namespace] = replica
	}
	return out, nil
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "success"
}
