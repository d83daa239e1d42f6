package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The scheduler names OCM's PlacementRule controller answers to; a rule naming
// any other scheduler is left to that scheduler.
const (
	SchedulerNameDefault = "default"
	SchedulerNameMCM     = "mcm"
)

// ClusterConditionFilter keeps the clusters whose condition of Type, when they
// have one, has Status.
type ClusterConditionFilter struct {
	// +optional
	Type string `json:"type,omitempty"`
	// +optional
	Status metav1.ConditionStatus `json:"status,omitempty"`
}

// ResourceType is the allocatable resource clusters are ordered by.
type ResourceType string

// The resources a ResourceHint may order by; any other orders nothing.
const (
	ResourceTypeCPU    ResourceType = "cpu"
	ResourceTypeMemory ResourceType = "memory"
)

// SelectionOrder is the direction of a ResourceHint: "asc", or descending.
type SelectionOrder string

// SelectionOrderAsc orders clusters by increasing allocatable resource; every
// other value, unset included, by decreasing.
const SelectionOrderAsc SelectionOrder = "asc"

// ResourceHint orders the selected clusters by an allocatable resource before
// ClusterReplicas cuts them.
type ResourceHint struct {
	// +optional
	Type ResourceType `json:"type,omitempty"`
	// +optional
	Order SelectionOrder `json:"order,omitempty"`
}

// GenericClusterReference names a cluster.
type GenericClusterReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// PlacementRuleSpec selects clusters by label or by name, as OCM's PlacementRule
// (open-cluster-management.io/multicloud-operators-subscription v0.16.0) does.
type PlacementRuleSpec struct {
	// SchedulerName names the scheduler that writes the decisions: empty,
	// "default" or "mcm" is the hub's; any other leaves status.decisions to
	// that scheduler.
	//
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`
	// ClusterReplicas is the most clusters decided on (all when unset).
	//
	// +optional
	ClusterReplicas *int32 `json:"clusterReplicas,omitempty"`
	// ClusterSelector selects ManagedClusters by label.
	//
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
	// Clusters names clusters explicitly.
	//
	// +optional
	Clusters []GenericClusterReference `json:"clusters,omitempty"`
	// ClusterConditions keeps the clusters whose conditions match.
	//
	// +optional
	ClusterConditions []ClusterConditionFilter `json:"clusterConditions,omitempty"`
	// ResourceHint orders clusters by an allocatable resource.
	//
	// +optional
	ResourceHint *ResourceHint `json:"resourceHint,omitempty"`
	// Policies is accepted and, as by OCM's controller, selects nothing.
	//
	// +optional
	Policies []corev1.ObjectReference `json:"policies,omitempty"`
}

// PlacementDecision is one selected cluster.
type PlacementDecision struct {
	// +optional
	ClusterName string `json:"clusterName,omitempty"`
	// +optional
	ClusterNamespace string `json:"clusterNamespace,omitempty"`
}

// PlacementRuleStatus holds the rule's decisions.
type PlacementRuleStatus struct {
	// +optional
	Decisions []PlacementDecision `json:"decisions,omitempty"`
	// Conditions say whether fleetpolicy's hub could decide on the rule's
	// clusters (Scheduled). OCM's controller writes none.
	//
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// PlacementRule is the legacy placement API; its decisions live in its status.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=placementrules,scope=Namespaced,shortName=plr
type PlacementRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// +optional
	Spec PlacementRuleSpec `json:"spec,omitempty"`
	// +optional
	Status PlacementRuleStatus `json:"status,omitempty"`
}

// PlacementRuleList is a list of PlacementRules.
//
// +kubebuilder:object:root=true
type PlacementRuleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlacementRule `json:"items"`
}
