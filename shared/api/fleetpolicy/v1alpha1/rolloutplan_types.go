package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// RolloutPlanKind is the kind of RolloutPlan.
const RolloutPlanKind = "RolloutPlan"

// PolicyRef names a root Policy.
type PolicyRef struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
}

// PlannedCluster is one cluster the policy is bound to.
type PlannedCluster struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// RemediationAction is the cluster's action once the rollout has completed,
	// binding overrides included; empty leaves every template its own.
	//
	// +optional
	RemediationAction policyv1.RemediationAction `json:"remediationAction,omitempty"`
	// EnforcedBy are the PlacementBindings whose enforce override makes this
	// cluster enforce a policy that does not enforce itself; empty when the root
	// enforces or no override applies.
	//
	// +optional
	EnforcedBy []string `json:"enforcedBy,omitempty"`
	// Wave is the index in waves of the wave that enforces the cluster; unset for
	// a cluster that stays inform.
	//
	// +optional
	Wave *int32 `json:"wave,omitempty"`
}

// DecisionGroupRef names one decision group of one placement.
type DecisionGroupRef struct {
	// Placement is the Placement (or PlacementRule) the group belongs to.
	//
	// +optional
	Placement string `json:"placement,omitempty"`
	// GroupName is the group's decision-group-name; empty for ungrouped clusters.
	//
	// +optional
	GroupName string `json:"groupName,omitempty"`
	// GroupIndex is the group's decision-group-index in its placement.
	GroupIndex int32 `json:"groupIndex"`
}

// Wave is a set of clusters switched to enforce at the same step of the rollout.
type Wave struct {
	// Index is the wave's position in waves, from 0.
	Index int32 `json:"index"`
	// Clusters are the wave's clusters, sorted by name.
	Clusters []string `json:"clusters"`
	// DecisionGroups are the decision groups the wave's clusters belong to, in
	// rollout order.
	DecisionGroups []DecisionGroupRef `json:"decisionGroups"`
	// Mandatory is whether the wave is a mandatory decision group.
	Mandatory bool `json:"mandatory"`
	// NotBefore is the earliest the wave starts, counted from the start of the
	// rollout: the soak times (minSuccessTime) of the waves before it, each
	// assumed to succeed at once. The pattern refuses what Go cannot parse as a
	// non-negative duration (a value beyond Go's 292 years still passes: a CEL
	// rule per wave would exceed the API server's cost budget).
	//
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Pattern=`^[+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$`
	NotBefore metav1.Duration `json:"notBefore"`
}

// RolloutPlanSpec is the plan of one policy's rollout, assuming every wave
// succeeds.
type RolloutPlanSpec struct {
	// PolicyRef is the root Policy planned.
	PolicyRef PolicyRef `json:"policyRef"`
	// Strategy is the policy's spec.rolloutStrategy with every default spelled
	// out. It carries the rules of the Policy's spec.rolloutStrategy (crdtest
	// checks that they are the same): a value Go cannot decode would stop the
	// hub from reading any RolloutPlan.
	//
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.minSuccessTime) || (self.all.minSuccessTime.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.all.minSuccessTime) >= duration('0s'))",message="all.minSuccessTime must be a non-negative duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.progressDeadline) || self.all.progressDeadline == 'None' || (self.all.progressDeadline.matches('^[0-9]+[hms]') && self.all.progressDeadline.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.all.progressDeadline) >= duration('0s'))",message="all.progressDeadline must be None or a duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.minSuccessTime) || (self.progressive.minSuccessTime.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressive.minSuccessTime) >= duration('0s'))",message="progressive.minSuccessTime must be a non-negative duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.progressDeadline) || self.progressive.progressDeadline == 'None' || (self.progressive.progressDeadline.matches('^[0-9]+[hms]') && self.progressive.progressDeadline.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressive.progressDeadline) >= duration('0s'))",message="progressive.progressDeadline must be None or a duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.minSuccessTime) || (self.progressivePerGroup.minSuccessTime.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressivePerGroup.minSuccessTime) >= duration('0s'))",message="progressivePerGroup.minSuccessTime must be a non-negative duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.progressDeadline) || self.progressivePerGroup.progressDeadline == 'None' || (self.progressivePerGroup.progressDeadline.matches('^[0-9]+[hms]') && self.progressivePerGroup.progressDeadline.matches('^[-+]?(0|(([0-9]+([.][0-9]*)?|[.][0-9]+)(ns|us|µs|μs|ms|s|m|h))+)$') && duration(self.progressivePerGroup.progressDeadline) >= duration('0s'))",message="progressivePerGroup.progressDeadline must be None or a duration such as 90s, 10m or 2h30m"
	// +kubebuilder:validation:XValidation:rule="!has(self.all) || !has(self.all.maxFailures) || (type(self.all.maxFailures) == int ? self.all.maxFailures >= 0 && self.all.maxFailures <= 2147483647 : !self.all.maxFailures.matches('^[0-9]+$') || (size(self.all.maxFailures) <= 10 && int(self.all.maxFailures) <= 2147483647))",message="all.maxFailures must be a non-negative integer (at most 2147483647) or a percentage from 0% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.maxFailures) || (type(self.progressive.maxFailures) == int ? self.progressive.maxFailures >= 0 && self.progressive.maxFailures <= 2147483647 : !self.progressive.maxFailures.matches('^[0-9]+$') || (size(self.progressive.maxFailures) <= 10 && int(self.progressive.maxFailures) <= 2147483647))",message="progressive.maxFailures must be a non-negative integer (at most 2147483647) or a percentage from 0% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.maxFailures) || (type(self.progressivePerGroup.maxFailures) == int ? self.progressivePerGroup.maxFailures >= 0 && self.progressivePerGroup.maxFailures <= 2147483647 : !self.progressivePerGroup.maxFailures.matches('^[0-9]+$') || (size(self.progressivePerGroup.maxFailures) <= 10 && int(self.progressivePerGroup.maxFailures) <= 2147483647))",message="progressivePerGroup.maxFailures must be a non-negative integer (at most 2147483647) or a percentage from 0% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.maxConcurrency) || (type(self.progressive.maxConcurrency) == int ? self.progressive.maxConcurrency >= 0 && self.progressive.maxConcurrency <= 2147483647 : !self.progressive.maxConcurrency.matches('^[0-9]+$') || (size(self.progressive.maxConcurrency) <= 10 && int(self.progressive.maxConcurrency) <= 2147483647)) && self.progressive.maxConcurrency != '0%'",message="progressive.maxConcurrency must be a non-negative integer (at most 2147483647) or a percentage from 1% to 100%"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.mandatoryDecisionGroups) || self.progressive.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex >= 0 || has(g.groupName))",message="progressive.mandatoryDecisionGroups: a groupIndex without a groupName must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressive) || !has(self.progressive.mandatoryDecisionGroups) || self.progressive.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex <= 2147483647)",message="progressive.mandatoryDecisionGroups: a groupIndex must be at most 2147483647"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.mandatoryDecisionGroups) || self.progressivePerGroup.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex >= 0 || has(g.groupName))",message="progressivePerGroup.mandatoryDecisionGroups: a groupIndex without a groupName must not be negative"
	// +kubebuilder:validation:XValidation:rule="!has(self.progressivePerGroup) || !has(self.progressivePerGroup.mandatoryDecisionGroups) || self.progressivePerGroup.mandatoryDecisionGroups.all(g, !has(g.groupIndex) || g.groupIndex <= 2147483647)",message="progressivePerGroup.mandatoryDecisionGroups: a groupIndex must be at most 2147483647"
	Strategy clusterv1alpha1.RolloutStrategy `json:"strategy"`
	// Clusters are every cluster the policy is bound to, sorted by name.
	//
	// +optional
	Clusters []PlannedCluster `json:"clusters"`
	// Waves are the steps that switch clusters to enforce, in rollout order.
	//
	// +optional
	Waves []Wave `json:"waves"`
}

// RolloutPlan is the precomputed rollout of a Policy's enforcement over its
// clusters: which clusters are enforced in which wave, and not before when. The
// plan-rollout KRM function writes one per Policy, marked
// config.kubernetes.io/local-config so that it is never applied; applied to a
// hub, it is the plan the hub's live rollout is compared with.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=rolloutplans,scope=Namespaced
// +kubebuilder:printcolumn:name="Policy",type="string",JSONPath=".spec.policyRef.name"
// +kubebuilder:printcolumn:name="Strategy",type="string",JSONPath=".spec.strategy.type"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type RolloutPlan struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RolloutPlanSpec `json:"spec"`
}

// RolloutPlanList is a list of RolloutPlans.
//
// +kubebuilder:object:root=true
type RolloutPlanList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RolloutPlan `json:"items"`
}
