package binding

import (
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// excludingSet is a PolicySet of test-policy-1 (and other-policy) whose
// exclusions keep policy off clusters.
func excludingSet(name string, exclusions ...policyv1beta1.PolicySetExclusion) policyv1beta1.PolicySet {
	return policyv1beta1.PolicySet{
		ObjectMeta: metav1.ObjectMeta{Namespace: testNamespace, Name: name},
		Spec: policyv1beta1.PolicySetSpec{
			Policies:   []policyv1.NonEmptyString{testPolicy, "other-policy"},
			Exclusions: exclusions,
		},
	}
}

func exclude(policy string, clusters ...string) policyv1beta1.PolicySetExclusion {
	e := policyv1beta1.PolicySetExclusion{PolicyName: policy}
	for _, c := range clusters {
		e.ClusterNames = append(e.ClusterNames, policyv1.NonEmptyString(c))
	}
	return e
}

// bindSets binds the PolicySets named to placement ref.
func bindSets(name string, ref PlacementRef, sets ...string) policyv1.PlacementBinding {
	pb := bind(name, ref)
	pb.Subjects = nil
	for _, s := range sets {
		pb.Subjects = append(pb.Subjects, setSubject(s))
	}
	return pb
}

func setEntry(binding, placement, set string, excluded ...string) *policyv1.Placement {
	entry := &policyv1.Placement{PlacementBinding: binding, Placement: placement, PolicySet: set}
	for _, c := range excluded {
		entry.Exclusions = append(entry.Exclusions, policyv1.PolicyExclusion{ClusterName: c})
	}
	return entry
}

func remaining(c BoundCluster, bindings ...string) BoundCluster {
	c.RemainingBindings = bindings
	return c
}

// exclusionCases hold Resolve to OCM's PolicySet exclusions
// (governance-policy-propagator after v0.19.0, e2e case18): an exclusion
// removes the cluster only for that PolicySet path; another path still places
// the policy, and the cluster then names the bindings that remain. TestResolve
// runs them.
func exclusionCases() []resolveCase {
	both := Decisions{placement("set-pl"): {"managed1", "managed2"}, placement("direct-pl"): {"managed2"}}
	direct := bind("direct-pb", placement("direct-pl"))
	viaSet := bindSets("set-pb", placement("set-pl"), "set")
	return []resolveCase{
		{
			name:       "excluded cluster is not bound, and the set's entry lists it",
			policy:     rootPolicy(inform),
			sets:       []policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
			bindings:   []policyv1.PlacementBinding{viaSet},
			decisions:  both,
			want:       []BoundCluster{bound("managed1", inform)},
			placements: []*policyv1.Placement{setEntry("set-pb", "set-pl", "set", "managed2")},
			excludes:   map[PlacementRef][]string{placement("set-pl"): {"managed2"}},
		},
		{
			name:       "an exclusion of another policy of the set changes nothing for this one",
			policy:     rootPolicy(inform),
			sets:       []policyv1beta1.PolicySet{excludingSet("set", exclude("other-policy", "managed1"))},
			bindings:   []policyv1.PlacementBinding{viaSet},
			decisions:  both,
			want:       []BoundCluster{bound("managed1", inform), bound("managed2", inform)},
			placements: []*policyv1.Placement{setEntry("set-pb", "set-pl", "set")},
		},
		{
			name:     "another binding keeps the cluster: remainingBindings names it",
			policy:   rootPolicy(inform),
			sets:     []policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
			bindings: []policyv1.PlacementBinding{direct, viaSet},
			decisions: Decisions{
				placement("set-pl"): {"managed1", "managed2"}, placement("direct-pl"): {"managed2"},
			},
			want: []BoundCluster{bound("managed1", inform), remaining(bound("managed2", inform), "direct-pb")},
			placements: []*policyv1.Placement{
				{PlacementBinding: "direct-pb", Placement: "direct-pl"}, setEntry("set-pb", "set-pl", "set", "managed2"),
			},
			excludes: map[PlacementRef][]string{placement("set-pl"): {"managed2"}},
		},
		{
			name:   "a second set with the same exclusion: still only the direct binding remains",
			policy: rootPolicy(inform),
			sets: []policyv1beta1.PolicySet{
				excludingSet("set", exclude(testPolicy, "managed2")), excludingSet("set-2", exclude(testPolicy, "managed2")),
			},
			bindings:  []policyv1.PlacementBinding{direct, viaSet, bindSets("set-2-pb", placement("set-pl"), "set-2")},
			decisions: both,
			want:      []BoundCluster{bound("managed1", inform), remaining(bound("managed2", inform), "direct-pb")},
			placements: []*policyv1.Placement{
				{PlacementBinding: "direct-pb", Placement: "direct-pl"},
				setEntry("set-2-pb", "set-pl", "set-2", "managed2"), setEntry("set-pb", "set-pl", "set", "managed2"),
			},
			excludes: map[PlacementRef][]string{placement("set-pl"): {"managed2"}},
		},
		{
			name:   "a set without the exclusion keeps the cluster through the same placement",
			policy: rootPolicy(inform),
			sets: []policyv1beta1.PolicySet{
				excludingSet("set", exclude(testPolicy, "managed2")), excludingSet("set-2"),
			},
			bindings:  []policyv1.PlacementBinding{viaSet, bindSets("set-2-pb", placement("set-pl"), "set-2")},
			decisions: both,
			want:      []BoundCluster{bound("managed1", inform), remaining(bound("managed2", inform), "set-2-pb")},
			placements: []*policyv1.Placement{
				setEntry("set-2-pb", "set-pl", "set-2"), setEntry("set-pb", "set-pl", "set", "managed2"),
			},
		},
		{
			// OCM's remainingBindings leaves out a binding one of whose paths excludes
			// the cluster even when another of its paths places it; this binding
			// still places the policy there, so it is listed.
			name:   "one binding, two paths: the Policy subject keeps the cluster the set excludes",
			policy: rootPolicy(inform),
			sets:   []policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
			bindings: []policyv1.PlacementBinding{func() policyv1.PlacementBinding {
				pb := bindSets("mixed-pb", placement("set-pl"), "set")
				pb.Subjects = append(pb.Subjects, policySubject(testPolicy))
				return pb
			}()},
			decisions: both,
			want:      []BoundCluster{bound("managed1", inform), remaining(bound("managed2", inform), "mixed-pb")},
			placements: []*policyv1.Placement{
				{PlacementBinding: "mixed-pb", Placement: "set-pl"}, setEntry("mixed-pb", "set-pl", "set", "managed2"),
			},
		},
		{
			name:   "one binding of two sets: only the clusters both exclude are unbound",
			policy: rootPolicy(inform),
			sets: []policyv1beta1.PolicySet{
				excludingSet("set", exclude(testPolicy, "managed1", "managed2")), excludingSet("set-2", exclude(testPolicy, "managed2")),
			},
			bindings:  []policyv1.PlacementBinding{bindSets("two-sets-pb", placement("set-pl"), "set", "set-2")},
			decisions: both,
			want:      []BoundCluster{remaining(bound("managed1", inform), "two-sets-pb")},
			placements: []*policyv1.Placement{
				setEntry("two-sets-pb", "set-pl", "set", "managed1", "managed2"), setEntry("two-sets-pb", "set-pl", "set-2", "managed2"),
			},
			excludes: map[PlacementRef][]string{placement("set-pl"): {"managed2"}},
		},
		{
			name:   "a restricted enforcing binding of the set does not enforce where the set excludes the policy",
			policy: rootPolicy(inform),
			sets:   []policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
			bindings: []policyv1.PlacementBinding{
				bind("base", placement("base")), restrictedEnforcing(bindSets("enf", placement("enf"), "set")),
			},
			decisions: Decisions{placement("base"): {"managed1", "managed2"}, placement("enf"): {"managed1", "managed2"}},
			want:      []BoundCluster{bound("managed1", enforce, "enf"), remaining(bound("managed2", inform), "base")},
			placements: []*policyv1.Placement{
				{PlacementBinding: "base", Placement: "base"}, setEntry("enf", "enf", "set", "managed2"),
			},
		},
		{
			name:   "an enforcing binding of the set does not enforce where the set excludes the policy",
			policy: rootPolicy(inform),
			sets:   []policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
			bindings: []policyv1.PlacementBinding{
				direct, enforcing(viaSet),
			},
			decisions: both,
			want:      []BoundCluster{bound("managed1", enforce, "set-pb"), remaining(bound("managed2", inform), "direct-pb")},
			placements: []*policyv1.Placement{
				{PlacementBinding: "direct-pb", Placement: "direct-pl"}, setEntry("set-pb", "set-pl", "set", "managed2"),
			},
			excludes: map[PlacementRef][]string{placement("set-pl"): {"managed2"}},
		},
		{
			name:   "exclusions add up, are listed whether or not decided, sorted, without duplicates or empty names",
			policy: rootPolicy(inform),
			sets: []policyv1beta1.PolicySet{excludingSet("set",
				exclude(testPolicy, "managed9", "managed2"), exclude(testPolicy, "managed2", "", "managed1"))},
			bindings:   []policyv1.PlacementBinding{viaSet},
			decisions:  both,
			want:       nil,
			placements: []*policyv1.Placement{setEntry("set-pb", "set-pl", "set", "managed1", "managed2", "managed9")},
			excludes:   map[PlacementRef][]string{placement("set-pl"): {"managed1", "managed2", "managed9"}},
		},
		{
			name:   "a disabled policy lists its set entries with their exclusions, and binds nothing",
			policy: func() *policyv1.Policy { p := rootPolicy(inform); p.Spec.Disabled = true; return p }(),
			sets:   []policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
			bindings: []policyv1.PlacementBinding{
				direct, viaSet,
			},
			decisions: both,
			want:      nil,
			placements: []*policyv1.Placement{
				{PlacementBinding: "direct-pb", Placement: "direct-pl"}, setEntry("set-pb", "set-pl", "set", "managed2"),
			},
			excludes: map[PlacementRef][]string{placement("set-pl"): {"managed2"}},
		},
		{
			name:   "a set of another namespace excludes nothing",
			policy: rootPolicy(inform),
			sets: []policyv1beta1.PolicySet{excludingSet("set"), func() policyv1beta1.PolicySet {
				s := excludingSet("set", exclude(testPolicy, "managed2"))
				s.Namespace = "elsewhere"
				return s
			}()},
			bindings:   []policyv1.PlacementBinding{viaSet},
			decisions:  both,
			want:       []BoundCluster{bound("managed1", inform), bound("managed2", inform)},
			placements: []*policyv1.Placement{setEntry("set-pb", "set-pl", "set")},
		},
	}
}

func TestRootStatusRemainingBindings(t *testing.T) {
	res, err := Resolve(rootPolicy(inform),
		[]policyv1beta1.PolicySet{excludingSet("set", exclude(testPolicy, "managed2"))},
		[]policyv1.PlacementBinding{
			bind("direct-pb", placement("direct-pl")), bind("z-pb", placement("direct-pl")),
			bindSets("set-pb", placement("set-pl"), "set"),
		},
		Decisions{placement("set-pl"): {"managed1", "managed2"}, placement("direct-pl"): {"managed2"}})
	if err != nil {
		t.Fatal(err)
	}
	statuses, compliant := res.RootStatus(map[string]policyv1.ComplianceState{"managed1": policyv1.Compliant, "managed2": policyv1.Compliant})
	want := []policyv1.CompliancePerClusterStatus{
		{ComplianceState: policyv1.Compliant, ClusterName: "managed1", ClusterNamespace: "managed1"},
		{ComplianceState: policyv1.Compliant, ClusterName: "managed2", ClusterNamespace: "managed2",
			RemainingBindings: []policyv1.RemainingBinding{{PlacementBinding: "direct-pb"}, {PlacementBinding: "z-pb"}}},
	}
	if got := derefAll(statuses); !reflect.DeepEqual(got, want) {
		t.Errorf("status = %+v, want %+v", got, want)
	}
	if compliant != policyv1.Compliant {
		t.Errorf("compliant = %q, want Compliant", compliant)
	}
}

func TestSetExclusions(t *testing.T) {
	status := func(policy string, clusters ...string) policyv1beta1.PolicySetStatusExclusion {
		e := policyv1beta1.PolicySetStatusExclusion{PolicyName: policyv1.NonEmptyString(policy)}
		for _, c := range clusters {
			e.Clusters = append(e.Clusters, policyv1.NonEmptyString(c))
		}
		return e
	}
	tests := []struct {
		name       string
		exclusions []policyv1beta1.PolicySetExclusion
		want       []policyv1beta1.PolicySetStatusExclusion
	}{
		{"none", nil, nil},
		{"clusters sorted", []policyv1beta1.PolicySetExclusion{exclude("policy-a", "managed2", "managed1")},
			[]policyv1beta1.PolicySetStatusExclusion{status("policy-a", "managed1", "managed2")}},
		{"policies sorted", []policyv1beta1.PolicySetExclusion{exclude("policy-b", "managed2"), exclude("policy-a", "managed1")},
			[]policyv1beta1.PolicySetStatusExclusion{status("policy-a", "managed1"), status("policy-b", "managed2")}},
		{"an exclusion without clusters has no entry", []policyv1beta1.PolicySetExclusion{exclude("policy-a"), exclude("policy-b", "managed2", "")},
			[]policyv1beta1.PolicySetStatusExclusion{status("policy-b", "managed2")}},
		{"exclusions of one policy add up", []policyv1beta1.PolicySetExclusion{exclude("policy-a", "managed2"), exclude("policy-a", "managed1", "managed2")},
			[]policyv1beta1.PolicySetStatusExclusion{status("policy-a", "managed1", "managed2")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := excludingSet("set", tt.exclusions...)
			if got := SetExclusions(&set); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("SetExclusions = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestValidateExclusions(t *testing.T) {
	tests := []struct {
		name       string
		exclusions []policyv1beta1.PolicySetExclusion
		want       string
	}{
		{"none", nil, "<nil>"},
		{"members, once each", []policyv1beta1.PolicySetExclusion{exclude(testPolicy, "managed1"), exclude("other-policy", "managed1")}, "<nil>"},
		{"not in the set", []policyv1beta1.PolicySetExclusion{exclude(testPolicy, "managed1"), exclude("unknown-policy", "managed1")},
			`spec.exclusions[1].policyName: Invalid value: "unknown-policy": policy in spec.exclusions is not listed in spec.policies`},
		{"twice", []policyv1beta1.PolicySetExclusion{exclude(testPolicy, "managed1"), exclude(testPolicy, "managed2")},
			`spec.exclusions[1].policyName: Invalid value: "test-policy-1": policy in spec.exclusions has a duplicate entry`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := excludingSet("set", tt.exclusions...)
			if got := fmt.Sprint(ValidateExclusions(&set).ToAggregate()); got != tt.want {
				t.Errorf("ValidateExclusions = %s, want %s", got, tt.want)
			}
		})
	}
}
