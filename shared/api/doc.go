// Package api is the root of fleetpolicy's Kubernetes API types. The types live in
// one package per group and version:
//
//   - policy/v1:      Policy, PlacementBinding, ConfigurationPolicy
//     (group policy.open-cluster-management.io, wire-compatible with OCM)
//   - policy/v1beta1: PolicySet, OperatorPolicy (same group)
//   - apps/v1:        a minimal PlacementRule (apps.open-cluster-management.io)
//   - fleetpolicy/v1alpha1: RolloutPlan (fleetpolicy.io, fleetpolicy's own kinds)
//
// Types that a library already ships (ManagedCluster, Placement, PlacementDecision,
// RolloutStrategy from open-cluster-management.io/api; OLM kinds from
// github.com/operator-framework/api) are used from there and never redefined.
// CRDs are generated from these types by controller-gen (`make generate`).
package api
