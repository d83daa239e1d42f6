package scheduling

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

func decision(labels map[string]string, clusters ...string) *clusterv1beta1.PlacementDecision {
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: "pl-decision-1", Namespace: "policies", Labels: labels}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
}

func groupString(g rollout.DecisionGroup) string {
	return fmt.Sprintf("%s/%s/%d%v", g.Placement, g.GroupName, g.GroupIndex, g.Clusters)
}

func TestGroupOf(t *testing.T) {
	const (
		placementLabel = clusterv1beta1.PlacementLabel
		nameLabel      = clusterv1beta1.DecisionGroupNameLabel
		indexLabel     = clusterv1beta1.DecisionGroupIndexLabel
	)
	cases := []struct {
		name      string
		decision  *clusterv1beta1.PlacementDecision
		want      string
		wantError string
	}{
		{"named group", decision(map[string]string{placementLabel: "pl", nameLabel: "canary", indexLabel: "2"}, "a", "b"),
			"pl/canary/2[a b]", ""},
		{"no group name label is the unnamed group", decision(map[string]string{placementLabel: "pl", indexLabel: "0"}, "a"),
			"pl//0[a]", ""},
		{"no decisions", decision(map[string]string{placementLabel: "pl", indexLabel: "0"}),
			"pl//0[]", ""},
		{"no index label is group 0", decision(map[string]string{placementLabel: "pl"}, "a"),
			"pl//0[a]", ""},
		{"empty clusterName is not scheduled yet: skipped", decision(map[string]string{placementLabel: "pl", indexLabel: "1"}, "a", "", "b"),
			"pl//1[a b]", ""},
		{"only empty clusterNames", decision(map[string]string{placementLabel: "pl", indexLabel: "0"}, "", ""),
			"pl//0[]", ""},
		{"index not a number", decision(map[string]string{placementLabel: "pl", indexLabel: "one"}, "a"),
			"pl//0[a]", `metadata.labels[cluster.open-cluster-management.io/decision-group-index]: Invalid value: "one"`},
		{"empty index", decision(map[string]string{placementLabel: "pl", indexLabel: ""}, "a"),
			"pl//0[a]", `metadata.labels[cluster.open-cluster-management.io/decision-group-index]: Invalid value: ""`},
		{"negative index", decision(map[string]string{placementLabel: "pl", indexLabel: "-1"}, "a"),
			"pl//0[a]", `metadata.labels[cluster.open-cluster-management.io/decision-group-index]: Invalid value: "-1"`},
		{"index beyond int32", decision(map[string]string{placementLabel: "pl", indexLabel: "2147483648"}, "a"),
			"pl//0[a]", `Invalid value: "2147483648"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := GroupOf(tc.decision)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want %q", err, tc.wantError)
				}
				// The clusters OCM's propagator binds, as group 0.
				if got := groupString(g); got != tc.want {
					t.Fatalf("with the error, got %s, want %s", got, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := groupString(g); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRuleGroup(t *testing.T) {
	rule := func(clusters ...string) *appsv1.PlacementRule {
		r := &appsv1.PlacementRule{ObjectMeta: metav1.ObjectMeta{Name: "rule", Namespace: "policies"}}
		for _, c := range clusters {
			r.Status.Decisions = append(r.Status.Decisions, appsv1.PlacementDecision{ClusterName: c, ClusterNamespace: c})
		}
		return r
	}
	cases := []struct {
		name string
		rule *appsv1.PlacementRule
		want string
	}{
		{"decisions are group 0 of the rule", rule("b", "a"), "rule//0[b a]"},
		{"empty clusterName skipped", rule("a", ""), "rule//0[a]"},
		{"no decisions", rule(), "rule//0[]"},
	}
	for _, tc := range cases {
		if got := groupString(RuleGroup(tc.rule)); got != tc.want {
			t.Errorf("%s: got %s, want %s", tc.name, got, tc.want)
		}
	}
}
