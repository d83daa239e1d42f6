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
	// assumed to succeed at once.
	NotBefore metav1.Duration `json:"notBefore"`
}

// RolloutPlanSpec is the plan of one policy's rollout, assuming every wave
// succeeds.
type RolloutPlanSpec struct {
	// PolicyRef is the root Policy planned.
	PolicyRef PolicyRef `json:"policyRef"`
	// Strategy is the policy's spec.rolloutStrategy with every default spelled
	// out.
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
