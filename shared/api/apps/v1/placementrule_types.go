package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GenericClusterReference names a cluster.
type GenericClusterReference struct {
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// PlacementRuleSpec selects clusters by label or by name.
type PlacementRuleSpec struct {
	// ClusterSelector selects ManagedClusters by label.
	//
	// +optional
	ClusterSelector *metav1.LabelSelector `json:"clusterSelector,omitempty"`
	// Clusters names clusters explicitly.
	//
	// +optional
	Clusters []GenericClusterReference `json:"clusters,omitempty"`
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
