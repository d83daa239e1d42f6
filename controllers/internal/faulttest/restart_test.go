package faulttest

import (
	"testing"
	"time"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"

	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestRestartedHubWritesNothing: a hub started over replicas that are already
// as they should be writes none of them again (a restart of a hub with
// thousands of replicas must not rewrite them all).
func TestRestartedHubWritesNothing(t *testing.T) {
	first := startHub(t, false)
	testkit.Apply(t, plane.Client, boundTo("restart", "p", "cluster-1", "cluster-2"))
	waitReplica(t, "cluster-1", replication.Name("restart", "p"))
	waitReplica(t, "cluster-2", replication.Name("restart", "p"))
	settledReplicaWrites(t)
	first.Stop()

	before := replicaWrites(t)
	startHub(t, false)
	time.Sleep(3 * time.Second)
	if writes := replicaWrites(t) - before; writes != 0 {
		t.Fatalf("a restarted hub rewrote %v replicas that had not changed", writes)
	}
}
