package binding

import (
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/compliance"
)

// RootStatus returns the root policy's status.status and status.compliant for this
// resolution: one entry per bound cluster, in cluster-name order, carrying the
// compliance observed on that cluster's replica (a cluster absent from observed, such
// as one whose replica does not exist yet, has ""), and the root compliance
// aggregated from them (package compliance), and the cluster's remainingBindings.
// Clusters that are not bound never appear, whatever observed holds, so neither
// does a cluster a PolicySet exclusion keeps the policy off. No bound cluster
// gives nil and "".
func (r *Resolution) RootStatus(observed map[string]policyv1.ComplianceState) ([]*policyv1.CompliancePerClusterStatus, policyv1.ComplianceState) {
	if r == nil || len(r.Clusters) == 0 {
		return nil, ""
	}
	entries := make([]policyv1.CompliancePerClusterStatus, len(r.Clusters))
	statuses := make([]*policyv1.CompliancePerClusterStatus, len(r.Clusters))
	states := make([]policyv1.ComplianceState, len(r.Clusters))
	for i, c := range r.Clusters {
		states[i] = observed[c.Name]
		entries[i] = policyv1.CompliancePerClusterStatus{
			ComplianceState:  states[i],
			ClusterName:      c.Name,
			ClusterNamespace: c.Name,
		}
		for _, name := range c.RemainingBindings {
			entries[i].RemainingBindings = append(entries[i].RemainingBindings, policyv1.RemainingBinding{PlacementBinding: name})
		}
		statuses[i] = &entries[i]
	}
	return statuses, compliance.Aggregate(states)
}
