package rollout

import (
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// BoundFleet is the fleet a bound policy rolls out over: the decision groups of
// the placements of its non-restricted bindings (res.BindingPlacements; groupsOf
// gives a placement's groups), narrowed to the clusters the policy is bound to
// through that placement: a cluster that every binding through a placement
// excludes (a PolicySet exclusion) is left out of that placement's groups.
// Every group stays, so that each placement's indices stay contiguous. The hub's
// live rollout and the plan-rollout function both walk this fleet.
func BoundFleet(res *binding.Resolution, groupsOf func(binding.PlacementRef) []DecisionGroup) []DecisionGroup {
	bound := make(map[string]bool, len(res.Clusters))
	for _, c := range res.Clusters {
		bound[c.Name] = true
	}
	var fleet []DecisionGroup
	for _, ref := range res.BindingPlacements {
		for _, g := range groupsOf(ref) {
			narrowed := g
			narrowed.Clusters = make([]string, 0, len(g.Clusters))
			for _, c := range g.Clusters {
				if bound[c] && !res.Excludes(ref, c) {
					narrowed.Clusters = append(narrowed.Clusters, c)
				}
			}
			fleet = append(fleet, narrowed)
		}
	}
	return fleet
}

// PlanBound plans the rollout of a policy bound as res says over fleet (from
// BoundFleet). A rollout that is not progressive has one wave: the clusters
// that enforce (with binding overrides applied); the others stay inform and are
// in no wave.
func PlanBound(strategy clusterv1alpha1.RolloutStrategy, action policyv1.RemediationAction, res *binding.Resolution, fleet []DecisionGroup) (Plan, error) {
	in := PlanInput{Strategy: strategy, RemediationAction: action, Fleet: fleet}
	plan, err := PlanWaves(in)
	if err != nil || plan.Progressive {
		return plan, err
	}
	enforcing := map[string]bool{}
	for _, c := range res.Clusters {
		if c.RemediationAction.IsEnforce() {
			enforcing[c.Name] = true
		}
	}
	if len(enforcing) == len(res.Clusters) {
		return plan, nil
	}
	narrowed := make([]DecisionGroup, len(fleet))
	for i, g := range fleet {
		narrowed[i] = g
		narrowed[i].Clusters = nil
		for _, c := range g.Clusters {
			if enforcing[c] {
				narrowed[i].Clusters = append(narrowed[i].Clusters, c)
			}
		}
	}
	in.Fleet = narrowed
	return PlanWaves(in)
}
