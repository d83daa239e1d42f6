package hub

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestReplicasInFlight: an accepted replica write stays in flight while the
// cache shows what it replaced, until a watch event shows the replica at
// another version (or gone), the cache read shows another version, or the
// write is older than inFlightTimeout; only that root's replica in that
// cluster is held back.
func TestReplicasInFlight(t *testing.T) {
	root := types.NamespacedName{Namespace: "policies", Name: "p"}
	other := types.NamespacedName{Namespace: "policies", Name: "q"}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	replica := func(cluster, resourceVersion string) *policyv1.Policy {
		r := replication.Build(&policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: root.Namespace, Name: root.Name}},
			cluster, policyv1.Inform, nil)
		r.ResourceVersion = resourceVersion
		return r
	}
	type event struct {
		replica *policyv1.Policy
		deleted bool
	}
	for _, tc := range []struct {
		name     string
		replaced string // what the accepted write replaced ("" for a create)
		events   []event
		root     types.NamespacedName
		cluster  string
		cached   string
		after    time.Duration
		pending  bool
	}{
		{"a create the cache has not seen", "", nil, root, "c1", "", time.Second, true},
		{"an update the cache has not seen", "7", nil, root, "c1", "7", time.Second, true},
		{"a delete the cache has not seen", "7", nil, root, "c1", "7", time.Second, true},
		{"the create's event came", "", []event{{replica("c1", "8"), false}}, root, "c1", "8", time.Second, false},
		{"the update's event came", "7", []event{{replica("c1", "9"), false}}, root, "c1", "9", time.Second, false},
		{"created, then deleted by someone else", "", []event{{replica("c1", "8"), false}, {replica("c1", "8"), true}}, root, "c1", "", time.Second, false},
		{"the delete's event came", "7", []event{{replica("c1", "7"), true}}, root, "c1", "", time.Second, false},
		{"an event of another cluster", "", []event{{replica("c2", "8"), false}}, root, "c1", "", time.Second, true},
		{"the cache read shows another version", "7", nil, root, "c1", "9", time.Second, false},
		{"another root's replica in the cluster", "", nil, other, "c1", "", time.Second, false},
		{"another cluster", "", nil, root, "c2", "", time.Second, false},
		{"the event never came", "", nil, root, "c1", "", inFlightTimeout, false},
	} {
		r := newReplicasInFlight()
		r.wrote(root, "c1", tc.replaced, at)
		for _, e := range tc.events {
			r.seen(e.replica, e.deleted)
		}
		if got := r.pending(tc.root, tc.cluster, tc.cached, at.Add(tc.after)); got != tc.pending {
			t.Errorf("%s: pending %v, want %v", tc.name, got, tc.pending)
		}
		if !tc.pending && tc.root == root && tc.cluster == "c1" && r.pending(root, "c1", tc.replaced, at.Add(time.Second)) {
			t.Errorf("%s: the write is still in flight once it was over", tc.name)
		}
	}

	r := newReplicasInFlight()
	r.wrote(root, "c1", "", at)
	r.forget(root)
	if r.pending(root, "c1", "", at.Add(time.Second)) {
		t.Fatal("a forgotten root's write is still in flight")
	}
}

// TestRolloutStatusesInFlight: an accepted rollout status patch stays in
// flight, for that status only, until a watch event or a cache read shows the
// replica with it (or the replica gone), or the patch is older than
// inFlightTimeout.
func TestRolloutStatusesInFlight(t *testing.T) {
	root := types.NamespacedName{Namespace: "policies", Name: "p"}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	replica := func(cluster string, status policyv1.RolloutStatus) *policyv1.Policy {
		r := replication.Build(&policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: root.Namespace, Name: root.Name}},
			cluster, policyv1.Inform, nil)
		r.Status.RolloutStatus = status
		return r
	}
	for _, tc := range []struct {
		name    string
		event   *policyv1.Policy
		deleted bool
		seen    policyv1.RolloutStatus // a cache read shows this status ("": none)
		ask     policyv1.RolloutStatus
		after   time.Duration
		pending bool
	}{
		{name: "not shown yet", ask: policyv1.RolloutSucceeded, after: time.Second, pending: true},
		{name: "another status is not in flight", ask: policyv1.RolloutFailed, after: time.Second},
		{name: "an event shows it", event: replica("c1", policyv1.RolloutSucceeded), ask: policyv1.RolloutSucceeded, after: time.Second},
		{name: "an event shows the old status", event: replica("c1", policyv1.RolloutProgressing), ask: policyv1.RolloutSucceeded, after: time.Second, pending: true},
		{name: "an event of another cluster", event: replica("c2", policyv1.RolloutSucceeded), ask: policyv1.RolloutSucceeded, after: time.Second, pending: true},
		{name: "the replica was deleted", event: replica("c1", ""), deleted: true, ask: policyv1.RolloutSucceeded, after: time.Second},
		{name: "a cache read shows it", seen: policyv1.RolloutSucceeded, ask: policyv1.RolloutSucceeded, after: time.Second},
		{name: "the event never came", ask: policyv1.RolloutSucceeded, after: inFlightTimeout},
	} {
		r := newReplicasInFlight()
		r.statusWrote(root, "c1", policyv1.RolloutSucceeded, at)
		if tc.event != nil {
			r.seen(tc.event, tc.deleted)
		}
		if tc.seen != "" {
			r.statusSeen(root, "c1", tc.seen)
		}
		if got := r.statusPending(root, "c1", tc.ask, at.Add(tc.after)); got != tc.pending {
			t.Errorf("%s: statusPending = %v, want %v", tc.name, got, tc.pending)
		}
	}
	var none *replicasInFlight
	none.statusWrote(root, "c1", policyv1.RolloutSucceeded, at)
	if none.statusPending(root, "c1", policyv1.RolloutSucceeded, at) {
		t.Error("a nil tracker holds a patch back")
	}
}
