package scheduling

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"

	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

var now = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// cluster builds a ManagedCluster from "key=value" labels; a "claim:key=value"
// entry is a cluster claim instead.
func cluster(name string, labelsAndClaims ...string) clusterv1.ManagedCluster {
	c := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{}}}
	for _, kv := range labelsAndClaims {
		k, v, _ := strings.Cut(kv, "=")
		if claim, isClaim := strings.CutPrefix(k, "claim:"); isClaim {
			c.Status.ClusterClaims = append(c.Status.ClusterClaims, clusterv1.ManagedClusterClaim{Name: claim, Value: v})
			continue
		}
		c.Labels[k] = v
	}
	return c
}

func tainted(c clusterv1.ManagedCluster, taints ...clusterv1.Taint) clusterv1.ManagedCluster {
	c.Spec.Taints = taints
	return c
}

func numbered(n int, labels ...string) []clusterv1.ManagedCluster {
	out := make([]clusterv1.ManagedCluster, 0, n)
	for i := range n {
		out = append(out, cluster(fmt.Sprintf("c%03d", i), labels...))
	}
	return out
}

func placement(spec clusterv1beta1.PlacementSpec) *clusterv1beta1.Placement {
	return &clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: "pl", Namespace: "policies"}, Spec: spec}
}

func matchLabels(kv ...string) metav1.LabelSelector {
	m := map[string]string{}
	for _, s := range kv {
		k, v, _ := strings.Cut(s, "=")
		m[k] = v
	}
	return metav1.LabelSelector{MatchLabels: m}
}

func group(name string, selector metav1.LabelSelector) clusterv1beta1.DecisionGroup {
	return clusterv1beta1.DecisionGroup{GroupName: name, ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: selector}}
}

func groups(perGroup intstr.IntOrString, gs ...clusterv1beta1.DecisionGroup) clusterv1beta1.DecisionStrategy {
	return clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{ClustersPerDecisionGroup: perGroup, DecisionGroups: gs}}
}

// summary writes each PlacementDecision as "name:index/groupName[clusters]",
// checking that its placement label is right.
func summary(t *testing.T, res Result) []string {
	t.Helper()
	var out []string
	for _, d := range res.Decisions {
		if d.Labels[clusterv1beta1.PlacementLabel] != "pl" || d.Namespace != "policies" {
			t.Fatalf("decision %s: labels %v, namespace %q", d.Name, d.Labels, d.Namespace)
		}
		var names []string
		for _, cd := range d.Status.Decisions {
			names = append(names, cd.ClusterName)
		}
		out = append(out, fmt.Sprintf("%s:%s/%s%v", d.Name, d.Labels[clusterv1beta1.DecisionGroupIndexLabel],
			d.Labels[clusterv1beta1.DecisionGroupNameLabel], names))
	}
	return out
}

// TestScheduleDecisionGroups follows reference/propagator.md §7 and the cases of
// OCM's scheduling_controller_test.go.
func TestScheduleDecisionGroups(t *testing.T) {
	clouds := []clusterv1.ManagedCluster{
		cluster("cluster1", "cloud=Amazon"), cluster("cluster2", "cloud=Amazon"),
		cluster("cluster3", "cloud=Azure"), cluster("cluster4", "cloud=Azure"),
	}
	cases := []struct {
		name     string
		spec     clusterv1beta1.PlacementSpec
		clusters []clusterv1.ManagedCluster
		want     []string
	}{
		{"no strategy: one group, index 0, unnamed", clusterv1beta1.PlacementSpec{}, numbered(3),
			[]string{"pl-decision-1:0/[c000 c001 c002]"}},
		{"no cluster: one empty decision", clusterv1beta1.PlacementSpec{}, nil,
			[]string{"pl-decision-1:0/[]"}},
		{"canary at 25%: the named group is cut too, leftovers after it",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromString("25%"), group("canary", matchLabels("cloud=Azure")))}, clouds,
			[]string{"pl-decision-1:0/canary[cluster3]", "pl-decision-2:1/canary[cluster4]", "pl-decision-3:2/[cluster1]", "pl-decision-4:3/[cluster2]"}},
		{"canary selecting nothing: only the ungrouped group",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.IntOrString{}, group("canary", matchLabels("cloud=GCP")))}, clouds,
			[]string{"pl-decision-1:0/[cluster1 cluster2 cluster3 cluster4]"}},
		{"two named groups, spec order",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.IntOrString{}, group("azure", matchLabels("cloud=Azure")), group("amazon", matchLabels("cloud=Amazon")))}, clouds,
			[]string{"pl-decision-1:0/azure[cluster3 cluster4]", "pl-decision-2:1/amazon[cluster1 cluster2]"}},
		{"a cluster goes to the first group that matches",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.IntOrString{}, group("all", metav1.LabelSelector{}), group("azure", matchLabels("cloud=Azure")))}, clouds,
			[]string{"pl-decision-1:0/all[cluster1 cluster2 cluster3 cluster4]"}},
		{"clustersPerDecisionGroup as an integer",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromInt32(3))}, numbered(7),
			[]string{"pl-decision-1:0/[c000 c001 c002]", "pl-decision-2:1/[c003 c004 c005]", "pl-decision-3:2/[c006]"}},
		{"percentage rounded up: 34% of 3 is 2",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromString("34%"))}, numbered(3),
			[]string{"pl-decision-1:0/[c000 c001]", "pl-decision-2:1/[c002]"}},
		{"a length above the total is the total",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromInt32(50))}, numbered(3),
			[]string{"pl-decision-1:0/[c000 c001 c002]"}},
		{"an integer 0 or below is the total",
			clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromInt32(-2))}, numbered(2),
			[]string{"pl-decision-1:0/[c000 c001]"}},
		{"numberOfClusters takes the first clusters by name",
			clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](2)}, []clusterv1.ManagedCluster{cluster("b"), cluster("c"), cluster("a")},
			[]string{"pl-decision-1:0/[a b]"}},
		{"predicates are ORed, label and claim selectors ANDed",
			clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
				{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: matchLabels("env=dev"),
					ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"}}}}}},
				{RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: matchLabels("canary=true")}},
			}},
			[]clusterv1.ManagedCluster{
				cluster("dev-eu", "env=dev", "claim:region=eu"), cluster("dev-us", "env=dev", "claim:region=us"),
				cluster("prod-canary", "env=prod", "canary=true"), cluster("prod", "env=prod", "claim:region=eu"),
				cluster("eu-label-only", "env=dev", "region=eu"),
			},
			[]string{"pl-decision-1:0/[dev-eu prod-canary]"}},
		{"group selectors read claims too",
			clusterv1beta1.PlacementSpec{DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
				DecisionGroups: []clusterv1beta1.DecisionGroup{{GroupName: "eu", ClusterSelector: clusterv1beta1.GroupClusterSelector{
					ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
						{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"}}}}}}}}}},
			[]clusterv1.ManagedCluster{cluster("a", "claim:region=us"), cluster("b", "claim:region=eu")},
			[]string{"pl-decision-1:0/eu[b]", "pl-decision-2:1/[a]"}},
		{"clusters being deleted are not eligible", clusterv1beta1.PlacementSpec{},
			func() []clusterv1.ManagedCluster {
				cs := numbered(2)
				cs[0].DeletionTimestamp = &metav1.Time{Time: now}
				return cs
			}(),
			[]string{"pl-decision-1:0/[c001]"}},
		{"a cluster listed twice is decided once", clusterv1beta1.PlacementSpec{},
			[]clusterv1.ManagedCluster{cluster("a"), cluster("a")},
			[]string{"pl-decision-1:0/[a]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Schedule(Input{Placement: placement(tc.spec), Clusters: tc.clusters, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(t, res); !slices.Equal(got, tc.want) {
				t.Fatalf("decisions\n got %v\nwant %v", got, tc.want)
			}
			var total int32
			for i, g := range res.Groups {
				if g.DecisionGroupIndex != int32(i) {
					t.Fatalf("group %d has index %d", i, g.DecisionGroupIndex)
				}
				total += g.ClustersCount
			}
			if total != res.NumberOfSelectedClusters {
				t.Fatalf("groups count %d clusters, %d selected", total, res.NumberOfSelectedClusters)
			}
		})
	}
}

// TestScheduleSplitsDecisionsAtHundred checks that a group of more than 100
// clusters is written as several PlacementDecisions, k running across groups.
func TestScheduleSplitsDecisionsAtHundred(t *testing.T) {
	clusters := append(numbered(150, "tier=a"), cluster("z1"), cluster("z2"))
	res, err := Schedule(Input{
		Placement: placement(clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.IntOrString{}, group("tier-a", matchLabels("tier=a")))}),
		Clusters:  clusters, Now: now,
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Decisions {
		got = append(got, fmt.Sprintf("%s:%s/%s:%d", d.Name, d.Labels[clusterv1beta1.DecisionGroupIndexLabel],
			d.Labels[clusterv1beta1.DecisionGroupNameLabel], len(d.Status.Decisions)))
	}
	want := []string{"pl-decision-1:0/tier-a:100", "pl-decision-2:0/tier-a:50", "pl-decision-3:1/:2"}
	if !slices.Equal(got, want) {
		t.Fatalf("decisions\n got %v\nwant %v", got, want)
	}
	wantGroups := []clusterv1beta1.DecisionGroupStatus{
		{DecisionGroupIndex: 0, DecisionGroupName: "tier-a", Decisions: []string{"pl-decision-1", "pl-decision-2"}, ClustersCount: 150},
		{DecisionGroupIndex: 1, DecisionGroupName: "", Decisions: []string{"pl-decision-3"}, ClustersCount: 2},
	}
	if fmt.Sprint(res.Groups) != fmt.Sprint(wantGroups) {
		t.Fatalf("groups\n got %v\nwant %v", res.Groups, wantGroups)
	}
	if first := res.Decisions[0].Status.Decisions; first[0].ClusterName != "c000" || first[99].ClusterName != "c099" {
		t.Fatalf("first decision runs %s..%s", first[0].ClusterName, first[99].ClusterName)
	}
}

// TestScheduleTaints follows OCM's tainttoleration plugin on a fresh schedule.
func TestScheduleTaints(t *testing.T) {
	unreachable := clusterv1.Taint{Key: "cluster.open-cluster-management.io/unreachable", Effect: clusterv1.TaintEffectNoSelect,
		TimeAdded: metav1.Time{Time: now.Add(-time.Minute)}}
	gpu := clusterv1.Taint{Key: "gpu", Value: "true", Effect: clusterv1.TaintEffectNoSelectIfNew}
	prefer := clusterv1.Taint{Key: "busy", Effect: clusterv1.TaintEffectPreferNoSelect}
	clusters := []clusterv1.ManagedCluster{
		cluster("plain"), tainted(cluster("unreachable"), unreachable), tainted(cluster("gpu"), gpu), tainted(cluster("busy"), prefer),
	}
	cases := []struct {
		name        string
		tolerations []clusterv1beta1.Toleration
		want        []string
	}{
		{"no toleration: NoSelect and NoSelectIfNew exclude, PreferNoSelect does not", nil,
			[]string{"busy", "plain"}},
		{"Exists on the key", []clusterv1beta1.Toleration{{Key: unreachable.Key, Operator: clusterv1beta1.TolerationOpExists}},
			[]string{"busy", "plain", "unreachable"}},
		{"Equal needs the value", []clusterv1beta1.Toleration{{Key: "gpu", Value: "false"}},
			[]string{"busy", "plain"}},
		{"Equal with the value, effect matching", []clusterv1beta1.Toleration{{Key: "gpu", Value: "true", Effect: clusterv1.TaintEffectNoSelectIfNew}},
			[]string{"busy", "gpu", "plain"}},
		{"effect not matching", []clusterv1beta1.Toleration{{Key: "gpu", Value: "true", Effect: clusterv1.TaintEffectNoSelect}},
			[]string{"busy", "plain"}},
		{"empty key with Exists tolerates everything", []clusterv1beta1.Toleration{{Operator: clusterv1beta1.TolerationOpExists}},
			[]string{"busy", "gpu", "plain", "unreachable"}},
		{"tolerationSeconds not yet over", []clusterv1beta1.Toleration{{Key: unreachable.Key, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](120)}},
			[]string{"busy", "plain", "unreachable"}},
		{"tolerationSeconds over", []clusterv1beta1.Toleration{{Key: unreachable.Key, Operator: clusterv1beta1.TolerationOpExists, TolerationSeconds: ptr.To[int64](30)}},
			[]string{"busy", "plain"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Schedule(Input{Placement: placement(clusterv1beta1.PlacementSpec{Tolerations: tc.tolerations}), Clusters: clusters, Now: now})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cd := range res.Decisions[0].Status.Decisions {
				got = append(got, cd.ClusterName)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("selected %v, want %v", got, tc.want)
			}
		})
	}
}

// TestScheduleClusterSets covers both the hub's rule (bindings given) and the
// assumption made without them.
func TestScheduleClusterSets(t *testing.T) {
	clusters := []clusterv1.ManagedCluster{
		cluster("dev1", clusterv1beta2.ClusterSetLabel+"=dev"), cluster("dev2", clusterv1beta2.ClusterSetLabel+"=dev"),
		cluster("prod1", clusterv1beta2.ClusterSetLabel+"=prod", "env=prod"), cluster("loose"),
	}
	set := func(name string, selector *metav1.LabelSelector) clusterv1beta2.ManagedClusterSet {
		s := clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if selector != nil {
			s.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{SelectorType: clusterv1beta2.LabelSelector, LabelSelector: selector}
		}
		return s
	}
	binding := func(namespace, name string) clusterv1beta2.ManagedClusterSetBinding {
		return clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: name}}
	}
	everything := &metav1.LabelSelector{}
	prodLabel := matchLabels("env=prod")
	cases := []struct {
		name      string
		known     bool
		sets      []clusterv1beta2.ManagedClusterSet
		bindings  []clusterv1beta2.ManagedClusterSetBinding
		specSets  []string
		want      []string
		wantNotes int
	}{
		{"assumed: no clusterSets is every cluster", false, nil, nil, nil, []string{"dev1", "dev2", "loose", "prod1"}, 0},
		{"assumed: a named set not given selects its exclusive label", false, nil, nil, []string{"dev"}, []string{"dev1", "dev2"}, 1},
		{"assumed: a given set selects with its selector", false, []clusterv1beta2.ManagedClusterSet{set("prod", &prodLabel)}, nil, []string{"prod"}, []string{"prod1"}, 0},
		{"hub: no binding in the namespace selects nothing", true, []clusterv1beta2.ManagedClusterSet{set("global", everything)},
			[]clusterv1beta2.ManagedClusterSetBinding{binding("other", "global")}, nil, nil, 0},
		{"hub: a binding to a set that does not exist is ignored", true, nil,
			[]clusterv1beta2.ManagedClusterSetBinding{binding("policies", "dev")}, nil, nil, 0},
		{"hub: every bound set when clusterSets is empty", true, []clusterv1beta2.ManagedClusterSet{set("dev", nil), set("prod", nil)},
			[]clusterv1beta2.ManagedClusterSetBinding{binding("policies", "dev"), binding("policies", "prod")}, nil, []string{"dev1", "dev2", "prod1"}, 0},
		{"hub: clusterSets narrows the bound sets", true, []clusterv1beta2.ManagedClusterSet{set("dev", nil), set("prod", nil)},
			[]clusterv1beta2.ManagedClusterSetBinding{binding("policies", "dev"), binding("policies", "prod")}, []string{"prod", "qa"}, []string{"prod1"}, 0},
		{"hub: global with an empty selector", true, []clusterv1beta2.ManagedClusterSet{set("global", everything)},
			[]clusterv1beta2.ManagedClusterSetBinding{binding("policies", "global")}, nil, []string{"dev1", "dev2", "loose", "prod1"}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Schedule(Input{
				Placement: placement(clusterv1beta1.PlacementSpec{ClusterSets: tc.specSets}), Clusters: clusters,
				ClusterSetBindingsKnown: tc.known, ClusterSets: tc.sets, ClusterSetBindings: tc.bindings, Now: now,
			})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, cd := range res.Decisions[0].Status.Decisions {
				got = append(got, cd.ClusterName)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("selected %v, want %v", got, tc.want)
			}
			if len(res.Notes) != tc.wantNotes {
				t.Fatalf("notes %q, want %d", rollout.NoteStrings(res.Notes), tc.wantNotes)
			}
			for _, note := range res.Notes {
				if note.Field != "spec.clusterSets" || note.Reason != NoteClusterSetAssumed {
					t.Errorf("note %+v, want one about spec.clusterSets, reason %s", note, NoteClusterSetAssumed)
				}
			}
		})
	}
}

// TestScheduleNotesNumberOfClusters checks that cutting the feasible clusters is
// explained, and that not cutting them is not.
func TestScheduleNotesNumberOfClusters(t *testing.T) {
	for n, wantNote := range map[int32]bool{2: true, 3: false, 5: false} {
		res, err := Schedule(Input{Placement: placement(clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To(n)}), Clusters: numbered(3), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		hasNote := slices.ContainsFunc(res.Notes, func(note rollout.Note) bool {
			return note.Field == "spec.numberOfClusters" && note.Reason == NoteTakenInNameOrder
		})
		if hasNote != wantNote {
			t.Errorf("numberOfClusters %d: notes %q", n, rollout.NoteStrings(res.Notes))
		}
	}
}

// TestScheduleErrors checks that every misconfiguration is reported, naming its
// field, all at once.
func TestScheduleErrors(t *testing.T) {
	badSelector := metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}
	cases := []struct {
		name string
		spec clusterv1beta1.PlacementSpec
		sets []clusterv1beta2.ManagedClusterSet
		want []string
	}{
		{"bad predicate label and claim selectors", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			{}, {RequiredClusterSelector: clusterv1beta1.ClusterSelector{LabelSelector: badSelector,
				ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: badSelector.MatchExpressions}}}}},
			nil, []string{"spec.predicates[1].requiredClusterSelector.labelSelector", "spec.predicates[1].requiredClusterSelector.claimSelector"}},
		{"celSelector", clusterv1beta1.PlacementSpec{Predicates: []clusterv1beta1.ClusterPredicate{
			{RequiredClusterSelector: clusterv1beta1.ClusterSelector{CelSelector: clusterv1beta1.ClusterCelSelector{CelExpressions: []string{"true"}}}}}},
			nil, []string{"spec.predicates[0].requiredClusterSelector.celSelector.celExpressions"}},
		{"negative numberOfClusters", clusterv1beta1.PlacementSpec{NumberOfClusters: ptr.To[int32](-1)},
			nil, []string{"spec.numberOfClusters"}},
		{"tolerations", clusterv1beta1.PlacementSpec{Tolerations: []clusterv1beta1.Toleration{
			{Operator: clusterv1beta1.TolerationOpEqual}, {Key: "k", Operator: clusterv1beta1.TolerationOpExists, Value: "v"}}},
			nil, []string{"spec.tolerations[0].operator", "spec.tolerations[1].value"}},
		{"decision groups", clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromString("0%"), group("", metav1.LabelSelector{}), group("ok", badSelector))},
			nil, []string{"spec.decisionStrategy.groupStrategy.decisionGroups[0].groupName",
				"spec.decisionStrategy.groupStrategy.decisionGroups[1].groupClusterSelector.labelSelector",
				"spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup"}},
		{"clustersPerDecisionGroup as digits in a string", clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromString("5"))},
			nil, []string{"spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup"}},
		{"clustersPerDecisionGroup above 100%", clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.FromString("101%"))},
			nil, []string{"spec.decisionStrategy.groupStrategy.clustersPerDecisionGroup"}},
		{"a given cluster set with a bad selector type", clusterv1beta1.PlacementSpec{ClusterSets: []string{"odd"}},
			[]clusterv1beta2.ManagedClusterSet{{ObjectMeta: metav1.ObjectMeta{Name: "odd"},
				Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{SelectorType: "Magic"}}}},
			[]string{"spec.clusterSets"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Schedule(Input{Placement: placement(tc.spec), Clusters: numbered(2), ClusterSets: tc.sets, Now: now})
			if err == nil {
				t.Fatal("no error")
			}
			for _, f := range tc.want {
				if !strings.Contains(err.Error(), f+": ") {
					t.Errorf("error does not name %s: %v", f, err)
				}
			}
			var agg utilerrors.Aggregate
			if !errors.As(err, &agg) || len(agg.Errors()) != len(tc.want) {
				t.Errorf("want %d errors: %v", len(tc.want), err)
			}
		})
	}
}
