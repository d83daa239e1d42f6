package rollout

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
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

// waveSummary writes a wave as "index@notBefore[clusters](groups)" plus "!" when
// mandatory.
func waveSummary(w Wave) string {
	var groups []string
	for _, g := range w.DecisionGroups {
		groups = append(groups, describeGroup(g))
	}
	s := fmt.Sprintf("%d@%s%v(%s)", w.Index, w.NotBefore.Duration, w.Clusters, strings.Join(groups, ","))
	if w.Mandatory {
		s += "!"
	}
	return s
}

// TestPlanWaves checks the waves of small rollouts.
func TestPlanWaves(t *testing.T) {
	soak := clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5)}
	interleaved := []DecisionGroup{
		{Placement: "p", GroupName: "g", GroupIndex: 0, Clusters: []string{"a", "d"}},
		{Placement: "p", GroupIndex: 1, Clusters: []string{"b", "c"}},
	}
	cases := []struct {
		name     string
		strategy clusterv1alpha1.RolloutStrategy
		root     policyv1.RemediationAction
		fleet    []DecisionGroup
		want     []string
	}{
		{"ProgressivePerGroup: group by group, soak between", perGroup(soak), "enforce", canaryFleet,
			[]string{"0@0s[c1 c2](p/0 (canary))", "1@5m0s[c3 c4 c5](p/1)"}},
		{"Progressive: mandatory canary whole, then maxConcurrency 2", progressive(intstr.FromInt32(2), soak, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}), "enforce", canaryFleet,
			[]string{"0@0s[c1 c2](p/0 (canary))!", "1@5m0s[c3 c4](p/1)", "2@10m0s[c5](p/1)"}},
		{"Progressive: 40% of 5 is 2", progressive(intstr.FromString("40%"), clusterv1alpha1.RolloutConfig{}), "enforce", canaryFleet,
			[]string{"0@0s[c1 c2](p/0 (canary))", "1@0s[c3 c4](p/1)", "2@0s[c5](p/1)"}},
		{"Progressive: 40% of the 3 non-mandatory clusters is 2", progressive(intstr.FromString("40%"), clusterv1alpha1.RolloutConfig{}, clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 0}), "enforce", canaryFleet,
			[]string{"0@0s[c1 c2](p/0 (canary))!", "1@0s[c3 c4](p/1)", "2@0s[c5](p/1)"}},
		{"Progressive: clusters in name order across groups", progressive(intstr.FromInt32(2), clusterv1alpha1.RolloutConfig{}), "enforce", interleaved,
			[]string{"0@0s[a b](p/0 (g),p/1)", "1@0s[c d](p/0 (g),p/1)"}},
		{"ProgressivePerGroup: mandatory groups first, in rollout order", perGroup(soak, clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}), "enforce", interleaved,
			[]string{"0@0s[b c](p/1)!", "1@5m0s[a d](p/0 (g))"}},
		{"All: one wave", clusterv1alpha1.RolloutStrategy{All: &clusterv1alpha1.RolloutAll{RolloutConfig: soak}}, "enforce", canaryFleet,
			[]string{"0@0s[c1 c2 c3 c4 c5](p/0 (canary),p/1)"}},
		{"inform root: one wave", perGroup(soak), "inform", canaryFleet,
			[]string{"0@0s[c1 c2 c3 c4 c5](p/0 (canary),p/1)"}},
		{"no cluster: no wave", perGroup(soak), "enforce", []DecisionGroup{{Placement: "p"}}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanWaves(PlanInput{Strategy: tc.strategy, RemediationAction: tc.root, Fleet: tc.fleet})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range plan.Waves {
				got = append(got, waveSummary(w))
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("waves\n got %v\nwant %v", got, tc.want)
			}
			if plan.Progressive != (tc.root == "enforce" && tc.strategy.Type != "") {
				t.Fatalf("progressive = %v", plan.Progressive)
			}
			checkPlanIndex(t, plan)
		})
	}
}

// checkPlanIndex checks that Plan.Clusters lists every cluster of the waves once,
// sorted, with its wave.
func checkPlanIndex(t *testing.T, plan Plan) {
	t.Helper()
	var fromWaves []PlannedCluster
	for _, w := range plan.Waves {
		for _, c := range w.Clusters {
			fromWaves = append(fromWaves, PlannedCluster{Name: c, Wave: w.Index})
		}
	}
	slices.SortFunc(fromWaves, func(a, b PlannedCluster) int { return strings.Compare(a.Name, b.Name) })
	if !slices.Equal(fromWaves, plan.Clusters) {
		t.Fatalf("clusters %v, want %v", plan.Clusters, fromWaves)
	}
}

// TestPlanJSON checks the plan's JSON shape, which the plan-rollout function
// writes out.
func TestPlanJSON(t *testing.T) {
	plan, err := PlanWaves(PlanInput{Strategy: perGroup(clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5)}),
		RemediationAction: "enforce", Fleet: canaryFleet[:1]})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(plan)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"strategy":{"type":"ProgressivePerGroup","progressivePerGroup":{"minSuccessTime":"5m0s","progressDeadline":"None","maxFailures":0}},` +
		`"progressive":true,"waves":[{"index":0,"clusters":["c1","c2"],"decisionGroups":[{"placement":"p","groupName":"canary","groupIndex":0}],` +
		`"mandatory":false,"notBefore":"0s"}],"clusters":[{"name":"c1","wave":0},{"name":"c2","wave":0}]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// TestPlanErrors checks that a plan fails like a step on bad input.
func TestPlanErrors(t *testing.T) {
	if _, err := PlanWaves(PlanInput{Strategy: clusterv1alpha1.RolloutStrategy{Type: "Canary"}}); err == nil ||
		!strings.Contains(err.Error(), "spec.rolloutStrategy.type") {
		t.Fatalf("unknown type: error %v", err)
	}
	if _, err := PlanWaves(PlanInput{Fleet: []DecisionGroup{{Placement: "p", GroupIndex: 1}}}); err == nil ||
		!strings.Contains(err.Error(), `placement "p"`) {
		t.Fatalf("gap: error %v", err)
	}
}

// randomRollout draws a rollout: 1 to 3 placements of 1 to 5 decision groups of
// up to 8 clusters out of 40 (a cluster may be decided by several groups and
// placements), and a strategy covering every type and setting the planner reads.
func randomRollout(rng *rand.Rand) PlanInput {
	placements := []string{"alpha", "beta", "gamma"}
	rng.Shuffle(len(placements), func(i, j int) { placements[i], placements[j] = placements[j], placements[i] })
	names := []string{"", "", "canary", "emea", "apac"}
	var fleet []DecisionGroup
	for _, p := range placements[:1+rng.IntN(3)] {
		for i := range 1 + rng.IntN(5) {
			g := DecisionGroup{Placement: p, GroupName: names[rng.IntN(len(names))], GroupIndex: int32(i)}
			for range rng.IntN(9) {
				g.Clusters = append(g.Clusters, fmt.Sprintf("c%02d", rng.IntN(40)))
			}
			fleet = append(fleet, g)
		}
	}
	rng.Shuffle(len(fleet), func(i, j int) { fleet[i], fleet[j] = fleet[j], fleet[i] })

	pick := func(values ...intstr.IntOrString) intstr.IntOrString { return values[rng.IntN(len(values))] }
	config := clusterv1alpha1.RolloutConfig{
		MinSuccessTime:   metav1.Duration{Duration: []time.Duration{0, 5 * time.Minute, 90 * time.Second}[rng.IntN(3)]},
		ProgressDeadline: []string{"", "None", "10m", "1h"}[rng.IntN(4)],
		MaxFailures:      pick(intstr.FromInt32(0), intstr.FromInt32(2), intstr.FromString("50%")),
	}
	mandatory := [][]clusterv1alpha1.MandatoryDecisionGroup{
		nil, nil,
		{{GroupName: "canary"}},
		{{GroupIndex: 1}},
		{{GroupName: "emea"}, {GroupIndex: 0}},
		{{GroupName: "absent"}},
	}[rng.IntN(6)]
	var strategy clusterv1alpha1.RolloutStrategy
	switch rng.IntN(4) {
	case 0:
		strategy = clusterv1alpha1.RolloutStrategy{All: &clusterv1alpha1.RolloutAll{RolloutConfig: config}}
	case 1:
		strategy = perGroup(config, mandatory...)
	default:
		strategy = progressive(pick(intstr.FromInt32(0), intstr.FromInt32(1), intstr.FromInt32(2), intstr.FromInt32(3),
			intstr.FromString("25%"), intstr.FromString("40%"), intstr.FromString("100%"), intstr.FromInt32(1000)), config, mandatory...)
	}
	root := policyv1.RemediationAction("enforce")
	if rng.IntN(8) == 0 {
		root = "inform"
	}
	return PlanInput{Strategy: strategy, RemediationAction: root, Fleet: fleet}
}

// libraryWaves asks OCM's rollout library for the clusters to roll out, call
// after call, each time marking the clusters it returned Succeeded and moving the
// fake clock past the soak, until it returns none.
func libraryWaves(t *testing.T, f *fleet, strategy clusterv1alpha1.RolloutStrategy, soak time.Duration) [][]string {
	t.Helper()
	clock := now
	var existing []clustersdkv1alpha1.ClusterRolloutStatus
	var waves [][]string
	for range len(f.clusters) + 1 {
		res, err := decide(f, strategy, slices.Clone(existing), clock)
		if err != nil {
			t.Fatal(err)
		}
		if res.MaxFailureBreach || len(res.ClustersTimeOut) > 0 || len(res.ClustersRemoved) > 0 {
			t.Fatalf("a rollout where all succeeds has a breach, a timeout or a removal: %+v", res)
		}
		var wave []string
		for _, c := range res.ClustersToRollout {
			if c.Status != clustersdkv1alpha1.ToApply {
				t.Fatalf("%s still holds a slot after its soak: %+v", c.ClusterName, c)
			}
			wave = append(wave, c.ClusterName)
			existing = append(existing, clustersdkv1alpha1.ClusterRolloutStatus{
				ClusterName: c.ClusterName, GroupKey: c.GroupKey, Status: clustersdkv1alpha1.Succeeded, LastTransitionTime: timePtr(clock),
			})
		}
		if len(wave) == 0 {
			return waves
		}
		slices.Sort(wave)
		waves = append(waves, wave)
		clock = clock.Add(soak + time.Second)
	}
	t.Fatal("the library's rollout does not end")
	return nil
}

func planClusters(plan Plan) [][]string {
	var out [][]string
	for _, w := range plan.Waves {
		out = append(out, w.Clusters)
	}
	return out
}

// TestPlanMatchesLibrary is the differential test: for random fleets and
// strategies (seeded), the waves PlanWaves computes directly are the sets of
// clusters OCM's rollout library returns call after call.
func TestPlanMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(20260301, 1))
	for i := range 500 {
		in := randomRollout(rng)
		plan, err := PlanWaves(in)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		checkPlanIndex(t, plan)
		f, strategy := resolvedRollout(t, in)
		mandatory := f.mandatoryGroups(strategy.MandatoryDecisionGroups)
		want := libraryWaves(t, f, libraryStrategy(strategy, plan.Progressive, mandatory), strategy.MinSuccessTime)
		if got := planClusters(plan); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("case %d: %+v\nplan    %v\nlibrary %v", i, in, got, want)
		}
		// With one placement the merged groups are the placement's own, and the
		// library resolves the mandatory groups as written to the same waves.
		if placements := slices.CompactFunc(slices.SortedFunc(slices.Values(in.Fleet), func(a, b DecisionGroup) int {
			return strings.Compare(a.Placement, b.Placement)
		}), func(a, b DecisionGroup) bool { return a.Placement == b.Placement }); len(placements) == 1 && plan.Progressive {
			asWritten := libraryWaves(t, f, strategy.Spec, strategy.MinSuccessTime)
			if fmt.Sprint(asWritten) != fmt.Sprint(want) {
				t.Fatalf("case %d: mandatory groups as written %v, by merged index %v", i, asWritten, want)
			}
		}
	}
}

// stepWaves runs a live rollout through Step, every reached cluster reporting
// compliant at once and the clock moving only when Step asks for a requeue, and
// returns the clusters reached at each step with the time since the start.
func stepWaves(t *testing.T, in PlanInput) []string {
	t.Helper()
	clock := now
	var states []ClusterState
	var waves []string
	for range 2*len(in.Fleet)*8 + 4 {
		res, err := Step(StepInput{Strategy: in.Strategy, RemediationAction: in.RemediationAction, Generation: generation,
			Fleet: in.Fleet, Clusters: states, Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		states = reportedCompliant(res)
		if len(res.Reached) > 0 {
			waves = append(waves, fmt.Sprintf("@%s%v", clock.Sub(now), clusterNames(res.Reached)))
			continue
		}
		switch {
		case res.RolloutStatus == policyv1.RolloutSucceeded:
			return waves
		case res.RolloutStatus != policyv1.RolloutProgressing || res.RequeueAfter == nil:
			t.Fatalf("the rollout stalls: %+v", res)
		}
		clock = clock.Add(*res.RequeueAfter)
	}
	t.Fatal("the rollout does not end")
	return nil
}

// TestPlanMatchesStep checks, for random fleets and strategies (seeded), that a
// live rollout driven by Step, every cluster succeeding at once, reaches the
// plan's waves in order, each at its notBefore.
func TestPlanMatchesStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(20260301, 2))
	for i := range 200 {
		in := randomRollout(rng)
		plan, err := PlanWaves(in)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		var want []string
		for _, w := range plan.Waves {
			want = append(want, fmt.Sprintf("@%s%v", w.NotBefore.Duration, w.Clusters))
		}
		if got := stepWaves(t, in); !slices.Equal(got, want) {
			t.Fatalf("case %d: %+v\nstep %v\nplan %v", i, in, got, want)
		}
	}
}

// bigFleet is 10,000 clusters in 100 decision groups of one placement.
func bigFleet() []DecisionGroup {
	fleet := make([]DecisionGroup, 100)
	for g := range fleet {
		fleet[g] = DecisionGroup{Placement: "fleet", GroupIndex: int32(g)}
		for c := range 100 {
			fleet[g].Clusters = append(fleet[g].Clusters, fmt.Sprintf("cluster-%05d", c*100+g))
		}
	}
	fleet[0].GroupName = "canary"
	return fleet
}

// BenchmarkPlan plans 10,000 clusters in 100 groups one cluster at a time: 10,000
// waves.
func BenchmarkPlan(b *testing.B) {
	in := PlanInput{
		Strategy:          progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5)}),
		RemediationAction: "enforce",
		Fleet:             bigFleet(),
	}
	for b.Loop() {
		plan, err := PlanWaves(in)
		if err != nil || len(plan.Waves) != 10000 {
			b.Fatalf("%d waves, %v", len(plan.Waves), err)
		}
	}
}

// BenchmarkStep is one live step over 10,000 clusters in 100 groups, half of them
// reached: it includes the one call to OCM's rollout library.
func BenchmarkStep(b *testing.B) {
	in := bigStepInput()
	for b.Loop() {
		res, err := Step(in)
		if err != nil || len(res.Clusters) != 10000 {
			b.Fatal(err)
		}
	}
}

// bigStepInput is a step over bigFleet with its first 50 groups reached and
// succeeded an hour ago.
func bigStepInput() StepInput {
	in := StepInput{
		Strategy:          perGroup(clusterv1alpha1.RolloutConfig{MinSuccessTime: minutes(5), ProgressDeadline: "10m"}),
		RemediationAction: "enforce", Generation: generation, Fleet: bigFleet(), Now: now,
	}
	for _, g := range in.Fleet[:50] {
		for _, c := range g.Clusters {
			in.Clusters = append(in.Clusters, state(c, policyv1.RolloutSucceeded, time.Hour, policyv1.Compliant))
		}
	}
	return in
}
