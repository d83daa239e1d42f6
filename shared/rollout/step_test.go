package rollout

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clustersdkv1alpha1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// now is the fake clock of every step test.
var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const generation = 7

// canaryFleet is the fleet of the verified behaviours (reference/propagator.md
// §6.5): {canary,0}: c1,c2 and {"",1}: c3,c4,c5.
var canaryFleet = []DecisionGroup{
	{Placement: "p", GroupName: "canary", GroupIndex: 0, Clusters: []string{"c2", "c1"}},
	{Placement: "p", GroupIndex: 1, Clusters: []string{"c3", "c4", "c5"}},
}

// state is a cluster of the current generation whose status changed ago before
// now, reporting compliance (current when compliance is not empty).
func state(name string, status policyv1.RolloutStatus, ago time.Duration, compliance policyv1.ComplianceState) ClusterState {
	return ClusterState{
		Name:          name,
		Progress:      Progress{Status: status, LastTransitionTime: now.Add(-ago), Generation: generation},
		Compliance:    compliance,
		StatusCurrent: compliance != "",
	}
}

func progressive(maxConcurrency intstr.IntOrString, config clusterv1alpha1.RolloutConfig, mandatory ...clusterv1alpha1.MandatoryDecisionGroup) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.Progressive, Progressive: &clusterv1alpha1.RolloutProgressive{
		RolloutConfig:           config,
		MaxConcurrency:          maxConcurrency,
		MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: mandatory},
	}}
}

func perGroup(config clusterv1alpha1.RolloutConfig, mandatory ...clusterv1alpha1.MandatoryDecisionGroup) clusterv1alpha1.RolloutStrategy {
	return clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.ProgressivePerGroup, ProgressivePerGroup: &clusterv1alpha1.RolloutProgressivePerGroup{
		RolloutConfig:           config,
		MandatoryDecisionGroups: clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: mandatory},
	}}
}

func minutes(n int) metav1.Duration { return metav1.Duration{Duration: time.Duration(n) * time.Minute} }

func durationPtr(d time.Duration) *time.Duration { return &d }

// reportedCompliant is what the step after res reads when every cluster
// reached so far reports compliant at once: each cluster's stored progress,
// and, unless it is still ToApply, a current Compliant report.
func reportedCompliant(res StepResult) []ClusterState {
	states := make([]ClusterState, 0, len(res.Clusters))
	for _, d := range res.Clusters {
		s := ClusterState{Name: d.Name, Progress: d.Progress}
		if d.Progress.Status != policyv1.RolloutToApply {
			s.Compliance, s.StatusCurrent = policyv1.Compliant, true
		}
		states = append(states, s)
	}
	return states
}

// clusterNames are the names of decisions, in their order.
func clusterNames(decisions []ClusterDecision) []string {
	names := make([]string, len(decisions))
	for i, d := range decisions {
		names[i] = d.Name
	}
	return names
}

// summary writes a step's decisions as "name:status:action" and the newly set
// transition times as "name@now".
func summary(res StepResult) []string {
	var out []string
	for _, d := range res.Clusters {
		out = append(out, fmt.Sprintf("%s:%s:%s", d.Name, d.Progress.Status, d.RemediationAction))
	}
	return out
}

// TestStepVerifiedBehaviours walks every behaviour of OCM's rollout library listed
// in reference/propagator.md §6.5 through Step, with the guards this package adds.
func TestStepVerifiedBehaviours(t *testing.T) {
	deadline10m := clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m"}
	cases := []struct {
		name        string
		strategy    clusterv1alpha1.RolloutStrategy
		fleet       []DecisionGroup
		states      []ClusterState
		want        []string
		wantRoot    policyv1.RolloutStatus
		wantBreach  bool
		wantRequeue *time.Duration
		wantRemoved []string
		wantErr     string
	}{{
		name:     "All, nothing applied: every cluster at once",
		strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "empty type is All (the library would fail: incorrect rollout strategy type)",
		strategy: clusterv1alpha1.RolloutStrategy{},
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "Progressive maxConcurrency 2",
		strategy: progressive(intstr.FromInt32(2), clusterv1alpha1.RolloutConfig{}),
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "Progressive maxConcurrency 40% of 5 is 2",
		strategy: progressive(intstr.FromString("40%"), clusterv1alpha1.RolloutConfig{}),
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "Progressive maxConcurrency 0 means all",
		strategy: progressive(intstr.FromInt32(0), clusterv1alpha1.RolloutConfig{}),
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "maxConcurrency 2, c1 Succeeded, c2 Progressing: c3 joins, recheck at c2's deadline",
		strategy: progressive(intstr.FromInt32(2), deadline10m),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutProgressing, 0, ""),
		},
		want: []string{"c1:Succeeded:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot:    policyv1.RolloutProgressing,
		wantRequeue: durationPtr(10 * time.Minute),
	}, {
		name:     "maxConcurrency 2, c1 Failed now, maxFailures 0: breach, nothing new",
		strategy: progressive(intstr.FromInt32(2), clusterv1alpha1.RolloutConfig{}),
		states: []ClusterState{
			state("c1", policyv1.RolloutProgressing, time.Minute, policyv1.NonCompliant),
		},
		want: []string{"c1:Failed:enforce", "c2:ToApply:inform", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot:   policyv1.RolloutFailed,
		wantBreach: true,
	}, {
		name:     "maxConcurrency 2, c1 Failed 20m ago, deadline 10m, maxFailures 1: c1 times out, c2 and c3 go",
		strategy: progressive(intstr.FromInt32(2), clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromInt32(1)}),
		states: []ClusterState{
			state("c1", policyv1.RolloutFailed, 20*time.Minute, policyv1.NonCompliant),
		},
		want: []string{"c1:TimeOut:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot:    policyv1.RolloutProgressing,
		wantRequeue: durationPtr(10 * time.Minute),
	}, {
		name:     "maxFailures 10 of 5 clusters is 0: a timeout breaches",
		strategy: progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromInt32(10)}),
		states: []ClusterState{
			state("c1", policyv1.RolloutProgressing, 20*time.Minute, ""),
		},
		want: []string{"c1:TimeOut:enforce", "c2:ToApply:inform", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot:   policyv1.RolloutFailed,
		wantBreach: true,
	}, {
		name:     "a state of a cluster no longer placed is removed",
		strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
		states: []ClusterState{
			state("c9", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
		},
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot:    policyv1.RolloutProgressing,
		wantRemoved: []string{"c9"},
	}, {
		name:     "maxConcurrency 1, soak 5m, c1 just succeeded: it holds the slot, recheck when the soak ends",
		strategy: progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5)}),
		states: []ClusterState{
			state("c1", policyv1.RolloutProgressing, time.Minute, policyv1.Compliant),
		},
		want: []string{"c1:Succeeded:enforce", "c2:ToApply:inform", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot:    policyv1.RolloutProgressing,
		wantRequeue: durationPtr(5 * time.Minute),
	}, {
		name:     "maxConcurrency 1, soak 5m, c1 succeeded 20m ago: c2 goes",
		strategy: progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5)}),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, 20*time.Minute, policyv1.Compliant),
		},
		want: []string{"c1:Succeeded:enforce", "c2:Progressing:enforce", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "Progressive mandatory canary with maxConcurrency 1: the whole group goes",
		strategy: progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name: "Progressive with mandatory groups done waits for the clusters in flight (no sliding window)",
		strategy: progressive(intstr.FromInt32(2), clusterv1alpha1.RolloutConfig{},
			clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c3", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c4", policyv1.RolloutProgressing, time.Minute, ""),
		},
		want: []string{"c1:Succeeded:enforce", "c2:Succeeded:enforce", "c3:Succeeded:enforce",
			"c4:Progressing:enforce", "c5:ToApply:inform"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "Progressive without mandatory groups slides its window",
		strategy: progressive(intstr.FromInt32(2), clusterv1alpha1.RolloutConfig{}),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c3", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c4", policyv1.RolloutProgressing, time.Minute, ""),
		},
		want: []string{"c1:Succeeded:enforce", "c2:Succeeded:enforce", "c3:Succeeded:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "ProgressivePerGroup, nothing applied: group 0",
		strategy: perGroup(clusterv1alpha1.RolloutConfig{}),
		want: []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "ProgressivePerGroup, group 0 succeeded: group 1",
		strategy: perGroup(clusterv1alpha1.RolloutConfig{}),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
		},
		want: []string{"c1:Succeeded:enforce", "c2:Succeeded:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot: policyv1.RolloutProgressing,
	}, {
		name:     "ProgressivePerGroup, c2 Failed without deadline: breach, stuck until c2 changes",
		strategy: perGroup(clusterv1alpha1.RolloutConfig{}),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutFailed, 48*time.Hour, policyv1.NonCompliant),
		},
		want: []string{"c1:Succeeded:enforce", "c2:Failed:enforce", "c3:ToApply:inform",
			"c4:ToApply:inform", "c5:ToApply:inform"},
		wantRoot:   policyv1.RolloutFailed,
		wantBreach: true,
	}, {
		name:     "ProgressivePerGroup, maxFailures 50% of 2, c2 times out: 1 is not more than 1, group 1 goes",
		strategy: perGroup(clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromString("50%")}),
		states: []ClusterState{
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutProgressing, 20*time.Minute, ""),
		},
		want: []string{"c1:Succeeded:enforce", "c2:TimeOut:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot:    policyv1.RolloutProgressing,
		wantRequeue: durationPtr(10 * time.Minute),
	}, {
		name:     "decision group indices {0,2}: rejected (the library would drop group 2)",
		strategy: clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
		fleet: []DecisionGroup{
			{Placement: "p", GroupIndex: 0, Clusters: []string{"c1"}},
			{Placement: "p", GroupIndex: 2, Clusters: []string{"c2"}},
		},
		wantErr: `placement "p": decision group indices [0 2]: index 1 is missing`,
	}, {
		name:     `progressDeadline "1d": rejected naming the field`,
		strategy: progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{ProgressDeadline: "1d"}),
		wantErr:  `spec.rolloutStrategy.progressive.progressDeadline: Invalid value: "1d"`,
	}, {
		name:     `progressDeadline "0s", c1 Progressing: c1 times out at once, the others go`,
		strategy: progressive(intstr.FromInt32(0), clusterv1alpha1.RolloutConfig{ProgressDeadline: "0s", MaxFailures: intstr.FromString("100%")}),
		states: []ClusterState{
			state("c1", policyv1.RolloutProgressing, 0, ""),
		},
		want: []string{"c1:TimeOut:enforce", "c2:Progressing:enforce", "c3:Progressing:enforce",
			"c4:Progressing:enforce", "c5:Progressing:enforce"},
		wantRoot:    policyv1.RolloutProgressing,
		wantRequeue: durationPtr(0),
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fleet := tc.fleet
			if fleet == nil {
				fleet = canaryFleet
			}
			res, err := Step(StepInput{
				Strategy: tc.strategy, RemediationAction: "enforce", Generation: generation,
				Fleet: fleet, Clusters: tc.states, Now: now,
			})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res); !slices.Equal(got, tc.want) {
				t.Errorf("clusters\n got %v\nwant %v", got, tc.want)
			}
			if res.RolloutStatus != tc.wantRoot {
				t.Errorf("root rolloutStatus = %s, want %s", res.RolloutStatus, tc.wantRoot)
			}
			if res.MaxFailureBreach != tc.wantBreach {
				t.Errorf("breach = %v, want %v", res.MaxFailureBreach, tc.wantBreach)
			}
			if !equalDurationPtr(res.RequeueAfter, tc.wantRequeue) {
				t.Errorf("requeue = %v, want %v", fmtDurationPtr(res.RequeueAfter), fmtDurationPtr(tc.wantRequeue))
			}
			if !slices.Equal(res.Removed, tc.wantRemoved) {
				t.Errorf("removed = %v, want %v", res.Removed, tc.wantRemoved)
			}
		})
	}
}

func equalDurationPtr(a, b *time.Duration) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

func fmtDurationPtr(d *time.Duration) string {
	if d == nil {
		return "none"
	}
	return d.String()
}

// TestStepStatusTable checks the per-cluster rollout status (ToApply,
// Progressing, Succeeded, Failed, TimeOut) of a cluster the rollout has
// reached, and the transition times.
func TestStepStatusTable(t *testing.T) {
	fleet := []DecisionGroup{{Placement: "p", Clusters: []string{"c1"}}}
	cases := []struct {
		name       string
		root       policyv1.RemediationAction
		strategy   clusterv1alpha1.RolloutStrategy
		stored     policyv1.RolloutStatus
		compliance policyv1.ComplianceState
		current    bool
		want       policyv1.RolloutStatus
		wantAction policyv1.RemediationAction
		wantRoot   policyv1.RolloutStatus
	}{
		{"enforce: no status yet", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, "", false, policyv1.RolloutProgressing, "enforce", policyv1.RolloutProgressing},
		{"enforce: status of an older replica", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, policyv1.Compliant, false, policyv1.RolloutProgressing, "enforce", policyv1.RolloutProgressing},
		{"enforce: compliant", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, policyv1.Compliant, true, policyv1.RolloutSucceeded, "enforce", policyv1.RolloutSucceeded},
		{"enforce: non-compliant", "Enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, policyv1.NonCompliant, true, policyv1.RolloutFailed, "Enforce", policyv1.RolloutFailed},
		{"enforce: pending dependencies keep it progressing", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, policyv1.Pending, true, policyv1.RolloutProgressing, "enforce", policyv1.RolloutProgressing},
		{"enforce: succeeded, then non-compliant again", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutSucceeded, policyv1.NonCompliant, true, policyv1.RolloutFailed, "enforce", policyv1.RolloutFailed},
		{"enforce: timed out, then compliant", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutTimeOut, policyv1.Compliant, true, policyv1.RolloutSucceeded, "enforce", policyv1.RolloutSucceeded},
		{"enforce: timed out, then non-compliant stays TimeOut", "enforce", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutTimeOut, policyv1.NonCompliant, true, policyv1.RolloutTimeOut, "enforce", policyv1.RolloutFailed},
		{"All enforce: non-compliant", "enforce", clusterv1alpha1.RolloutStrategy{}, policyv1.RolloutProgressing, policyv1.NonCompliant, true, policyv1.RolloutFailed, "enforce", policyv1.RolloutFailed},
		{"inform: no status yet", "inform", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, "", false, policyv1.RolloutProgressing, "inform", policyv1.RolloutProgressing},
		{"inform: any status succeeds", "inform", perGroup(clusterv1alpha1.RolloutConfig{}), policyv1.RolloutProgressing, policyv1.NonCompliant, true, policyv1.RolloutSucceeded, "inform", policyv1.RolloutSucceeded},
		{"no root action: any status succeeds", "", clusterv1alpha1.RolloutStrategy{}, policyv1.RolloutProgressing, policyv1.Compliant, true, policyv1.RolloutSucceeded, "", policyv1.RolloutSucceeded},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := state("c1", tc.stored, time.Minute, tc.compliance)
			s.StatusCurrent = tc.current
			res, err := Step(StepInput{Strategy: tc.strategy, RemediationAction: tc.root, Generation: generation,
				Fleet: fleet, Clusters: []ClusterState{s}, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			d := res.Clusters[0]
			if d.Progress.Status != tc.want || d.RemediationAction != tc.wantAction || res.RolloutStatus != tc.wantRoot {
				t.Fatalf("got %s/%s root %s, want %s/%s root %s", d.Progress.Status, d.RemediationAction, res.RolloutStatus,
					tc.want, tc.wantAction, tc.wantRoot)
			}
			wantTransition := now.Add(-time.Minute)
			if tc.want != tc.stored {
				wantTransition = now
			}
			if !d.Progress.LastTransitionTime.Equal(wantTransition) || d.Progress.Generation != generation {
				t.Fatalf("progress = %+v, want transition %s of generation %d", d.Progress, wantTransition, generation)
			}
		})
	}
}

// TestStepNewGeneration checks that a new generation starts the rollout again:
// every cluster back to inform, ToApply, its transition time reset to now (ocm PR
// #1207: a stale transition time cut the soak short), then the first wave.
func TestStepNewGeneration(t *testing.T) {
	old := func(name string) ClusterState {
		s := state(name, policyv1.RolloutSucceeded, 24*time.Hour, policyv1.Compliant)
		s.Progress.Generation = generation - 1
		return s
	}
	res, err := Step(StepInput{
		Strategy:          perGroup(clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5)}),
		RemediationAction: "enforce", Generation: generation, Fleet: canaryFleet, Now: now,
		Clusters: []ClusterState{old("c1"), old("c2"), old("c3"), old("c4"), old("c5")},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c1:Progressing:enforce", "c2:Progressing:enforce", "c3:ToApply:inform", "c4:ToApply:inform", "c5:ToApply:inform"}
	if got := summary(res); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for _, d := range res.Clusters {
		if !d.Progress.LastTransitionTime.Equal(now) || d.Progress.Generation != generation {
			t.Errorf("%s: progress %+v, want transition now and generation %d", d.Name, d.Progress, generation)
		}
	}
	if res.RolloutStatus != policyv1.RolloutProgressing {
		t.Errorf("root = %s, want Progressing", res.RolloutStatus)
	}
}

// TestStepMissingTransitionTime checks the guard against the library's
// never-timing-out clusters: a reached cluster without a transition time gets now,
// and times out once the deadline has passed from then.
func TestStepMissingTransitionTime(t *testing.T) {
	fleet := []DecisionGroup{{Placement: "p", Clusters: []string{"c1", "c2"}}}
	strategy := progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromInt32(1)})
	s := ClusterState{Name: "c1", Progress: Progress{Status: policyv1.RolloutProgressing, Generation: generation}}
	first, err := Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation, Fleet: fleet,
		Clusters: []ClusterState{s}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if got := first.Clusters[0].Progress; got.Status != policyv1.RolloutProgressing || !got.LastTransitionTime.Equal(now) {
		t.Fatalf("c1 progress = %+v, want Progressing since now", got)
	}
	if got := fmtDurationPtr(first.RequeueAfter); got != "10m0s" {
		t.Fatalf("requeue = %s, want 10m0s", got)
	}
	s.Progress = first.Clusters[0].Progress
	later, err := Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation, Fleet: fleet,
		Clusters: []ClusterState{s}, Now: now.Add(11 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c1:TimeOut:enforce", "c2:Progressing:enforce"}
	if got := summary(later); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestStepNewClusterAfterSuccess checks the miniature rollout: after a rollout
// succeeded, a cluster that joins is rolled out on its own and the root goes back
// to Progressing.
func TestStepNewClusterAfterSuccess(t *testing.T) {
	fleet := []DecisionGroup{
		{Placement: "p", GroupName: "canary", GroupIndex: 0, Clusters: []string{"c1", "c2"}},
		{Placement: "p", GroupIndex: 1, Clusters: []string{"c3", "c4", "c5", "c6"}},
	}
	var states []ClusterState
	for _, c := range []string{"c1", "c2", "c3", "c4", "c5"} {
		states = append(states, state(c, policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant))
	}
	for _, strategy := range []clusterv1alpha1.RolloutStrategy{
		perGroup(clusterv1alpha1.RolloutConfig{}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}),
		progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{}),
	} {
		t.Run(string(strategy.Type), func(t *testing.T) {
			res, err := Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation,
				Fleet: fleet, Clusters: states, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{"c1:Succeeded:enforce", "c2:Succeeded:enforce", "c3:Succeeded:enforce",
				"c4:Succeeded:enforce", "c5:Succeeded:enforce", "c6:Progressing:enforce"}
			if got := summary(res); !slices.Equal(got, want) {
				t.Fatalf("got %v, want %v", got, want)
			}
			if res.RolloutStatus != policyv1.RolloutProgressing {
				t.Fatalf("root = %s, want Progressing", res.RolloutStatus)
			}
		})
	}
}

// TestStepNewClusterWaitsForItsTurn checks that a cluster not reached yet (here
// one that sorts first) never takes a slot ahead of a cluster in flight: the
// library is handed only the clusters already reached. Given as ToApply, the
// library would choose it and leave the in-flight cluster unchecked.
func TestStepNewClusterWaitsForItsTurn(t *testing.T) {
	fleet := []DecisionGroup{{Placement: "p", Clusters: []string{"a0", "c1", "c2", "c3"}}}
	strategy := progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m"})

	// The hazard, as the library has it.
	f, err := newFleet(fleet)
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := ResolveStrategy(strategy, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := decide(f, resolved.Spec, []clustersdkv1alpha1.ClusterRolloutStatus{
		{ClusterName: "a0", Status: clustersdkv1alpha1.ToApply},
		{ClusterName: "c2", Status: clustersdkv1alpha1.Progressing, LastTransitionTime: timePtr(now.Add(-5 * time.Minute))},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.ClustersToRollout) != 1 || raw.ClustersToRollout[0].ClusterName != "a0" {
		t.Fatalf("the library no longer lets a ToApply status take the slot of a cluster in flight (%+v): review the guard", raw)
	}

	res, err := Step(StepInput{
		Strategy: strategy, RemediationAction: "enforce", Generation: generation, Fleet: fleet, Now: now,
		Clusters: []ClusterState{
			state("a0", policyv1.RolloutToApply, time.Hour, policyv1.NonCompliant),
			state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
			state("c2", policyv1.RolloutProgressing, 5*time.Minute, ""),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a0:ToApply:inform", "c1:Succeeded:enforce", "c2:Progressing:enforce", "c3:ToApply:inform"}
	if got := summary(res); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if got := fmtDurationPtr(res.RequeueAfter); got != "5m0s" || res.RolloutStatus != policyv1.RolloutProgressing {
		t.Fatalf("requeue %s root %s, want 5m0s (c2's deadline) and Progressing", got, res.RolloutStatus)
	}
}

// TestStepMandatoryTimeOutStopsTheRollout checks the guard on a library quirk: once
// a mandatory cluster is stored as TimeOut, the library moves on to the other
// groups as if the mandatory groups had succeeded.
func TestStepMandatoryTimeOutStopsTheRollout(t *testing.T) {
	strategy := perGroup(clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromString("100%")},
		clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"})
	states := []ClusterState{
		state("c1", policyv1.RolloutTimeOut, time.Hour, ""),
		state("c2", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant),
	}

	// The quirk, as the library has it.
	f, err := newFleet(canaryFleet)
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := ResolveStrategy(strategy, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := decide(f, resolved.Spec, []clustersdkv1alpha1.ClusterRolloutStatus{
		{ClusterName: "c1", Status: clustersdkv1alpha1.TimeOut, LastTransitionTime: timePtr(now.Add(-time.Hour))},
		{ClusterName: "c2", Status: clustersdkv1alpha1.Succeeded, LastTransitionTime: timePtr(now.Add(-time.Hour))},
	}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw.ClustersToRollout) != 3 || raw.MaxFailureBreach {
		t.Fatalf("the library no longer moves past a timed-out mandatory cluster (%+v): review the guard", raw)
	}

	// The guard.
	res, err := Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation,
		Fleet: canaryFleet, Clusters: states, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"c1:TimeOut:enforce", "c2:Succeeded:enforce", "c3:ToApply:inform", "c4:ToApply:inform", "c5:ToApply:inform"}
	if got := summary(res); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	if !res.MaxFailureBreach || res.RolloutStatus != policyv1.RolloutFailed {
		t.Fatalf("breach %v root %s, want the rollout stopped and Failed", res.MaxFailureBreach, res.RolloutStatus)
	}

	// A mandatory cluster that recovers releases the rollout.
	states[0] = state("c1", policyv1.RolloutTimeOut, time.Hour, policyv1.Compliant)
	res, err = Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation,
		Fleet: canaryFleet, Clusters: states, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"c1:Succeeded:enforce", "c2:Succeeded:enforce", "c3:Progressing:enforce", "c4:Progressing:enforce", "c5:Progressing:enforce"}
	if got := summary(res); !slices.Equal(got, want) {
		t.Fatalf("after recovery got %v, want %v", got, want)
	}
}

// TestStepNotProgressive checks inform roots and All: every cluster at once, with
// its own action (binding overrides apply), no second pass, and a deadline still
// times out silent clusters.
func TestStepNotProgressive(t *testing.T) {
	cases := []struct {
		name     string
		root     policyv1.RemediationAction
		strategy clusterv1alpha1.RolloutStrategy
		override policyv1.RemediationAction
		want     []string
	}{
		{"inform root, ProgressivePerGroup", "inform", perGroup(clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m"}), "",
			[]string{"c1:Progressing:inform", "c2:TimeOut:inform", "c3:Progressing:inform", "c4:Progressing:inform", "c5:Progressing:inform"}},
		{"inform root, All, c1 enforced by a binding", "inform", clusterv1alpha1.RolloutStrategy{All: &clusterv1alpha1.RolloutAll{RolloutConfig: clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m"}}}, "enforce",
			[]string{"c1:Progressing:enforce", "c2:TimeOut:inform", "c3:Progressing:inform", "c4:Progressing:inform", "c5:Progressing:inform"}},
		{"enforce root, Progressive ignores overrides", "enforce", progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{ProgressDeadline: "10m", MaxFailures: intstr.FromInt32(2)}), "inform",
			[]string{"c1:Progressing:enforce", "c2:TimeOut:enforce", "c3:ToApply:inform", "c4:ToApply:inform", "c5:ToApply:inform"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c2 := state("c2", policyv1.RolloutProgressing, time.Hour, "")
			res, err := Step(StepInput{Strategy: tc.strategy, RemediationAction: tc.root, Generation: generation, Fleet: canaryFleet, Now: now,
				Clusters: []ClusterState{{Name: "c1", RemediationAction: tc.override}, c2}})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(res); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestStepMultiplePlacements checks that ProgressivePerGroup goes placement by
// placement in name order, group by group, and that a cluster decided by two
// placements is rolled out once, with the first.
func TestStepMultiplePlacements(t *testing.T) {
	fleet := []DecisionGroup{
		{Placement: "zeta", GroupIndex: 0, Clusters: []string{"a1", "shared"}},
		{Placement: "alpha", GroupIndex: 1, Clusters: []string{"z2"}},
		{Placement: "alpha", GroupIndex: 0, Clusters: []string{"z1", "shared"}},
	}
	strategy := perGroup(clusterv1alpha1.RolloutConfig{})
	var states []ClusterState
	var waves [][]string
	for range 4 {
		res, err := Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation,
			Fleet: fleet, Clusters: states, Now: now})
		if err != nil {
			t.Fatal(err)
		}
		var wave []string
		for _, d := range res.Reached {
			wave = append(wave, d.Name+"@"+describeGroup(d.Group))
		}
		states = reportedCompliant(res)
		waves = append(waves, wave)
	}
	want := [][]string{{"shared@alpha/0", "z1@alpha/0"}, {"z2@alpha/1"}, {"a1@zeta/0"}, nil}
	if fmt.Sprint(waves) != fmt.Sprint(want) {
		t.Fatalf("waves = %v, want %v", waves, want)
	}
}

// TestStepProgressivePerGroupExample runs the ProgressivePerGroup example of
// examples/api/rollout.yaml to the end: an enforced policy with minSuccessTime
// 5m, progressDeadline 10m and maxFailures 2% over a placement whose decision
// groups are dev-emea and dev-apac, 10 clusters per group, the rest ungrouped. Every reached cluster becomes compliant at once.
func TestStepProgressivePerGroupExample(t *testing.T) {
	var emea, apac, rest []string
	for i := range 12 {
		emea = append(emea, fmt.Sprintf("emea-%02d", i))
	}
	for i := range 4 {
		apac = append(apac, fmt.Sprintf("apac-%02d", i))
	}
	for i := range 3 {
		rest = append(rest, fmt.Sprintf("other-%02d", i))
	}
	fleet := []DecisionGroup{
		{Placement: "sample-placement", GroupName: "dev-emea", GroupIndex: 0, Clusters: emea[:10]},
		{Placement: "sample-placement", GroupName: "dev-emea", GroupIndex: 1, Clusters: emea[10:]},
		{Placement: "sample-placement", GroupName: "dev-apac", GroupIndex: 2, Clusters: apac},
		{Placement: "sample-placement", GroupIndex: 3, Clusters: rest},
	}
	strategy := perGroup(clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5), ProgressDeadline: "10m", MaxFailures: intstr.FromString("2%")})

	clock := now
	var states []ClusterState
	type wave struct {
		at       time.Duration
		clusters []string
	}
	var waves []wave
	first := true
	for step := 0; ; step++ {
		if step > 20 {
			t.Fatal("the rollout does not end")
		}
		res, err := Step(StepInput{Strategy: strategy, RemediationAction: "enforce", Generation: generation,
			Fleet: fleet, Clusters: states, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		if first {
			// The first pass: every replica is written, the first group enforced and
			// the others inform with rolloutStatus ToApply.
			for _, d := range res.Clusters {
				wantAction, wantStatus := policyv1.RemediationAction("inform"), policyv1.RolloutToApply
				if d.Group.GroupIndex == 0 {
					wantAction, wantStatus = "enforce", policyv1.RolloutProgressing
				}
				if d.RemediationAction != wantAction || d.Progress.Status != wantStatus {
					t.Fatalf("first pass: %s is %s/%s, want %s/%s", d.Name, d.RemediationAction, d.Progress.Status, wantAction, wantStatus)
				}
			}
			first = false
		}
		states = reportedCompliant(res)
		reached := clusterNames(res.Reached)
		if len(reached) > 0 {
			waves = append(waves, wave{clock.Sub(now), reached})
		}
		if res.RolloutStatus == policyv1.RolloutSucceeded {
			break
		}
		if res.RolloutStatus != policyv1.RolloutProgressing {
			t.Fatalf("root = %s mid-rollout", res.RolloutStatus)
		}
		if len(reached) == 0 {
			if res.RequeueAfter == nil {
				t.Fatal("the rollout waits for nothing")
			}
			clock = clock.Add(*res.RequeueAfter)
		}
	}
	want := []wave{{0, emea[:10]}, {5 * time.Minute, emea[10:]}, {10 * time.Minute, apac}, {15 * time.Minute, rest}}
	if fmt.Sprint(waves) != fmt.Sprint(want) {
		t.Fatalf("waves\n got %v\nwant %v", waves, want)
	}
}

// TestStepErrors checks that bad input is rejected naming what is wrong.
func TestStepErrors(t *testing.T) {
	cases := []struct {
		name    string
		in      StepInput
		wantErr string
	}{
		{"unknown type", StepInput{Strategy: clusterv1alpha1.RolloutStrategy{Type: "Canary"}},
			`spec.rolloutStrategy.type: Unsupported value: "Canary"`},
		{"unnamed cluster state", StepInput{Clusters: []ClusterState{{}}}, "cluster state 0: the cluster name is empty"},
		{"two states for one cluster", StepInput{Clusters: []ClusterState{{Name: "c1"}, {Name: "c1"}}}, `cluster "c1": has two states`},
		{"unnamed cluster in a group", StepInput{Fleet: []DecisionGroup{{Placement: "p", Clusters: []string{""}}}},
			`placement "p": decision group index 0: a cluster has an empty name`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Step(tc.in)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// TestStepEmptyFleet checks that a policy bound to no cluster has nothing to do.
func TestStepEmptyFleet(t *testing.T) {
	res, err := Step(StepInput{Strategy: perGroup(clusterv1alpha1.RolloutConfig{}), RemediationAction: "enforce",
		Generation: generation, Now: now, Clusters: []ClusterState{state("gone", policyv1.RolloutSucceeded, 0, policyv1.Compliant)}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Clusters) != 0 || res.RolloutStatus != policyv1.RolloutSucceeded || !slices.Equal(res.Removed, []string{"gone"}) {
		t.Fatalf("got %+v", res)
	}
}

// TestStepRestoresLibraryClock checks that the library's clock is the caller's
// again after a step.
func TestStepRestoresLibraryClock(t *testing.T) {
	before := clustersdkv1alpha1.RolloutClock
	if _, err := Step(StepInput{Fleet: canaryFleet, RemediationAction: "enforce", Now: now}); err != nil {
		t.Fatal(err)
	}
	if clustersdkv1alpha1.RolloutClock != before {
		t.Fatal("RolloutClock was not restored")
	}
}

func TestUsesGroupIndexes(t *testing.T) {
	strategy := func(typ clusterv1alpha1.RolloutType) *clusterv1alpha1.RolloutStrategy {
		return &clusterv1alpha1.RolloutStrategy{Type: typ}
	}
	for _, tt := range []struct {
		action   policyv1.RemediationAction
		strategy *clusterv1alpha1.RolloutStrategy
		want     bool
	}{
		{"enforce", nil, false},
		{"enforce", strategy(""), false},
		{"enforce", strategy(clusterv1alpha1.All), false},
		{"enforce", strategy(clusterv1alpha1.Progressive), true},
		{"Enforce", strategy(clusterv1alpha1.ProgressivePerGroup), true},
		{"inform", strategy(clusterv1alpha1.Progressive), false},
	} {
		spec := &policyv1.PolicySpec{RemediationAction: tt.action, RolloutStrategy: tt.strategy}
		if got := UsesGroupIndexes(spec); got != tt.want {
			t.Errorf("%s with %+v: %v, want %v", tt.action, tt.strategy, got, tt.want)
		}
	}
}

// TestStepReached checks which clusters a step says it reached: those the
// rollout chose at this step, not those Progressing again with a transition
// at this step.
func TestStepReached(t *testing.T) {
	fleet := []DecisionGroup{{Placement: "p", GroupIndex: 0, Clusters: []string{"c2", "c1"}}}
	oneAtATime := progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(1)})
	for _, tc := range []struct {
		name        string
		strategy    clusterv1alpha1.RolloutStrategy
		root        policyv1.RemediationAction
		states      []ClusterState
		want        []string
		progressing []string // Progressing since now, reached or not
	}{{
		name:        "the first cluster of a progressive rollout",
		strategy:    oneAtATime,
		root:        "enforce",
		want:        []string{"c1"},
		progressing: []string{"c1"},
	}, {
		name:        "the next one once the first succeeded",
		strategy:    oneAtATime,
		root:        "enforce",
		states:      []ClusterState{state("c1", policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant)},
		want:        []string{"c2"},
		progressing: []string{"c2"},
	}, {
		// c1 failed, and its report is no longer current: it is Progressing
		// again from now on, holding the only slot, but it was reached before.
		name:        "a failed cluster Progressing again is not reached again",
		strategy:    oneAtATime,
		root:        "enforce",
		states:      []ClusterState{state("c1", policyv1.RolloutFailed, time.Hour, "")},
		progressing: []string{"c1"},
	}, {
		name:        "a rollout that is not progressive reaches every cluster at once, whatever its action",
		strategy:    clusterv1alpha1.RolloutStrategy{Type: clusterv1alpha1.All},
		root:        "inform",
		want:        []string{"c1", "c2"},
		progressing: []string{"c1", "c2"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Step(StepInput{Strategy: tc.strategy, RemediationAction: tc.root, Generation: generation,
				Fleet: fleet, Clusters: tc.states, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if got := clusterNames(res.Reached); !slices.Equal(got, tc.want) {
				t.Errorf("reached %v, want %v", got, tc.want)
			}
			var progressing []string
			for _, d := range res.Clusters {
				if d.Progress.Status == policyv1.RolloutProgressing && d.Progress.LastTransitionTime.Equal(now) {
					progressing = append(progressing, d.Name)
				}
			}
			if !slices.Equal(progressing, tc.progressing) {
				t.Errorf("Progressing since now: %v, want %v", progressing, tc.progressing)
			}
			for _, d := range res.Reached {
				i := slices.IndexFunc(res.Clusters, func(c ClusterDecision) bool { return c.Name == d.Name })
				if i < 0 || !reflect.DeepEqual(res.Clusters[i], d) {
					t.Errorf("reached %+v is not the step's decision for %s", d, d.Name)
				}
			}
		})
	}
}
