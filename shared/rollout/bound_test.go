package rollout

import (
	"fmt"
	"testing"

	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
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
