package rollout

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// TestNewFleet checks how placements' decision groups are merged into the single
// group list the library walks.
func TestNewFleet(t *testing.T) {
	cases := []struct {
		name string
		in   []DecisionGroup
		want string // groups in rollout order, "placement/index(name)=clusters"
	}{
		{"empty", nil, ""},
		{"a group split over several decisions is one group",
			[]DecisionGroup{
				{Placement: "p", GroupName: "g", GroupIndex: 0, Clusters: []string{"c3", "c1"}},
				{Placement: "p", GroupName: "g", GroupIndex: 0, Clusters: []string{"c2", "c1"}},
			},
			"p/0(g)=[c1 c2 c3]"},
		{"placements in name order, groups in index order",
			[]DecisionGroup{
				{Placement: "b", GroupIndex: 1, Clusters: []string{"b1"}},
				{Placement: "a", GroupIndex: 0, Clusters: []string{"a0"}},
				{Placement: "b", GroupIndex: 0, Clusters: []string{"b0"}},
			},
			"a/0()=[a0] b/0()=[b0] b/1()=[b1]"},
		{"a cluster belongs to the first group deciding it; an emptied group keeps its place",
			[]DecisionGroup{
				{Placement: "b", GroupIndex: 0, Clusters: []string{"x"}},
				{Placement: "b", GroupIndex: 1, Clusters: []string{"y"}},
				{Placement: "a", GroupIndex: 0, Clusters: []string{"y", "x"}},
			},
			"a/0()=[x y] b/0()=[] b/1()=[]"},
		{"an empty group keeps its index",
			[]DecisionGroup{{Placement: "p", GroupIndex: 0}, {Placement: "p", GroupIndex: 1, Clusters: []string{"c"}}},
			"p/0()=[] p/1()=[c]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := newFleet(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, g := range f.groups {
				got = append(got, fmt.Sprintf("%s/%d(%s)=%v", g.ref.Placement, g.ref.GroupIndex, g.ref.GroupName, g.clusters))
			}
			if strings.Join(got, " ") != tc.want {
				t.Fatalf("got  %s\nwant %s", strings.Join(got, " "), tc.want)
			}
			var all []string
			for _, g := range f.groups {
				all = append(all, g.clusters...)
			}
			slices.Sort(all)
			if !slices.Equal(all, f.clusters) {
				t.Fatalf("clusters %v, want %v", f.clusters, all)
			}
		})
	}
}

// TestNewFleetErrors checks that malformed decision groups are rejected naming
// the placement and the group.
func TestNewFleetErrors(t *testing.T) {
	cases := []struct {
		name string
		in   []DecisionGroup
		want []string
	}{
		{"gap", []DecisionGroup{{Placement: "p", GroupIndex: 0}, {Placement: "p", GroupIndex: 2}},
			[]string{`placement "p": decision group indices [0 2]: index 1 is missing`}},
		{"not from 0", []DecisionGroup{{Placement: "p", GroupIndex: 1}, {Placement: "q", GroupIndex: 0}},
			[]string{`placement "p": decision group indices [1]: index 0 is missing`}},
		{"negative", []DecisionGroup{{Placement: "p", GroupIndex: -1}},
			[]string{`placement "p": decision group index -1: must not be negative`}},
		{"two names", []DecisionGroup{{Placement: "p", GroupName: "a"}, {Placement: "p", GroupName: "b"}},
			[]string{`placement "p": decision group index 0: has two names, "a" and "b"`}},
		{"every error at once",
			[]DecisionGroup{{Placement: "p", GroupIndex: 3}, {Placement: "q", Clusters: []string{""}}},
			[]string{`placement "p": decision group indices [3]`, `placement "q": decision group index 0: a cluster has an empty name`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newFleet(tc.in)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
		})
	}
}

// TestMandatoryGroups checks how mandatory decision groups select groups of
// several placements: by name every group of that name, else by index the group
// of that index in each placement.
func TestMandatoryGroups(t *testing.T) {
	f, err := newFleet([]DecisionGroup{
		{Placement: "a", GroupName: "canary", GroupIndex: 0, Clusters: []string{"a1"}},
		{Placement: "a", GroupName: "canary", GroupIndex: 1, Clusters: []string{"a2"}},
		{Placement: "a", GroupIndex: 2, Clusters: []string{"a3"}},
		{Placement: "b", GroupIndex: 0, Clusters: []string{"b1"}},
		{Placement: "b", GroupName: "canary", GroupIndex: 1, Clusters: []string{"b2"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		in   []clusterv1alpha1.MandatoryDecisionGroup
		want []int
	}{
		{"none", nil, nil},
		{"by name, in every placement", []clusterv1alpha1.MandatoryDecisionGroup{{GroupName: "canary"}}, []int{0, 1, 4}},
		{"by index, in every placement", []clusterv1alpha1.MandatoryDecisionGroup{{GroupIndex: 0}}, []int{0, 3}},
		{"name wins over index", []clusterv1alpha1.MandatoryDecisionGroup{{GroupName: "nothing", GroupIndex: 2}}, nil},
		{"several, in rollout order", []clusterv1alpha1.MandatoryDecisionGroup{{GroupIndex: 2}, {GroupName: "canary"}}, []int{0, 1, 2, 4}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := f.mandatoryGroups(tc.in); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// TestNotes checks the explanations of settings the library does not apply as
// written.
func TestNotes(t *testing.T) {
	fleet := []DecisionGroup{
		{Placement: "p", GroupName: "canary", GroupIndex: 0, Clusters: []string{"c1"}},
		{Placement: "p", GroupIndex: 1, Clusters: []string{"c2", "c3", "c4"}},
		{Placement: "p", GroupIndex: 2, Clusters: []string{"c5"}},
	}
	cases := []struct {
		name     string
		strategy clusterv1alpha1.RolloutStrategy
		root     policyv1.RemediationAction
		want     []string
	}{
		{"maxFailures above the fleet", progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(6)}), "enforce",
			[]string{`spec.rolloutStrategy.progressive.maxFailures: 6 is more than the 5 clusters of the rollout; OCM's rollout library then tolerates no failure (it uses 0)`}},
		{"maxFailures equal to the fleet", progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(5)}), "enforce", nil},
		{"a percentage never is", progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromString("100%")}), "enforce", nil},
		{"inform roots roll out nothing progressively", progressive(intstr.FromInt32(1), clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(6)}), "inform", nil},
		{"maxFailures above some groups; mandatory groups tolerate none anyway",
			perGroup(clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(2)}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}), "enforce",
			[]string{`spec.rolloutStrategy.progressivePerGroup.maxFailures: 2 is more than the clusters of decision groups p/2 (1 clusters); OCM's rollout library then tolerates no failure in those groups`}},
		{"maxConcurrency unset: every cluster at once", progressive(intstr.IntOrString{}, clusterv1alpha1.RolloutConfig{}), "enforce",
			[]string{`spec.rolloutStrategy.progressive.maxConcurrency: unset or 0 means every cluster at once, as in OCM's rollout library: this Progressive rollout enforces on all 5 non-mandatory clusters in one wave`}},
		{"maxConcurrency 0", progressive(intstr.FromInt32(0), clusterv1alpha1.RolloutConfig{}), "enforce",
			[]string{`spec.rolloutStrategy.progressive.maxConcurrency: unset or 0 means every cluster at once`}},
		{"maxConcurrency \"0\"", progressive(intstr.FromString("0"), clusterv1alpha1.RolloutConfig{}), "enforce",
			[]string{`spec.rolloutStrategy.progressive.maxConcurrency: unset or 0 means every cluster at once`}},
		{"maxConcurrency 0 beside mandatory groups counts the others", progressive(intstr.FromInt32(0), clusterv1alpha1.RolloutConfig{}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}), "enforce",
			[]string{`spec.rolloutStrategy.progressive.maxConcurrency: unset or 0 means every cluster at once, as in OCM's rollout library: this Progressive rollout enforces on all 4 non-mandatory clusters`}},
		{"maxConcurrency 0 with one cluster left after the mandatory groups", progressive(intstr.FromInt32(0), clusterv1alpha1.RolloutConfig{},
			clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}, clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: 1}), "enforce", nil},
		{"maxConcurrency 100% is written on purpose", progressive(intstr.FromString("100%"), clusterv1alpha1.RolloutConfig{}), "enforce", nil},
		{"maxConcurrency 0 of an inform root enforces nothing", progressive(intstr.FromInt32(0), clusterv1alpha1.RolloutConfig{}), "inform", nil},
		{"a mandatory group that selects nothing",
			perGroup(clusterv1alpha1.RolloutConfig{}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canary"}, clusterv1alpha1.MandatoryDecisionGroup{GroupName: "canry"}), "enforce",
			[]string{`spec.rolloutStrategy.progressivePerGroup.mandatoryDecisionGroups[1]: selects no decision group`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := PlanWaves(PlanInput{Strategy: tc.strategy, RemediationAction: tc.root, Fleet: fleet})
			if err != nil {
				t.Fatal(err)
			}
			step, err := Step(StepInput{Strategy: tc.strategy, RemediationAction: tc.root, Fleet: fleet, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			for _, notes := range [][]Note{plan.Notes, step.Notes} {
				if len(notes) != len(tc.want) {
					t.Fatalf("notes %q, want %d", NoteStrings(notes), len(tc.want))
				}
				for i, want := range tc.want {
					if !strings.HasPrefix(notes[i].String(), want) {
						t.Errorf("note %q does not start with %q", notes[i], want)
					}
					if field, _, _ := strings.Cut(want, ": "); notes[i].Field != field {
						t.Errorf("note %q: field %q, want %q", notes[i], notes[i].Field, field)
					}
				}
			}
		})
	}
}

// TestNotesListAFewGroups checks that a note names at most a few groups.
func TestNotesListAFewGroups(t *testing.T) {
	var fleet []DecisionGroup
	for i := range 8 {
		fleet = append(fleet, DecisionGroup{Placement: "p", GroupIndex: int32(i), Clusters: []string{fmt.Sprint("c", i)}})
	}
	plan, err := PlanWaves(PlanInput{Strategy: perGroup(clusterv1alpha1.RolloutConfig{MaxFailures: intstr.FromInt32(2)}),
		RemediationAction: "enforce", Fleet: fleet})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Notes) != 1 || !strings.Contains(plan.Notes[0].Message, "p/0 (1 clusters), p/1 (1 clusters), p/2 (1 clusters), p/3 (1 clusters), p/4 (1 clusters), and 3 more;") {
		t.Fatalf("notes = %q", NoteStrings(plan.Notes))
	}
	// The data names every group the message leaves out.
	note := plan.Notes[0]
	if note.Reason != NoteMaxFailuresAboveGroups || len(note.Groups) != 8 || note.Groups[7] != (GroupRef{Placement: "p", GroupIndex: 7}) {
		t.Errorf("note = %+v, want reason %s and the 8 groups", note, NoteMaxFailuresAboveGroups)
	}
}
