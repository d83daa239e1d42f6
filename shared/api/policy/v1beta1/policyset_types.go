package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// PolicySetSpec lists the policies of a set.
type PolicySetSpec struct {
	// +optional
	Description string `json:"description,omitempty"`
	// Policies are the names of member Policies in the set's namespace.
	Policies []policyv1.NonEmptyString `json:"policies"`
	// Exclusions name member policies that this set does not place on some
	// clusters. A binding of the set then does not place the policy there;
	// another binding (of the policy, or of another set) still may. OCM's field,
	// newer than OCM v0.19.0.
	//
	// An exclusion naming a policy twice is refused (listType map, keyed by
	// policyName), as OCM's webhook refuses it.
	//
	// +optional
	// +listType=map
	// +listMapKey=policyName
	Exclusions []PolicySetExclusion `json:"exclusions,omitempty"`
}

// PolicySetExclusion keeps one member policy of the set off some clusters.
type PolicySetExclusion struct {
	// PolicyName is a policy of spec.policies.
	//
	// +kubebuilder:validation:MinLength=1
	PolicyName string `json:"policyName"`
	// Reason says why; nothing reads it.
	//
	// +optional
	Reason string `json:"reason,omitempty"`
	// ClusterNames are the managed clusters this set does not place the policy on.
	//
	// +kubebuilder:validation:MinItems=1
	ClusterNames []policyv1.NonEmptyString `json:"clusterNames"`
}

// PolicySetStatusExclusion is one policy of the set with the clusters the set
// excludes it from.
type PolicySetStatusExclusion struct {
	PolicyName policyv1.NonEmptyString `json:"policyName"`
	// Clusters are sorted.
	//
	// +kubebuilder:validation:MinItems=1
	Clusters []policyv1.NonEmptyString `json:"clusters"`
}

// PolicySetStatusPlacement is one binding of the set.
type PolicySetStatusPlacement struct {
	// +optional
	PlacementBinding string `json:"placementBinding,omitempty"`
	// +optional
	Placement string `json:"placement,omitempty"`
	// +optional
	PlacementRule string `json:"placementRule,omitempty"`
}

// PolicySetStatus aggregates the compliance of the member policies.
type PolicySetStatus struct {
	// +optional
	Placement []PolicySetStatusPlacement `json:"placement,omitempty"`
	// +optional
	Compliant policyv1.ComplianceState `json:"compliant,omitempty"`
	// +optional
	StatusMessage string `json:"statusMessage,omitempty"`
	// Exclusions are spec.exclusions, by policy name, each with its clusters
	// sorted.
	//
	// +optional
	Exclusions []PolicySetStatusExclusion `json:"exclusions,omitempty"`
}

// PolicySet groups Policies so that one PlacementBinding binds them all.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=policysets,scope=Namespaced,shortName=plcset
// +kubebuilder:printcolumn:name="Compliance state",type="string",JSONPath=".status.compliant"
// +kubebuilder:printcolumn:name="Age",type="date",JSONPath=".metadata.creationTimestamp"
type PolicySet struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec PolicySetSpec `json:"spec"`
	// +optional
	Status PolicySetStatus `json:"status,omitempty"`
}

// PolicySetList is a list of PolicySets.
//
// +kubebuilder:object:root=true
type PolicySetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PolicySet `json:"items"`
}
