package faulttest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit/hubtest"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

var plane *localplane.Plane

func TestMain(m *testing.M) {
	ctrl.SetLogger(logr.Discard())
	os.Exit(testkit.RunWithPlane(m, "hub", []string{"cluster-1", "cluster-2"}, func(ctx context.Context, p *localplane.Plane) error {
		plane = p
		return localplane.EnsureNamespace(ctx, p.Client, "fleetpolicy-system")
	}))
}

func startHub(t *testing.T, leaderElect bool) *hubtest.Running {
	t.Helper()
	return hubtest.Start(t, plane.Config, func(o *hub.ManagerOptions) {
		if leaderElect {
			lease, renew, retry := 3*time.Second, 2*time.Second, 250*time.Millisecond
			o.LeaderElect, o.LeaderElectionNamespace = true, "fleetpolicy-system"
			o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = &lease, &renew, &retry
		}
	})
}

func elected(h *hubtest.Running) bool {
	select {
	case <-h.Manager.Elected():
		return true
	default:
		return false
	}
}

func boundTo(ns, name string, clusters ...string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1
kind: Policy
metadata: {name: %[2]s, namespace: %[1]s}
spec:
  disabled: false
  remediationAction: inform
  policy-templates: []
---`, ns, name) + testkit.PlacementRuleBinding(ns, name, clusters, name)
}

func waitReplica(t *testing.T, cluster, root string) *policyv1.Policy {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p := &policyv1.Policy{}
		err := plane.Client.Get(context.Background(), client.ObjectKey{Namespace: cluster, Name: root}, p)
		if err == nil {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica %s/%s: %v", cluster, root, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestOnlyTheLeaderActs runs two hubs with leader election: exactly one is
// elected and propagates; when it stops, the other takes over.
func TestOnlyTheLeaderActs(t *testing.T) {
	a, b := startHub(t, true), startHub(t, true)
	deadline := time.Now().Add(30 * time.Second)
	for !elected(a) && !elected(b) {
		if time.Now().After(deadline) {
			t.Fatal("no hub was elected")
		}
		time.Sleep(50 * time.Millisecond)
	}
	leader, follower := a, b
	if elected(b) {
		leader, follower = b, a
	}
	time.Sleep(time.Second)
	if elected(follower) {
		t.Fatal("both hubs are leaders")
	}
	testkit.Apply(t, plane.Client, boundTo("leader", "p", "cluster-1"))
	waitReplica(t, "cluster-1", replication.Name("leader", "p"))

	leader.Stop()
	testkit.Apply(t, plane.Client, boundTo("leader", "q", "cluster-2"))
	waitReplica(t, "cluster-2", replication.Name("leader", "q"))
	if !elected(follower) {
		t.Fatal("the replica was propagated by a hub that is not the leader")
	}
}
