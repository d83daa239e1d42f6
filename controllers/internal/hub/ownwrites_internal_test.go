package hub

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestReplicaSpecWritesInFlight: an accepted replica write stays in flight while the
// cache shows what it replaced, until a watch event shows the replica at
// another version (or gone), the cache read shows another version, or the
// write is older than ownWriteTimeout; only that root's replica in that
// cluster is held back.
func TestReplicaSpecWritesInFlight(t *testing.T) {
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
		{"the event never came", "", nil, root, "c1", "", ownWriteTimeout, false},
	} {
		r := newOwnWrites()
		r.specWrote(root, "c1", tc.replaced, at)
		for _, e := range tc.events {
			r.seen(e.replica, e.deleted)
		}
		if got := r.specPending(tc.root, tc.cluster, tc.cached, at.Add(tc.after)); got != tc.pending {
			t.Errorf("%s: pending %v, want %v", tc.name, got, tc.pending)
		}
		if !tc.pending && tc.root == root && tc.cluster == "c1" && r.specPending(root, "c1", tc.replaced, at.Add(time.Second)) {
			t.Errorf("%s: the write is still in flight once it was over", tc.name)
		}
	}

	r := newOwnWrites()
	r.specWrote(root, "c1", "", at)
	r.forget(root)
	if r.specPending(root, "c1", "", at.Add(time.Second)) {
		t.Fatal("a forgotten root's write is still in flight")
	}
}

// TestRolloutStatusPatchesInFlight: an accepted rollout status patch stays in
// flight, for that status only, until a watch event or a cache read shows the
// replica with it (or the replica gone), or the patch is older than
// ownWriteTimeout.
func TestRolloutStatusPatchesInFlight(t *testing.T) {
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
		{name: "the event never came", ask: policyv1.RolloutSucceeded, after: ownWriteTimeout},
	} {
		r := newOwnWrites()
		r.rolloutStatusWrote(root, "c1", policyv1.RolloutSucceeded, at)
		if tc.event != nil {
			r.seen(tc.event, tc.deleted)
		}
		if tc.seen != "" {
			r.rolloutStatusSeen(root, "c1", tc.seen)
		}
		if got := r.rolloutStatusPending(root, "c1", tc.ask, at.Add(tc.after)); got != tc.pending {
			t.Errorf("%s: rolloutStatusPending = %v, want %v", tc.name, got, tc.pending)
		}
	}
}

// TestRootStatusWrites: after an accepted status write, a reconcile that finds
// the root as the write replaced it waits (behind), until the cache shows
// another version, the root is another object of the name, the wait times
// out, or the root is forgotten; a root with no write of its own never waits.
func TestRootStatusWrites(t *testing.T) {
	key := types.NamespacedName{Namespace: "ns", Name: "p"}
	root := func(uid types.UID, resourceVersion string) *policyv1.Policy {
		return &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, UID: uid, ResourceVersion: resourceVersion}}
	}
	at := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name   string
		cached *policyv1.Policy
		now    time.Time
		behind bool
	}{
		{"the version the write replaced", root("u1", "10"), at.Add(time.Second), true},
		{"the cache brought the write back", root("u1", "11"), at.Add(time.Second), false},
		{"root recreated under the name", root("u2", "10"), at.Add(time.Second), false},
		{"the write's event never came", root("u1", "10"), at.Add(ownWriteTimeout), false},
	} {
		s := newOwnWrites()
		if behind, _ := s.rootStatusBehind(root("u1", "10"), at); behind {
			t.Fatalf("%s: behind before any write", tc.name)
		}
		s.rootStatusWrote(root("u1", "10"), at)
		got, age := s.rootStatusBehind(tc.cached, tc.now)
		if got != tc.behind || (got && age != tc.now.Sub(at)) {
			t.Errorf("%s: behind %v for %s, want %v for %s", tc.name, got, age, tc.behind, tc.now.Sub(at))
		}
		if behind, _ := s.rootStatusBehind(root("u1", "10"), at.Add(time.Second)); !tc.behind && behind {
			t.Errorf("%s: the write was not forgotten once the cache moved on", tc.name)
		}
	}

	s := newOwnWrites()
	s.rootStatusWrote(root("u1", "10"), at)
	s.forget(key)
	if behind, _ := s.rootStatusBehind(root("u1", "10"), at.Add(time.Second)); behind {
		t.Fatal("a forgotten root still waits")
	}
	for age, want := range map[time.Duration]time.Duration{
		0: 20 * time.Millisecond, 40 * time.Millisecond: 20 * time.Millisecond,
		time.Second: 250 * time.Millisecond, time.Minute: time.Second,
	} {
		if got := cacheCatchUp(age); got != want {
			t.Errorf("cacheCatchUp(%s) = %s, want %s", age, got, want)
		}
	}
}
