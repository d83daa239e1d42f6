package rollout

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
)

// replicaOf is a replica of generation 5 carrying action, whose spoke reports
// compliance on observed (0: a spoke that writes no observedGeneration).
func replicaOf(action policyv1.RemediationAction, compliance policyv1.ComplianceState, observed int64) *policyv1.Policy {
	return &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Generation: 5},
		Spec:       policyv1.PolicySpec{RemediationAction: action},
		Status:     policyv1.PolicyStatus{ComplianceState: compliance, ObservedGeneration: observed},
	}
}

// storedProgress is a status[] entry of cluster name with the given progress.
func storedProgress(name string, status policyv1.RolloutStatus, at time.Time) *policyv1.CompliancePerClusterStatus {
	t := metav1.NewMicroTime(at)
	return &policyv1.CompliancePerClusterStatus{ClusterName: name, ClusterNamespace: name,
		RolloutStatus: status, RolloutGeneration: generation, RolloutLastTransitionTime: &t}
}

func oneAtATime() *clusterv1alpha1.RolloutStrategy {
	s := progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{})
	return &s
}

// TestClusterStates checks what a step reads of each bound cluster: the
// progress the root's status stores, the replica's compliance, and whether
// that is a current report on the replica as last written.
func TestClusterStates(t *testing.T) {
	before := now.Add(-time.Minute)
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Generation: generation},
		Spec: policyv1.PolicySpec{RemediationAction: "enforce",
			RolloutStrategy: oneAtATime()},
		Status: policyv1.PolicyStatus{Status: []*policyv1.CompliancePerClusterStatus{
			storedProgress("current", policyv1.RolloutProgressing, before),
			storedProgress("stale-action", policyv1.RolloutProgressing, before),
			storedProgress("addon-after", policyv1.RolloutProgressing, before),
			storedProgress("addon-before", policyv1.RolloutProgressing, before),
			nil,
		}},
	}
	res := &binding.Resolution{Clusters: []binding.BoundCluster{
		{Name: "addon-after"}, {Name: "addon-before"}, {Name: "current"}, {Name: "new", RemediationAction: "inform"},
		{Name: "old-report"}, {Name: "stale-action"},
	}}
	evaluated := map[string]time.Time{}
	replicas := map[string]*policyv1.Policy{
		"current":      replicaOf("enforce", policyv1.Compliant, 5),
		"stale-action": replicaOf("inform", policyv1.NonCompliant, 5),
		"old-report":   replicaOf("inform", policyv1.Pending, 4),
		"addon-after":  replicaOf("enforce", policyv1.Compliant, 0),
		"addon-before": replicaOf("enforce", policyv1.Compliant, 0),
	}
	evaluated["addon-after"] = before.Add(time.Second)
	evaluated["addon-before"] = before.Add(-time.Second)
	byReplica := map[*policyv1.Policy]string{}
	for name, r := range replicas {
		byReplica[r] = name
	}
	progressing := Progress{Status: policyv1.RolloutProgressing, LastTransitionTime: before, Generation: generation}
	want := []ClusterState{
		{Name: "addon-after", Progress: progressing, Compliance: policyv1.Compliant, StatusCurrent: true},
		{Name: "addon-before", Progress: progressing, Compliance: policyv1.Compliant},
		{Name: "current", Progress: progressing, Compliance: policyv1.Compliant, StatusCurrent: true},
		{Name: "new", RemediationAction: "inform"},
		{Name: "old-report", Compliance: policyv1.Pending},
		{Name: "stale-action", Progress: progressing, Compliance: policyv1.NonCompliant},
	}
	got := ClusterStates(root, res, replicas, func(r *policyv1.Policy) time.Time { return evaluated[byReplica[r]] })
	if len(got) != len(want) {
		t.Fatalf("got %d states, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if !got[i].Progress.LastTransitionTime.Equal(want[i].Progress.LastTransitionTime) {
			t.Errorf("%s: transition at %v, want %v", want[i].Name, got[i].Progress.LastTransitionTime, want[i].Progress.LastTransitionTime)
		}
		got[i].Progress.LastTransitionTime, want[i].Progress.LastTransitionTime = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("state\n got %+v\nwant %+v", got[i], want[i])
		}
	}
}

// TestRootStatusReadBack checks that the root's status[] carries each bound
// cluster's compliance and the progress the step decided, and that the next
// step reads that progress back.
func TestRootStatusReadBack(t *testing.T) {
	root := &policyv1.Policy{
		ObjectMeta: metav1.ObjectMeta{Generation: generation},
		Spec: policyv1.PolicySpec{RemediationAction: "enforce",
			RolloutStrategy: oneAtATime()},
	}
	res := &binding.Resolution{Clusters: []binding.BoundCluster{{Name: "c1"}, {Name: "c2"}, {Name: "outside"}},
		BindingPlacements: []binding.PlacementRef{{Kind: binding.KindPlacement, Name: "p"}}}
	fleet := []DecisionGroup{{Placement: "p", Clusters: []string{"c1", "c2"}}}
	step, err := Step(StepInput{Strategy: root.Spec.Rollout(), RemediationAction: root.Spec.RemediationAction,
		Generation: generation, Fleet: fleet, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	replicas := map[string]*policyv1.Policy{
		"c1":      replicaOf("enforce", policyv1.Compliant, 5),
		"outside": replicaOf("inform", policyv1.NonCompliant, 5),
	}
	status, compliant := RootStatus(res, replicas, step)
	if compliant != policyv1.NonCompliant {
		t.Errorf("compliant = %s, want NonCompliant", compliant)
	}
	type entry struct {
		name       string
		compliance policyv1.ComplianceState
		rollout    policyv1.RolloutStatus
		timed      bool
	}
	var got []entry
	for _, e := range status {
		got = append(got, entry{e.ClusterName, e.ComplianceState, e.RolloutStatus, e.RolloutLastTransitionTime != nil})
	}
	want := []entry{
		{"c1", policyv1.Compliant, policyv1.RolloutProgressing, true},
		{"c2", "", policyv1.RolloutToApply, true},
		{"outside", policyv1.NonCompliant, "", false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("status[]\n got %+v\nwant %+v", got, want)
	}

	root.Status.Status = status
	states := ClusterStates(root, res, nil, func(*policyv1.Policy) time.Time { return time.Time{} })
	for i, d := range step.Clusters {
		if p := states[i].Progress; p.Status != d.Progress.Status || p.Generation != d.Progress.Generation ||
			!p.LastTransitionTime.Equal(d.Progress.LastTransitionTime) {
			t.Errorf("%s: read back %+v, the step stored %+v", d.Name, p, d.Progress)
		}
	}
	if p := states[2].Progress; p != (Progress{}) {
		t.Errorf("outside the fleet: read back %+v, want none", p)
	}
}
