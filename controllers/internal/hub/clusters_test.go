package hub_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/hub"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// TestReplicasOnlyForManagedClusters: a PlacementDecision naming kube-system
// and clusters without a ManagedCluster gets no replica there, and the root's
// status says so; a real cluster still gets its replica, and a cluster whose
// ManagedCluster appears later gets one then.
func TestReplicasOnlyForManagedClusters(t *testing.T) {
	ctx := context.Background()
	const ns, late = "unknownclusters", "late-cluster"
	if err := localplane.EnsureNamespace(ctx, c, late); err != nil {
		t.Fatal(err)
	}
	testkit.Apply(t, c, policyYAML(ns, "p", "inform"))
	testkit.Apply(t, c, decidedPlacement(ns, "cluster-a", "kube-system", "ghost-cluster", late))
	testkit.Apply(t, c, `
apiVersion: policy.open-cluster-management.io/v1
kind: PlacementBinding
metadata: {name: pb, namespace: unknownclusters}
placementRef: {apiGroup: cluster.open-cluster-management.io, kind: Placement, name: pl}
subjects: [{apiGroup: policy.open-cluster-management.io, kind: Policy, name: p}]
`)
	expectReplicas(t, ns, "p", want([]string{"cluster-a"}, nil))
	testkit.Eventually(t, 20*time.Second, "the root names the unknown clusters", func() string {
		cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, "p").Conditions, hub.ConditionClustersUnknown)
		want := "no replica for 3 decided cluster(s) without a ManagedCluster: ghost-cluster, kube-system, late-cluster"
		if cond == nil || cond.Status != metav1.ConditionTrue || cond.Message != want {
			return fmt.Sprintf("condition %+v", cond)
		}
		if got := statusClusters(testkit.RootStatus(t, c, ns, "p")); !slices.Equal(got, []string{"cluster-a"}) {
			return fmt.Sprintf("status clusters %v", got)
		}
		return ""
	})
	for _, other := range []string{"kube-system", late} {
		err := c.Get(ctx, client.ObjectKey{Namespace: other, Name: replication.Name(ns, "p")}, &policyv1.Policy{})
		if !apierrors.IsNotFound(err) {
			t.Fatalf("replica in %s: %v", other, err)
		}
	}

	if err := c.Create(ctx, &clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: late}}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, 20*time.Second, "the late cluster's replica", func() string {
		err := c.Get(ctx, client.ObjectKey{Namespace: late, Name: replication.Name(ns, "p")}, &policyv1.Policy{})
		if err != nil {
			return err.Error()
		}
		cond := meta.FindStatusCondition(testkit.RootStatus(t, c, ns, "p").Conditions, hub.ConditionClustersUnknown)
		if cond == nil || cond.Message != "no replica for 2 decided cluster(s) without a ManagedCluster: ghost-cluster, kube-system" {
			return fmt.Sprintf("condition %+v", cond)
		}
		return ""
	})
}
