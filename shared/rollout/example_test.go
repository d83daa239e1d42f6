package rollout_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// The first step of a Progressive rollout, one cluster at a time, of an enforce
// policy to a fleet of three new clusters: one cluster is enforced, the others
// wait in inform until it succeeds.
func ExampleStep() {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	in := rollout.StepInput{
		Strategy: clusterv1alpha1.RolloutStrategy{
			Type: clusterv1alpha1.Progressive,
			Progressive: &clusterv1alpha1.RolloutProgressive{
				RolloutConfig:  clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m"},
				MaxConcurrency: intstr.FromInt32(1),
			},
		},
		RemediationAction: policyv1.Enforce,
		Generation:        1,
		Fleet: []rollout.DecisionGroup{
			{Placement: "production", GroupIndex: 0, Clusters: []string{"prod-east", "prod-west", "prod-north"}},
		},
		Now: now,
	}
	res, err := rollout.Step(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range res.Clusters {
		fmt.Printf("%s: write %s, status %s\n", c.Name, c.RemediationAction, c.Progress.Status)
	}
	fmt.Println("root rolloutStatus:", res.RolloutStatus)
	fmt.Println("look again in:", *res.RequeueAfter)
	// Output:
	// prod-east: write Enforce, status Progressing
	// prod-north: write inform, status ToApply
	// prod-west: write inform, status ToApply
	// root rolloutStatus: Progressing
	// look again in: 10m0s
}

// ResolveStrategy spells out the defaults of a strategy and names the field at
// fault when a setting is not valid.
func ExampleResolveStrategy() {
	s, err := rollout.ResolveStrategy(clusterv1alpha1.RolloutStrategy{
		Type: clusterv1alpha1.ProgressivePerGroup,
		ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
			RolloutConfig: clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: 5 * time.Minute}, MaxFailures: intstr.FromString("010%")},
		},
	}, nil)
	fmt.Println(s.Spec.Type, s.MinSuccessTime, s.ProgressDeadline == nil, s.MaxFailures.String(), err)

	_, err = rollout.ResolveStrategy(clusterv1alpha1.RolloutStrategy{
		Type:        clusterv1alpha1.Progressive,
		Progressive: &clusterv1alpha1.RolloutProgressive{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: "soon"}},
	}, nil)
	fmt.Println(err)
	// Output:
	// ProgressivePerGroup 5m0s true 10% <nil>
	// spec.rolloutStrategy.progressive.progressDeadline: Invalid value: "soon": must be "None" or a duration such as 90s, 10m or 2h30m
}

// A replica's compliance counts for the rollout only when it reports on the
// replica as last written: by observedGeneration when the spoke writes one,
// otherwise by the time of the evaluation.
func ExampleReportCurrent() {
	reached := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	progress := rollout.Progress{Status: policyv1.RolloutProgressing, LastTransitionTime: reached, Generation: 3}

	// fleetpolicy's spoke: observedGeneration decides.
	fmt.Println(rollout.ReportCurrent(rollout.Report{Generation: 2, ObservedGeneration: 1}, progress, 3))
	fmt.Println(rollout.ReportCurrent(rollout.Report{Generation: 2, ObservedGeneration: 2}, progress, 3))
	// OCM's add-on: the evaluation must post-date the step that reached the cluster.
	fmt.Println(rollout.ReportCurrent(rollout.Report{Generation: 2, EvaluatedAt: reached.Add(-time.Minute)}, progress, 3))
	fmt.Println(rollout.ReportCurrent(rollout.Report{Generation: 2, EvaluatedAt: reached.Add(time.Minute)}, progress, 3))
	// Output:
	// false
	// true
	// false
	// true
}

// PlanWaves is the offline plan of a rollout (what plan-rollout writes and the
// hub compares its live waves with): a mandatory canary group first, then the
// other groups one at a time, each after a 10 minute soak.
func ExamplePlanWaves() {
	fleet := []rollout.DecisionGroup{
		{Placement: "production", GroupName: "canary", GroupIndex: 0, Clusters: []string{"prod-east"}},
		{Placement: "production", GroupIndex: 1, Clusters: []string{"prod-west", "prod-north"}},
		{Placement: "production", GroupIndex: 2, Clusters: []string{"prod-south"}},
	}
	plan, err := rollout.PlanWaves(rollout.PlanInput{
		Strategy: clusterv1alpha1.RolloutStrategy{
			Type: clusterv1alpha1.ProgressivePerGroup,
			ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
				RolloutConfig:           clusterv1alpha1.RolloutConfig{MinSuccessTime: metav1.Duration{Duration: 10 * time.Minute}},
				MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: []clusterv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}},
			},
		},
		RemediationAction: policyv1.Enforce,
		Fleet:             fleet,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var planned [][]string
	for _, w := range plan.Waves {
		fmt.Printf("wave %d at +%v mandatory=%v %v\n", w.Index, w.NotBefore.Duration, w.Mandatory, w.Clusters)
		planned = append(planned, w.Clusters)
	}

	// A cluster joins group 2 after the plan was written: the live rollout
	// no longer is the planned one.
	fleet[2].Clusters = append(fleet[2].Clusters, "prod-new")
	live, _ := rollout.PlanWaves(rollout.PlanInput{Strategy: plan.Strategy, RemediationAction: policyv1.Enforce, Fleet: fleet})
	fmt.Println(rollout.Divergence(planned, live))
	// Output:
	// wave 0 at +0s mandatory=true [prod-east]
	// wave 1 at +10m0s mandatory=false [prod-north prod-west]
	// wave 2 at +20m0s mandatory=false [prod-south]
	// wave 2: planned [prod-south], live [prod-new prod-south]
}
