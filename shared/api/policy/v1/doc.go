// Package v1 holds the policy.open-cluster-management.io/v1 types: Policy,
// PlacementBinding and ConfigurationPolicy. JSON field names are exactly those OCM
// ships, so manifests written for a real OCM hub work unchanged; the fields the
// fleetpolicy adds (rolloutStrategy, rolloutStatus, and its own override
// spelling remediationActionOverride) sit beside them. The types carry no
// behaviour beyond small accessors: the algorithms that interpret them live in
// the other shared/ packages.
//
// +kubebuilder:object:generate=true
// +groupName=policy.open-cluster-management.io
package v1
