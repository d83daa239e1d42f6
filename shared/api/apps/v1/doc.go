// Package v1 holds a minimal PlacementRule of apps.open-cluster-management.io/v1:
// the legacy placement API that the selective-enforcement seed's examples bind
// with. Only what binding resolution reads is modelled: spec.clusterSelector,
// spec.clusters and status.decisions.
//
// +kubebuilder:object:generate=true
// +groupName=apps.open-cluster-management.io
package v1
