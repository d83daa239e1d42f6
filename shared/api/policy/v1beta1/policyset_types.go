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
