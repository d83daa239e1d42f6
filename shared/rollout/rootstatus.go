package rollout

import (
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// ClusterStates are the states Step reads for the clusters res binds root to.
// A cluster's Progress is the one root's status[] stores for it (RootStatus
// wrote it); with a replica (replicas, by cluster name), its compliance is the
// replica's, current when the replica's report is (ReportCurrent, with
// evaluatedAt giving the replica's Report.EvaluatedAt) and the replica carries
// the action the previous step wrote (WrittenAction, compared in any case).
func ClusterStates(root *policyv1.Policy, res *binding.Resolution, replicas map[string]*policyv1.Policy, evaluatedAt func(replica *policyv1.Policy) time.Time) []ClusterState {
	stored := make(map[string]*policyv1.CompliancePerClusterStatus, len(root.Status.Status))
	for _, e := range root.Status.Status {
		if e != nil {
			stored[e.ClusterName] = e
		}
	}
	states := make([]ClusterState, 0, len(res.Clusters))
	for _, c := range res.Clusters {
		state := ClusterState{Name: c.Name, RemediationAction: c.RemediationAction}
		if e := stored[c.Name]; e != nil {
			state.Progress = Progress{Status: e.RolloutStatus, Generation: e.RolloutGeneration}
			if e.RolloutLastTransitionTime != nil {
				state.Progress.LastTransitionTime = e.RolloutLastTransitionTime.Time
			}
		}
		if replica := replicas[c.Name]; replica != nil {
			state.Compliance = replica.Status.ComplianceState
			written := WrittenAction(root.Spec.Rollout(), root.Spec.RemediationAction, root.Generation, state)
			report := Report{Generation: replica.Generation,
				ObservedGeneration: replica.Status.ObservedGeneration, EvaluatedAt: evaluatedAt(replica)}
			state.StatusCurrent = ReportCurrent(report, state.Progress, root.Generation) &&
				strings.EqualFold(string(replica.Spec.RemediationAction), string(written))
		}
		states = append(states, state)
	}
	return states
}

// RootStatus is a root policy's status[] and compliant after step: per cluster
// res binds it to, its replica's compliance (replicas, by cluster name; none
// without a replica) as package binding's Resolution.RootStatus gives it, with
// the Progress step decided for the cluster (none for a cluster outside the
// fleet), which ClusterStates reads back at the next step.
func RootStatus(res *binding.Resolution, replicas map[string]*policyv1.Policy, step StepResult) ([]*policyv1.CompliancePerClusterStatus, policyv1.ComplianceState) {
	observed := make(map[string]policyv1.ComplianceState, len(replicas))
	for name, replica := range replicas {
		observed[name] = replica.Status.ComplianceState
	}
	perCluster, compliant := res.RootStatus(observed)
	progress := make(map[string]Progress, len(step.Clusters))
	for _, d := range step.Clusters {
		progress[d.Name] = d.Progress
	}
	for _, e := range perCluster {
		if pr, ok := progress[e.ClusterName]; ok {
			e.RolloutStatus = pr.Status
			e.RolloutGeneration = pr.Generation
			t := metav1.NewMicroTime(pr.LastTransitionTime)
			e.RolloutLastTransitionTime = &t
		}
	}
	return perCluster, compliant
}
