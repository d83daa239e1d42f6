package hub

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// TestSettledRoots walks settledRoots through what the propagator does with
// it: a root is settled only at the epoch its full reconcile started with,
// for the uid and generation it had then, until it is unsettled or forgotten.
func TestSettledRoots(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	root := func(uid types.UID, generation int64) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid, Generation: generation}}
	}
	s := newSettledRoots()
	if e := s.epoch(key); e != 0 || s.isSettled(e, root("u1", 1)) {
		t.Fatalf("a new root: epoch %d, settled %v", e, s.isSettled(e, root("u1", 1)))
	}

	// A full reconcile starts at the current epoch; an event bumps it while the
	// reconcile runs, so that its mark does not cover the event.
	started := s.epoch(key)
	s.bump(key)
	s.settle(root("u1", 1), started, true)
	if s.isSettled(s.epoch(key), root("u1", 1)) {
		t.Fatal("settled although an event came after the reconcile started")
	}
	// The event's own reconcile settles it.
	started = s.epoch(key)
	s.settle(root("u1", 1), started, true)
	for _, tc := range []struct {
		name    string
		epoch   uint64
		root    *policyv1.Policy
		settled bool
	}{
		{"same epoch, uid and generation", started, root("u1", 1), true},
		{"later epoch", started + 1, root("u1", 1), false},
		{"new generation", started, root("u1", 2), false},
		{"root recreated under the name", started, root("u2", 1), false},
	} {
		if got := s.isSettled(tc.epoch, tc.root); got != tc.settled {
			t.Errorf("%s: settled %v, want %v", tc.name, got, tc.settled)
		}
	}

	s.settle(root("u1", 1), started, false)
	if s.isSettled(started, root("u1", 1)) {
		t.Fatal("still settled after a reconcile that did not settle")
	}
	s.settle(root("u1", 1), started, true)
	s.forget(key)
	if e := s.epoch(key); e != 0 || s.isSettled(e, root("u1", 1)) || s.isSettled(started, root("u1", 1)) {
		t.Fatalf("a forgotten root: epoch %d, still settled", e)
	}
}

// TestBumpingBumpsEveryMappedRoot: a watched event's map function bumps the
// epoch of each root it enqueues, and of no other.
func TestBumpingBumpsEveryMappedRoot(t *testing.T) {
	s := newSettledRoots()
	a, b, other := types.NamespacedName{Namespace: "ns", Name: "a"}, types.NamespacedName{Namespace: "ns", Name: "b"}, types.NamespacedName{Namespace: "ns", Name: "c"}
	mapFn := s.bumping(func(context.Context, client.Object) []reconcile.Request {
		return []reconcile.Request{{NamespacedName: a}, {NamespacedName: b}}
	})
	if got := mapFn(context.Background(), &policyv1.Policy{}); len(got) != 2 {
		t.Fatalf("bumping changed the requests: %v", got)
	}
	if s.epoch(a) != 1 || s.epoch(b) != 1 || s.epoch(other) != 0 {
		t.Fatalf("epochs a=%d b=%d other=%d, want 1 1 0", s.epoch(a), s.epoch(b), s.epoch(other))
	}
}

// TestSettledRootsKeepTheirBindings: what a status-only reconcile kept of a
// root's bindings is handed back only at the epoch, uid and generation it was
// kept at, survives the reconcile's own settle at that epoch, and is dropped
// with the mark.
func TestSettledRootsKeepTheirBindings(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	root := func(uid types.UID, generation int64) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid, Generation: generation}}
	}
	bound := &boundInputs{unknown: []string{"gone"}}
	s := newSettledRoots()
	s.keep(root("u1", 1), 0, bound)
	if got := s.bound(0, root("u1", 1)); got != nil {
		t.Fatal("kept for a root that was not settled")
	}

	s.settle(root("u1", 1), 0, true)
	if got := s.bound(0, root("u1", 1)); got != nil {
		t.Fatal("a full reconcile's mark hands back bindings it never kept")
	}
	s.keep(root("u1", 1), 0, bound)
	s.settle(root("u1", 1), 0, true) // the status-only reconcile ends
	for _, tc := range []struct {
		name  string
		epoch uint64
		root  *policyv1.Policy
		want  *boundInputs
	}{
		{"same epoch, uid and generation", 0, root("u1", 1), bound},
		{"later epoch", 1, root("u1", 1), nil},
		{"new generation", 0, root("u1", 2), nil},
		{"root recreated under the name", 0, root("u2", 1), nil},
	} {
		if got := s.bound(tc.epoch, tc.root); got != tc.want {
			t.Errorf("%s: bound %v, want %v", tc.name, got, tc.want)
		}
	}

	s.bump(key)
	s.settle(root("u1", 1), 1, true) // a full reconcile at the new epoch
	if got := s.bound(1, root("u1", 1)); got != nil {
		t.Fatal("bindings kept at an older epoch handed back at a newer one")
	}
	s.keep(root("u1", 1), 1, bound)
	s.settle(root("u1", 1), 1, false)
	if got := s.bound(1, root("u1", 1)); got != nil {
		t.Fatal("bindings handed back for a root no longer settled")
	}
}

// TestPolicyHandlerBatchesReports: a replica's update that only reports (its
// compliance, its compliance history, which moves the cached time of its last
// evaluation) reaches its root after the batch delay without unsettling it;
// one that changes what the hub owns (the digest) or the IV it keeps reaches
// it at once and unsettles it. The replicas go through the cache's transform,
// as the informer hands them to the handler.
func TestPolicyHandlerBatchesReports(t *testing.T) {
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "p"},
		Spec: policyv1.PolicySpec{RemediationAction: policyv1.Inform, PolicyTemplates: []*policyv1.PolicyTemplate{
			{ObjectDefinition: runtime.RawExtension{Raw: []byte(`{"kind":"ConfigurationPolicy"}`)}}}}}
	key := client.ObjectKeyFromObject(root)
	reported := func(state policyv1.ComplianceState, at time.Time) *policyv1.Policy {
		p := replication.For(root, nil).Build("c1", policyv1.Inform)
		p.Generation = 1
		p.Status = policyv1.PolicyStatus{ComplianceState: state, Details: []*policyv1.DetailsPerTemplate{{ComplianceState: state,
			History: []policyv1.ComplianceHistory{{LastTimestamp: metav1.NewTime(at), Message: string(state)}}}}}
		return p
	}
	cached := func(p *policyv1.Policy) *policyv1.Policy {
		obj, err := slimPolicies(p)
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*policyv1.Policy)
	}
	first := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	old := reported(policyv1.Compliant, first)
	drifted := reported(policyv1.Compliant, first)
	drifted.Spec.RemediationAction = policyv1.Enforce
	encrypted := reported(policyv1.Compliant, first)
	encrypted.Annotations[templates.IVAnnotation] = "aXY="
	for _, tc := range []struct {
		name    string
		updated *policyv1.Policy
		batched bool
	}{
		{"a new compliance with a new history event", reported(policyv1.NonCompliant, first.Add(time.Minute)), true},
		{"a new history event only", reported(policyv1.Compliant, first.Add(time.Minute)), true},
		{"the replica's spec changed", drifted, false},
		{"an IV added", encrypted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			settled := newSettledRoots()
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			h := policyHandler(time.Hour, settled, newOwnWrites())
			h.Update(context.Background(), event.UpdateEvent{ObjectOld: cached(old.DeepCopy()), ObjectNew: cached(tc.updated)}, q)
			if got := q.Len() == 0 && settled.epoch(key) == 0; got != tc.batched {
				t.Errorf("batched %v, want %v (queued now: %d, epoch %d)", got, tc.batched, q.Len(), settled.epoch(key))
			}
		})
	}
}
