// Package v1 holds the PlacementRule of apps.open-cluster-management.io/v1: the
// legacy placement API that the selective-enforcement examples
// (examples/api/selective-enforcement.yaml) bind with,
// with every field of OCM's (multicloud-operators-subscription v0.16.0).
// scheduling.PlacementRuleDecisions turns its spec into status.decisions.
//
// +kubebuilder:object:generate=true
// +groupName=apps.open-cluster-management.io
package v1
