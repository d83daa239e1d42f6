package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Subject is a Policy or PolicySet a PlacementBinding binds.
type Subject struct {
	// +kubebuilder:validation:Enum=policy.open-cluster-management.io
	// +kubebuilder:validation:MinLength=1
	APIGroup string `json:"apiGroup"`
	// +kubebuilder:validation:Enum=Policy;PolicySet
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// PlacementSubject is the Placement or PlacementRule a PlacementBinding uses.
//
// +kubebuilder:validation:XValidation:rule="(self.apiGroup == 'cluster.open-cluster-management.io' && self.kind == 'Placement') || (self.apiGroup == 'apps.open-cluster-management.io' && self.kind == 'PlacementRule')",message="placementRef must be a Placement of cluster.open-cluster-management.io or a PlacementRule of apps.open-cluster-management.io"
type PlacementSubject struct {
	// +kubebuilder:validation:Enum=apps.open-cluster-management.io;cluster.open-cluster-management.io
	// +kubebuilder:validation:MinLength=1
	APIGroup string `json:"apiGroup"`
	// +kubebuilder:validation:Enum=PlacementRule;Placement
	// +kubebuilder:validation:MinLength=1
	Kind string `json:"kind"`
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
}

// BindingOverrides is OCM's spelling of the selective-enforcement override.
type BindingOverrides struct {
	// RemediationAction, when enforce, enforces the bound policies on the clusters
	// this binding selects.
	//
	// +kubebuilder:validation:Enum=Enforce;enforce
	// +optional
	RemediationAction string `json:"remediationAction,omitempty"`
}

// RemediationActionOverride is fleetpolicy's own spelling of the
// selective-enforcement override (OCM has no such field): remediationAction
// plus a boolean subFilter.
type RemediationActionOverride struct {
	// RemediationAction, when enforce, enforces the bound policies on the clusters
	// this binding selects. Unset means no override.
	//
	// +kubebuilder:validation:Enum=Enforce;enforce
	// +optional
	RemediationAction string `json:"remediationAction,omitempty"`
	// SubFilter, when true, restricts the override to clusters that another,
	// non-restricted binding already binds; such a binding never adds clusters.
	//
	// +optional
	SubFilter *bool `json:"subFilter,omitempty"`
}

// SubFilter is OCM's spelling of the restricted binding flag.
//
// +kubebuilder:validation:Enum=restricted
type SubFilter string

// Restricted marks a binding that only narrows the override to clusters already bound.
const Restricted SubFilter = "restricted"

// PlacementBindingStatus is empty, as in OCM.
type PlacementBindingStatus struct{}

// PlacementBinding binds Policies and PolicySets to the clusters a Placement or
// PlacementRule selects. Its fields are at the top level (there is no spec), as in
// OCM. The override may be written in OCM's spelling (bindingOverrides + subFilter:
// restricted) or fleetpolicy's (remediationActionOverride); both together must agree.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=placementbindings,scope=Namespaced,shortName=pb
// +kubebuilder:validation:XValidation:rule="!has(self.remediationActionOverride) || !has(self.remediationActionOverride.remediationAction) || !has(self.bindingOverrides) || !has(self.bindingOverrides.remediationAction) || self.remediationActionOverride.remediationAction.lowerAscii() == self.bindingOverrides.remediationAction.lowerAscii()",message="remediationActionOverride.remediationAction and bindingOverrides.remediationAction disagree"
// +kubebuilder:validation:XValidation:rule="!has(self.remediationActionOverride) || !has(self.remediationActionOverride.subFilter) || !has(self.subFilter) || self.remediationActionOverride.subFilter == (self.subFilter == 'restricted')",message="remediationActionOverride.subFilter and subFilter disagree"
type PlacementBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	PlacementRef PlacementSubject `json:"placementRef"`
	// +kubebuilder:validation:MinItems=1
	Subjects []Subject `json:"subjects"`
	// BindingOverrides is OCM's override spelling.
	//
	// +optional
	BindingOverrides BindingOverrides `json:"bindingOverrides,omitempty"`
	// SubFilter is OCM's restricted flag.
	//
	// +optional
	SubFilter SubFilter `json:"subFilter,omitempty"`
	// RemediationActionOverride is fleetpolicy's own override spelling (not in OCM).
	//
	// +optional
	RemediationActionOverride *RemediationActionOverride `json:"remediationActionOverride,omitempty"`
	// +optional
	Status PlacementBindingStatus `json:"status,omitempty"`
}

// PlacementBindingList is a list of PlacementBindings.
//
// +kubebuilder:object:root=true
type PlacementBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []PlacementBinding `json:"items"`
}
