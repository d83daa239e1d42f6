package hub

import (
	"context"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// writeStatus writes the status of s's root (updateRootStatus) with its
// conditions, records an accepted write (ownWrites), and records in s whether
// the hub templates are to be tried again (reportTemplates). A status-only
// reconcile writes no replica (and never runs while a write fails: such a
// root does not settle) and compares no RolloutPlan: ReplicasFailed and
// RolloutPlanMatches stay as the last full reconcile left them.
func (p *Propagator) writeStatus(ctx context.Context, s *rootReconcile) {
	var templatesCondition *metav1.Condition
	templatesCondition, s.retryTemplates = p.reportTemplates(s.root, s.step.Clusters, s.templateErrs, s.failures)
	resolution := s.bound.resolution
	conditions := []conditionUpdate{
		{ConditionClustersUnknown, unknownClustersCondition(s.root, s.bound.unknown)},
		{ConditionHubTemplatesResolved, templatesCondition},
		{ConditionBindingOverridesIgnored, ignoredOverridesCondition(s.root, resolution)},
	}
	if !s.statusOnly {
		conditions = append(conditions,
			conditionUpdate{ConditionReplicasFailed, replicasFailedCondition(s.root, s.failures, len(s.step.Clusters))},
			conditionUpdate{ConditionRolloutPlanMatches, s.planCondition})
	}
	s.statusChanged, s.statusErr = p.updateRootStatus(ctx, s.root, resolution, s.step, s.existing, conditions...)
	if s.statusChanged && s.statusErr == nil {
		p.ownWrites.rootStatusWrote(s.root, p.Clock.Now())
	}
}

// conditionUpdate is a root condition to set, or to remove when nil.
type conditionUpdate struct {
	conditionType string
	condition     *metav1.Condition
}

// updateRootStatus writes placement[], status[] (compliance and rollout progress
// per cluster), compliant, rolloutStatus and the conditions when they changed.
func (p *Propagator) updateRootStatus(ctx context.Context, root *policyv1.Policy, res *binding.Resolution, step rollout.StepResult, existing map[string]*policyv1.Policy, conditions ...conditionUpdate) (changed bool, err error) {
	perCluster, compliant := rollout.RootStatus(res, existing, step)
	status := root.Status.DeepCopy()
	status.Placement = res.Placements
	status.Status = perCluster
	status.ComplianceState = compliant
	status.RolloutStatus = step.RolloutStatus
	for _, u := range conditions {
		if u.condition == nil {
			meta.RemoveStatusCondition(&status.Conditions, u.conditionType)
			continue
		}
		was := meta.FindStatusCondition(root.Status.Conditions, u.conditionType)
		if u.conditionType == ConditionRolloutPlanMatches && u.condition.Status == metav1.ConditionFalse &&
			(was == nil || was.Status != metav1.ConditionFalse || was.Message != u.condition.Message) {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, "RolloutPlanDiverged", "Rollout", "%s", u.condition.Message)
		}
		meta.SetStatusCondition(&status.Conditions, *u.condition)
	}
	setRuleConditions(status, root.Generation, step.Notes)
	if equality.Semantic.DeepEqual(*status, root.Status) {
		return false, nil
	}
	updated := *root // shallow: only Status is replaced, and the copy is only encoded
	updated.Status = *status
	updated.APIVersion, updated.Kind = policyv1.GroupVersion.String(), "Policy"
	body, err := json.Marshal(&updated)
	if err != nil {
		return false, err
	}
	return true, p.Policies.Put().Namespace(root.Namespace).Resource("policies").Name(root.Name).
		SubResource("status").Body(body).Do(ctx).Error()
}
