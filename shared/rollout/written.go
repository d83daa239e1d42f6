package rollout

import (
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// WrittenAction is the remediationAction the previous Step gave a cluster's
// replica, from the progress it stored: the action the replica carries once that
// step's write has landed. An adapter compares it with the replica it reads to
// tell whether the replica's reported status can be for what was last written
// (ClusterState.StatusCurrent): a cache that has not caught up with the switch
// from inform to enforce still shows inform. An invalid strategy is treated as
// progressive, the safe side: a stale inform replica is then not current.
func WrittenAction(strategy clusterv1alpha1.RolloutStrategy, root policyv1.RemediationAction, generation int64, s ClusterState) policyv1.RemediationAction {
	progressive := root.IsEnforce()
	if resolved, err := ResolveStrategy(strategy, nil); err == nil {
		progressive = isProgressive(resolved, root)
	}
	_, applied := appliedStatus[s.Progress.Status]
	if progressive && (!applied || s.Progress.Generation != generation) {
		return holdAction
	}
	return reachedAction(progressive, s, root)
}
