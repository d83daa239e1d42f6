package rollout

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

func TestBoundFleetAndPlanBound(t *testing.T) {
	a := binding.PlacementRef{Kind: binding.KindPlacement, Name: "a"}
	restrictedOnly := binding.PlacementRef{Kind: binding.KindPlacement, Name: "r"}
	groups := map[binding.PlacementRef][]DecisionGroup{
		a:              {{Placement: "a", GroupIndex: 0, Clusters: []string{"c1", "c2"}}, {Placement: "a", GroupIndex: 1, Clusters: []string{"c3", "unbound"}}},
		restrictedOnly: {{Placement: "r", GroupIndex: 0, Clusters: []string{"c1"}}},
	}
	res := &binding.Resolution{
		Clusters: []binding.BoundCluster{
			{Name: "c1", RemediationAction: "enforce"}, {Name: "c2", RemediationAction: "inform"}, {Name: "c3", RemediationAction: "enforce"},
		},
		BindingPlacements: []binding.PlacementRef{a},
	}
	fleet := BoundFleet(res, func(ref binding.PlacementRef) []DecisionGroup { return groups[ref] })
	if got := fmt.Sprint(fleet); got != "[{a  0 [c1 c2]} {a  1 [c3]}]" {
		t.Fatalf("BoundFleet = %s: want only the non-restricted placement, narrowed to the bound clusters", got)
	}
	waves := func(strategy clusterv1alpha1.RolloutStrategy, action policyv1.RemediationAction) string {
		plan, err := PlanBound(strategy, action, res, fleet)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, w := range plan.Waves {
			out = append(out, w.Clusters)
		}
		return fmt.Sprint(out)
	}
	if got := waves(clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup}, "enforce"); got != "[[c1 c2] [c3]]" {
		t.Errorf("progressive waves %s", got)
	}
	if got := waves(clusterv1alpha1.RolloutStrategy{}, "inform"); got != "[[c1 c3]]" {
		t.Errorf("not progressive: one wave of the enforcing clusters, got %s", got)
	}
}

// TestBoundFleetLeavesExcludedClustersToOtherPlacements: a cluster that a
// PolicySet exclusion keeps off placement a's path, and that placement b's
// binding places, rolls out in b's group, not in a's earlier one.
func TestBoundFleetLeavesExcludedClustersToOtherPlacements(t *testing.T) {
	a := binding.PlacementRef{Kind: binding.KindPlacement, Name: "a"}
	b := binding.PlacementRef{Kind: binding.KindPlacement, Name: "b"}
	set := policyv1beta1.PolicySet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "set"},
		Spec: policyv1beta1.PolicySetSpec{Policies: []policyv1.NonEmptyString{"p"},
			Exclusions: []policyv1beta1.PolicySetExclusion{{PolicyName: "p", ClusterNames: []policyv1.NonEmptyString{"c2"}}}}}
	pb := func(name string, ref binding.PlacementRef, kind, subject string) policyv1.PlacementBinding {
		return policyv1.PlacementBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			PlacementRef: policyv1.PlacementSubject{APIGroup: "cluster.open-cluster-management.io", Kind: ref.Kind, Name: ref.Name},
			Subjects:     []policyv1.Subject{{APIGroup: "policy.open-cluster-management.io", Kind: kind, Name: subject}}}
	}
	root := &policyv1.Policy{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: policyv1.PolicySpec{RemediationAction: "enforce"}}
	res, err := binding.Resolve(root, []policyv1beta1.PolicySet{set},
		[]policyv1.PlacementBinding{pb("set-pb", a, "PolicySet", "set"), pb("direct-pb", b, "Policy", "p")},
		binding.Decisions{a: {"c1", "c2"}, b: {"c2"}})
	if err != nil {
		t.Fatal(err)
	}
	groups := map[binding.PlacementRef][]DecisionGroup{
		a: {{Placement: "a", Clusters: []string{"c1", "c2"}}},
		b: {{Placement: "b", Clusters: []string{"c2"}}},
	}
	fleet := BoundFleet(res, func(ref binding.PlacementRef) []DecisionGroup { return groups[ref] })
	if got := fmt.Sprint(fleet); got != "[{a  0 [c1]} {b  0 [c2]}]" {
		t.Fatalf("BoundFleet = %s: want c2 only in b's group", got)
	}
	plan, err := PlanBound(clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup}, "enforce", res, fleet)
	if err != nil {
		t.Fatal(err)
	}
	var waves [][]string
	for _, w := range plan.Waves {
		waves = append(waves, w.Clusters)
	}
	if got := fmt.Sprint(waves); got != "[[c1] [c2]]" {
		t.Errorf("waves %s, want c2 in b's wave", got)
	}
}
