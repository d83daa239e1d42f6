package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
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

// ConditionHubTemplatesResolved is the root condition that says whether its
// hub templates resolved for every cluster it is replicated to and the
// resolved replica is there; False names the clusters whose replica kept its
// last good spec (or was not created) and their errors: a template error, or
// the API server's refusal of the resolved replica (named, with its error, in
// ReplicasFailed). Roots without hub templates do not have it.
const ConditionHubTemplatesResolved = "HubTemplatesResolved"

// reasonPolicyPropagation is OCM's Event reason for a hub template error.
const reasonPolicyPropagation = "PolicyPropagation"

// reportTemplates emits an Event per cluster whose hub templates failed with a
// new error and returns the root's HubTemplatesResolved condition (nil for a
// root without hub templates) and whether an error may go away without a
// watched change (then the root is reconciled again later). failed are the
// failed replica writes the root names (ReplicasFailed): a cluster whose
// resolved replica was not written has not got what its templates resolved
// to, and the condition is False for it too.
func (p *Propagator) reportTemplates(root *policyv1.Policy, decided []rollout.ClusterDecision, errs map[string]error, failed []writeFailure) (*metav1.Condition, bool) {
	if !templates.UsesHubTemplates(root) {
		return nil, false
	}
	refused, nRefused := notWritten(failed)
	if len(errs) == 0 && nRefused == 0 {
		return &metav1.Condition{Type: ConditionHubTemplatesResolved, Status: metav1.ConditionTrue,
			ObservedGeneration: root.Generation, Reason: "Resolved",
			Message: fmt.Sprintf("hub templates resolved for all %d cluster(s)", len(decided))}, false
	}
	var notTaken string
	if nRefused > 0 {
		if nRefused > len(refused) {
			refused = append(refused, fmt.Sprintf("and %d more", nRefused-len(refused)))
		}
		notTaken = fmt.Sprintf("the API server did not take the resolved replica of %d cluster(s), which keep their last resolved spec or have none (see %s): %s",
			nRefused, ConditionReplicasFailed, strings.Join(refused, ", "))
	}
	if len(errs) == 0 {
		return &metav1.Condition{Type: ConditionHubTemplatesResolved, Status: metav1.ConditionFalse,
			ObservedGeneration: root.Generation, Reason: reasonReplicaNotWritten,
			Message: fmt.Sprintf("hub templates resolved for all %d cluster(s), but %s", len(decided), notTaken)}, false
	}
	clusters := slices.Sorted(maps.Keys(errs))
	retry := false
	var lines []string
	for _, cluster := range clusters {
		err := errs[cluster]
		retry = retry || retryable(err)
		// A cluster not tried after another met the bounds gets no Event: the
		// one that met them has it.
		var stalled stalledError
		if !errors.As(err, &stalled) && (p.Templates == nil || p.Templates.reportError(client.ObjectKeyFromObject(root), cluster, err)) {
			p.Recorder.Eventf(root, nil, corev1.EventTypeWarning, reasonPolicyPropagation, reasonPolicyPropagation,
				"Failed to resolve templates for cluster %s: %v", cluster, err)
		}
		if len(lines) < 10 {
			lines = append(lines, fmt.Sprintf("%s: %v", cluster, err))
		}
	}
	if len(clusters) > len(lines) {
		lines = append(lines, fmt.Sprintf("and %d more", len(clusters)-len(lines)))
	}
	message := fmt.Sprintf("hub templates failed for %d of %d cluster(s); their replicas keep their last resolved spec or are not created: %s",
		len(clusters), len(decided), strings.Join(lines, "; "))
	if notTaken != "" {
		message += "; and " + notTaken
	}
	return &metav1.Condition{Type: ConditionHubTemplatesResolved, Status: metav1.ConditionFalse,
		ObservedGeneration: root.Generation, Reason: "HubTemplateError", Message: message}, retry
}

// reasonReplicaNotWritten is the HubTemplatesResolved reason when the hub
// templates resolved for every cluster but the API server did not take the
// resolved replica of some.
const reasonReplicaNotWritten = "ReplicaNotWritten"

// ConditionClustersUnknown is the root condition that names the clusters its
// placements decided on that have no ManagedCluster: they get no replica, so
// that a decision cannot make the hub write into an arbitrary namespace
// (kube-system, say). A ManagedCluster created later gets its replica.
const ConditionClustersUnknown = "ClustersUnknown"

// unknownClustersCondition says which decided clusters have no ManagedCluster;
// nil when all have one.
func unknownClustersCondition(root *policyv1.Policy, unknown []string) *metav1.Condition {
	if len(unknown) == 0 {
		return nil
	}
	shown := unknown
	if len(shown) > 10 {
		shown = append(shown[:10:10], fmt.Sprintf("and %d more", len(unknown)-10))
	}
	return &metav1.Condition{Type: ConditionClustersUnknown, Status: metav1.ConditionTrue,
		ObservedGeneration: root.Generation, Reason: "ManagedClusterMissing",
		Message: fmt.Sprintf("no replica for %d decided cluster(s) without a ManagedCluster: %s",
			len(unknown), strings.Join(shown, ", "))}
}

// ConditionBindingOverridesIgnored is the root condition that names the
// PlacementBindings whose enforce override the root's rollout strategy
// ignores (its type is not All: binding.Resolution.IgnoredOverrides, the
// rule plan-rollout warns with); removed when there is none. It is a warning
// only: the root propagates as it would without the overrides. OCM v0.19,
// which has no rollout strategy, has no such condition.
const ConditionBindingOverridesIgnored = "BindingOverridesIgnored"

// ignoredOverridesCondition is root's BindingOverridesIgnored condition for
// the overrides res says are ignored, naming at most ten bindings; nil when
// none is.
func ignoredOverridesCondition(root *policyv1.Policy, res *binding.Resolution) *metav1.Condition {
	if res == nil || len(res.IgnoredOverrides) == 0 {
		return nil
	}
	var lines []string
	for i, o := range res.IgnoredOverrides {
		if i == 10 {
			lines = append(lines, fmt.Sprintf("and %d more", len(res.IgnoredOverrides)-i))
			break
		}
		lines = append(lines, o.String())
	}
	return &metav1.Condition{Type: ConditionBindingOverridesIgnored, Status: metav1.ConditionTrue,
		ObservedGeneration: root.Generation, Reason: "RolloutStrategyNotAll",
		Message: fmt.Sprintf("%d binding override(s) ignored: %s", len(res.IgnoredOverrides), strings.Join(lines, "; "))}
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

// ConditionRolloutWarning is the root condition that lists the rollout
// settings that do not do what they seem to (package rollout's notes: a
// Progressive rollout whose maxConcurrency enforces on every cluster at once,
// an integer maxFailures larger than the clusters it counts against, a
// mandatory decision group that selects nothing); removed when there is none.
const ConditionRolloutWarning = "RolloutWarning"

// setRuleConditions removes the Invalid condition of a root that propagates and
// sets or removes its RolloutWarning condition from the step's notes.
func setRuleConditions(status *policyv1.PolicyStatus, generation int64, notes []rollout.Note) {
	meta.RemoveStatusCondition(&status.Conditions, ConditionInvalid)
	if len(notes) == 0 {
		meta.RemoveStatusCondition(&status.Conditions, ConditionRolloutWarning)
		return
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: ConditionRolloutWarning, Status: metav1.ConditionTrue,
		ObservedGeneration: generation, Reason: "RolloutNotApplied", Message: strings.Join(rollout.NoteStrings(notes), "; ")})
}
