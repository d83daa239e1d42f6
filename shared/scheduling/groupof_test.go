package scheduling

import (
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

func decision(labels map[string]string, clusters ...string) *clusterv1beta1.PlacementDecision {
	d := &clusterv1beta1.PlacementDecision{ObjectMeta: metav1.ObjectMeta{Name: "pl-decision-1", Namespace: "policies", Labels: labels}}
	for _, c := range clusters {
		d.Status.Decisions = append(d.Status.Decisions, clusterv1beta1.ClusterDecision{ClusterName: c})
	}
	return d
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
		{"no index label is group 0, as the hub reads it", decision(map[string]string{placementLabel: "pl"}, "a"),
			"pl//0[a]", ""},
		{"index not a number", decision(map[string]string{placementLabel: "pl", indexLabel: "one"}, "a"),
			"", `metadata.labels[cluster.open-cluster-management.io/decision-group-index]: Invalid value: "one"`},
		{"negative index", decision(map[string]string{placementLabel: "pl", indexLabel: "-1"}, "a"),
			"", `metadata.labels[cluster.open-cluster-management.io/decision-group-index]: Invalid value: "-1"`},
		{"empty cluster name", decision(map[string]string{placementLabel: "pl", indexLabel: "0"}, "a", ""),
			"", "status.decisions[1].clusterName: Required value"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := GroupOf(tc.decision)
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("error %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%s/%s/%d%v", g.Placement, g.GroupName, g.GroupIndex, g.Clusters); got != tc.want {
				t.Fatalf("got %s, want %s", got, tc.want)
			}
		})
	}
}
