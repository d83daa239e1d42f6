package console

import (
	"errors"
	"fmt"

	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

// livePlan is the plan of a root's live fleet, computed as the hub computes
// the waves it compares with a RolloutPlan (its RolloutPlanMatches
// condition): the PlacementBindings of the root's namespace, the decision
// groups of the placements that bind it (scheduling.GroupOf, RuleGroup),
// binding.Resolve, rollout.BoundFleet and rollout.PlanBound, read with the
// viewer's identity, each list bounded by MaxReads. The hub also leaves out
// decided clusters without a ManagedCluster, which the console does not read:
// such a cluster shows in the plan without a line in the root's status.
func (s *Server) livePlan(r *request, root *policyv1.Policy, sets []*policyv1beta1.PolicySet) (*rollout.Plan, error) {
	ctx, c, ns := r.Context(), r.viewer.client, root.Namespace
	var bindings policyv1.PlacementBindingList
	if err := c.List(ctx, &bindings, client.InNamespace(ns), client.Limit(s.o.MaxReads)); err != nil {
		return nil, err
	}
	if bindings.Continue != "" {
		return nil, fmt.Errorf("more than %d PlacementBindings in namespace %s", s.o.MaxReads, ns)
	}
	setList := make([]policyv1beta1.PolicySet, 0, len(sets))
	for _, set := range sets {
		if set.Namespace == ns {
			setList = append(setList, *set)
		}
	}
	decisions := binding.Decisions{}
	groups := map[binding.PlacementRef][]rollout.DecisionGroup{}
	for _, ref := range binding.Placements(root, setList, bindings.Items) {
		switch ref.Kind {
		case binding.KindPlacement:
			var list clusterv1beta1.PlacementDecisionList
			if err := c.List(ctx, &list, client.InNamespace(ns), client.MatchingLabels{clusterv1beta1.PlacementLabel: ref.Name},
				client.Limit(s.o.MaxReads)); err != nil {
				return nil, err
			}
			if list.Continue != "" {
				return nil, fmt.Errorf("Placement %s has more than %d PlacementDecisions", ref.Name, s.o.MaxReads)
			}
			for i := range list.Items {
				group, err := scheduling.GroupOf(&list.Items[i])
				if err != nil && rollout.UsesGroupIndexes(&root.Spec) {
					return nil, fmt.Errorf("PlacementDecision %s/%s: %w", ns, list.Items[i].Name, err)
				}
				decisions[ref] = append(decisions[ref], group.Clusters...)
				groups[ref] = append(groups[ref], group)
			}
		case binding.KindPlacementRule:
			rule := &appsv1.PlacementRule{}
			if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: ref.Name}, rule); client.IgnoreNotFound(err) != nil {
				return nil, err
			}
			group := scheduling.RuleGroup(rule)
			decisions[ref] = group.Clusters
			groups[ref] = []rollout.DecisionGroup{group}
		}
	}
	res, err := binding.Resolve(root, setList, bindings.Items, decisions)
	if err != nil {
		return nil, err
	}
	fleet := rollout.BoundFleet(res, func(ref binding.PlacementRef) []rollout.DecisionGroup { return groups[ref] })
	plan, err := rollout.PlanBound(root.Spec.Rollout(), root.Spec.RemediationAction, res, fleet)
	if err != nil {
		return nil, errors.Join(errors.New("the root's rollout cannot be planned"), err)
	}
	return &plan, nil
}
