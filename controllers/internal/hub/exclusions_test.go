package hub_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

const clusterGroup = "cluster.open-cluster-management.io"

// exclusionSetYAML is the PolicySet of TestPolicySetExclusionsLive with the
// given spec.exclusions (YAML flow), bound to cluster-a and cluster-b.
func exclusionSetYAML(ns, exclusions string) string {
	return fmt.Sprintf(`
apiVersion: policy.open-cluster-management.io/v1beta1
kind: PolicySet
metadata: {name: set, namespace: %[1]s}
spec:
  policies: [p, p2]
  exclusions: %[2]s
`, ns, exclusions)
}

// placementYAML is a Placement whose one PlacementDecision (group 0) decides
// clusters.
func placementYAML(ns, name string, clusters ...string) string {
	return fmt.Sprintf(`
apiVersion: cluster.open-cluster-management.io/v1beta1
kind: Placement
metadata: {name: %s, namespace: %s}
spec: {}
---`, name, ns) + placementDecisionYAML(ns, name, "-", clusters...)
}

// TestPolicySetExclusionsLive follows OCM's e2e case18 (PolicySet exclusions)
// on the hub: an exclusion keeps the policy off the cluster for the set's
// binding only, and the other policies of the set stay; another binding puts it
// back, named in remainingBindings; moving or clearing the exclusion brings
// the replica back; the root's placement entry and the set's status list the
// exclusions; deleting the set keeps the directly bound replica, without
// remainingBindings.
func TestPolicySetExclusionsLive(t *testing.T) {
	ns := "exclusions"
	ctx := context.Background()
	testkit.Apply(t, c, policyYAML(ns, "p", "inform"))
	testkit.Apply(t, c, policyYAML(ns, "p2", "inform"))
	testkit.Apply(t, c, placementYAML(ns, "set-pl", "cluster-a", "cluster-b"))
	testkit.Apply(t, c, exclusionSetYAML(ns, "[{policyName: p, reason: not yet, clusterNames: [cluster-b]}]"))
	testkit.Apply(t, c, placementBindingYAML(ns, "set-pb", clusterGroup, "Placement", "set-pl", "PolicySet", "set"))

	t.Log("the excluded cluster gets no replica of p; p2 is unaffected")
	expectReplicas(t, ns, "p", want([]string{"cluster-a"}, nil))
	expectReplicas(t, ns, "p2", want([]string{"cluster-a", "cluster-b"}, nil))
	expectRootStatus(t, ns, "p",
		"[{set-pb pl=set-pl set=set excluded=[cluster-b]}]",
		"[{cluster-a remaining=[]}]")
	expectRootStatus(t, ns, "p2",
		"[{set-pb pl=set-pl set=set excluded=[]}]",
		"[{cluster-a remaining=[]} {cluster-b remaining=[]}]")
	expectSetExclusions(t, ns, "set", "[{p [cluster-b]}]")

	t.Log("a direct binding places p on the excluded cluster again, and remains")
	testkit.Apply(t, c, placementYAML(ns, "direct-pl", "cluster-b"))
	testkit.Apply(t, c, placementBindingYAML(ns, "direct-pb", clusterGroup, "Placement", "direct-pl", "Policy", "p"))
	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, nil))
	expectRootStatus(t, ns, "p",
		"[{direct-pb pl=direct-pl set= excluded=[]} {set-pb pl=set-pl set=set excluded=[cluster-b]}]",
		"[{cluster-a remaining=[]} {cluster-b remaining=[direct-pb]}]")

	t.Log("without the direct binding, the replica goes again")
	pb := &policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "direct-pb"}}
	if err := c.Delete(ctx, pb); err != nil {
		t.Fatal(err)
	}
	expectReplicas(t, ns, "p", want([]string{"cluster-a"}, nil))

	t.Log("moving the exclusion to p2 on cluster-a")
	testkit.Apply(t, c, exclusionSetYAML(ns, "[{policyName: p2, clusterNames: [cluster-a]}]"))
	expectReplicas(t, ns, "p", want([]string{"cluster-a", "cluster-b"}, nil))
	expectReplicas(t, ns, "p2", want([]string{"cluster-b"}, nil))
	expectSetExclusions(t, ns, "set", "[{p2 [cluster-a]}]")

	t.Log("clearing the exclusions brings every replica back")
	testkit.Apply(t, c, exclusionSetYAML(ns, "[]"))
	expectReplicas(t, ns, "p2", want([]string{"cluster-a", "cluster-b"}, nil))
	expectRootStatus(t, ns, "p2",
		"[{set-pb pl=set-pl set=set excluded=[]}]",
		"[{cluster-a remaining=[]} {cluster-b remaining=[]}]")
	expectSetExclusions(t, ns, "set", "[]")

	t.Log("deleting the set while it excludes p from cluster-b, which a direct binding places")
	testkit.Apply(t, c, exclusionSetYAML(ns, "[{policyName: p, clusterNames: [cluster-b]}]"))
	testkit.Apply(t, c, placementBindingYAML(ns, "direct-pb", clusterGroup, "Placement", "direct-pl", "Policy", "p"))
	expectRootStatus(t, ns, "p",
		"[{direct-pb pl=direct-pl set= excluded=[]} {set-pb pl=set-pl set=set excluded=[cluster-b]}]",
		"[{cluster-a remaining=[]} {cluster-b remaining=[direct-pb]}]")
	if err := c.Delete(ctx, &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "set"}}); err != nil {
		t.Fatal(err)
	}
	expectReplicas(t, ns, "p", want([]string{"cluster-b"}, nil))
	expectReplicas(t, ns, "p2", map[string]string{})
	expectRootStatus(t, ns, "p", "[{direct-pb pl=direct-pl set= excluded=[]}]", "[{cluster-b remaining=[]}]")
}

// expectRootStatus waits for a root's status.placement (binding, placement,
// policySet, exclusions) and status.status (cluster, remainingBindings).
func expectRootStatus(t *testing.T, ns, name, placements, clusters string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("root status of %s/%s", ns, name), func() string {
		s := testkit.RootStatus(t, c, ns, name)
		var gotPlacements, gotClusters []string
		for _, p := range s.Placement {
			excluded := []string{}
			for _, e := range p.Exclusions {
				excluded = append(excluded, e.ClusterName)
			}
			gotPlacements = append(gotPlacements, fmt.Sprintf("{%s pl=%s set=%s excluded=%v}", p.PlacementBinding, p.Placement, p.PolicySet, excluded))
		}
		for _, e := range s.Status {
			remaining := []string{}
			for _, r := range e.RemainingBindings {
				remaining = append(remaining, r.PlacementBinding)
			}
			gotClusters = append(gotClusters, fmt.Sprintf("{%s remaining=%v}", e.ClusterName, remaining))
		}
		if got := fmt.Sprint(gotPlacements); got != placements {
			return fmt.Sprintf("placement %s, want %s", got, placements)
		}
		if got := fmt.Sprint(gotClusters); got != clusters {
			return fmt.Sprintf("status %s, want %s", got, clusters)
		}
		return ""
	})
}

// expectSetExclusions waits for a PolicySet's status.exclusions.
func expectSetExclusions(t *testing.T, ns, name, exclusions string) {
	t.Helper()
	testkit.Eventually(t, 20*time.Second, fmt.Sprintf("status.exclusions of PolicySet %s/%s", ns, name), func() string {
		set := &policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		get(t, set)
		var got []string
		for _, e := range set.Status.Exclusions {
			got = append(got, fmt.Sprintf("{%s %v}", e.PolicyName, e.Clusters))
		}
		if fmt.Sprint(got) != exclusions {
			return fmt.Sprintf("got %v, want %s", got, exclusions)
		}
		return ""
	})
}
