// Package v1alpha1 holds the fleetpolicy.io/v1alpha1 types, fleetpolicy's own
// kinds (OCM has no equivalent): RolloutPlan, the waves in which a policy's
// enforcement is rolled out over its clusters, as the plan-rollout KRM function
// precomputes them (package shared/rollout plans them). The types carry no
// behaviour.
//
// +kubebuilder:object:generate=true
// +groupName=fleetpolicy.io
package v1alpha1
