package faulttest

import (
	"context"
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"

	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// replicaWrites reads the hub's replica write counter from the metrics registry.
func replicaWrites(t *testing.T) float64 {
	t.Helper()
	return testkit.CounterSum(t, "fleetpolicy_hub_replica_writes_total", nil)
}

// settledReplicaWrites is the replica write counter once the hub has been
// quiet for a second: a new hub first finishes what an earlier test's hub left
// undone on the shared API server (the rollout status patches of a root whose
// replicas that test only waited to exist).
func settledReplicaWrites(t *testing.T) float64 {
	t.Helper()
	return testkit.SettledCounterSum(t, "fleetpolicy_hub_replica_writes_total", nil)
}

// TestConflictingWriterIsRevertedWithoutHotLoop has another writer keep editing
// a replica: the hub reverts each edit, its writes stay bounded by the edits, and
// once the other writer stops the hub settles.
func TestConflictingWriterIsRevertedWithoutHotLoop(t *testing.T) {
	startHub(t, false)
	testkit.Apply(t, plane.Client, boundTo("conflict", "p", "cluster-1"))
	name := replication.Name("conflict", "p")
	waitReplica(t, "cluster-1", name)
	ctx := context.Background()
	c := plane.Client

	before := settledReplicaWrites(t)
	edits := 0
	for end := time.Now().Add(2 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		r := &policyv1.Policy{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: "cluster-1", Name: name}, r); err != nil {
			t.Fatal(err)
		}
		r.Spec.RemediationAction = "enforce"
		if err := c.Update(ctx, r); err == nil {
			edits++
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := waitReplica(t, "cluster-1", name)
		if r.Spec.RemediationAction.IsInform() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("edit not reverted: remediationAction %q", r.Spec.RemediationAction)
		}
		time.Sleep(50 * time.Millisecond)
	}
	reverts := replicaWrites(t) - before
	if edits == 0 || reverts > float64(edits)+2 {
		t.Fatalf("%v hub writes for %d conflicting edits", reverts, edits)
	}
	settled := replicaWrites(t)
	time.Sleep(2 * time.Second)
	if extra := replicaWrites(t) - settled; extra != 0 {
		t.Fatalf("hot loop: %v hub writes after the other writer stopped", extra)
	}
}
