package rollout

import (
	"testing"

	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

func TestWrittenAction(t *testing.T) {
	progressive := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive}
	all := clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All}
	at := func(status policyv1.RolloutStatus, gen int64) ClusterState {
		return ClusterState{Name: "c", Progress: Progress{Status: status, Generation: gen}}
	}
	for _, tc := range []struct {
		name     string
		strategy clusterv1alpha1.RolloutStrategy
		root     policyv1.RemediationAction
		state    ClusterState
		want     policyv1.RemediationAction
	}{
		{"progressive, not reached", progressive, "enforce", at(policyv1.RolloutToApply, 2), "inform"},
		{"progressive, new cluster", progressive, "enforce", ClusterState{Name: "c"}, "inform"},
		{"progressive, reached", progressive, "enforce", at(policyv1.RolloutProgressing, 2), "enforce"},
		{"progressive, succeeded", progressive, "enforce", at(policyv1.RolloutSucceeded, 2), "enforce"},
		{"progressive, timed out", progressive, "enforce", at(policyv1.RolloutTimeOut, 2), "enforce"},
		{"progressive, reached in an older generation", progressive, "enforce", at(policyv1.RolloutSucceeded, 1), "inform"},
		{"progressive ignores binding overrides", progressive, "enforce", ClusterState{Name: "c", RemediationAction: "inform", Progress: Progress{Status: policyv1.RolloutSucceeded, Generation: 2}}, "enforce"},
		{"inform root is never progressive", progressive, "inform", at(policyv1.RolloutToApply, 2), "inform"},
		{"All keeps the binding override", all, "inform", ClusterState{Name: "c", RemediationAction: "enforce"}, "enforce"},
		{"empty type is All", clusterv1alpha1.RolloutStrategy{}, "enforce", at(policyv1.RolloutToApply, 2), "enforce"},
		{"invalid strategy is held", clusterv1alpha1.RolloutStrategy{Type: "Canary"}, "enforce", at(policyv1.RolloutToApply, 2), "inform"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := WrittenAction(tc.strategy, tc.root, 2, tc.state); got != tc.want {
				t.Fatalf("WrittenAction = %q, want %q", got, tc.want)
			}
		})
	}
}
