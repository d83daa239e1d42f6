package hub

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// runStep runs the rollout step of s's root (s.step). Reports change what is
// written only by making the step reach clusters: those of the next wave of a
// progressive rollout, or that the full reconcile did not. A step that does
// (or that drops clusters, which a change of the fleet's would have bumped)
// makes a status-only reconcile full; a full reconcile compares the live
// waves with the root's RolloutPlan (s.planCondition). The error is the
// root's rollout strategy's, or the RolloutPlan's read.
func (p *Propagator) runStep(ctx context.Context, s *rootReconcile) error {
	step, fleet, err := p.step(s.root, s.bound.resolution, s.bound.groups, s.existing, s.now)
	if err != nil {
		return err
	}
	s.step = step
	s.statusOnly = s.statusOnly && len(step.Reached) == 0 && len(step.Removed) == 0
	if s.statusOnly {
		return nil
	}
	s.planCondition, err = p.planCondition(ctx, s.root, s.bound.resolution, fleet)
	return err
}

// step runs one rollout step for the bound clusters over rollout.BoundFleet; each
// cluster's progress is read back from the root's status, and its compliance
// from its replica (rollout.ClusterStates), current only when the replica
// carries what the previous step wrote and the spoke evaluated it since
// (fleetpolicy's spoke says so with observedGeneration, OCM's add-on with its
// compliance history's event times, which the cache keeps as evaluatedAt).
func (p *Propagator) step(root *policyv1.Policy, res *binding.Resolution, groups map[binding.PlacementRef][]rollout.DecisionGroup, existing map[string]*policyv1.Policy, now time.Time) (rollout.StepResult, []rollout.DecisionGroup, error) {
	fleet := rollout.BoundFleet(res, func(ref binding.PlacementRef) []rollout.DecisionGroup { return groups[ref] })
	result, err := rollout.Step(rollout.StepInput{
		Strategy:          root.Spec.Rollout(),
		RemediationAction: root.Spec.RemediationAction,
		Generation:        root.Generation,
		Fleet:             fleet,
		Clusters:          rollout.ClusterStates(root, res, existing, evaluatedAt),
		Now:               now,
	})
	return result, fleet, err
}

// ConditionRolloutPlanMatches is the root condition that says whether the live
// rollout follows the RolloutPlan of the same name applied to the hub.
const ConditionRolloutPlanMatches = "RolloutPlanMatches"

// planCondition compares the live waves with a RolloutPlan of the root's name
// applied to the hub (one plan-rollout wrote without local-config). No such plan
// gives no condition.
func (p *Propagator) planCondition(ctx context.Context, root *policyv1.Policy, res *binding.Resolution, fleet []rollout.DecisionGroup) (*metav1.Condition, error) {
	plan := &fleetv1alpha1.RolloutPlan{}
	if err := p.Client.Get(ctx, client.ObjectKeyFromObject(root), plan); err != nil {
		return nil, client.IgnoreNotFound(err)
	}
	if plan.Annotations["config.kubernetes.io/local-config"] == "true" {
		return nil, nil
	}
	live, err := rollout.PlanBound(root.Spec.Rollout(), root.Spec.RemediationAction, res, fleet)
	if err != nil {
		return nil, err
	}
	planned := make([][]string, len(plan.Spec.Waves))
	for i, w := range plan.Spec.Waves {
		planned[i] = w.Clusters
	}
	cond := &metav1.Condition{Type: ConditionRolloutPlanMatches, ObservedGeneration: root.Generation,
		Status: metav1.ConditionTrue, Reason: "Matches",
		Message: fmt.Sprintf("the live waves follow RolloutPlan %s", plan.Name)}
	if diff := rollout.Divergence(planned, live); diff != "" {
		cond.Status, cond.Reason = metav1.ConditionFalse, "Diverged"
		cond.Message = fmt.Sprintf("the live waves no longer follow RolloutPlan %s: %s", plan.Name, diff)
	}
	return cond, nil
}
