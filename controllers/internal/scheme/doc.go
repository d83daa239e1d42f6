// Package scheme builds the runtime.Scheme every fleetpolicy controller, test and
// tool uses: Kubernetes' built-in kinds, fleetpolicy's API types (the OCM policy
// group, the minimal PlacementRule, fleetpolicy.io's RolloutPlan), OCM's cluster
// kinds and OLM's kinds.
package scheme
