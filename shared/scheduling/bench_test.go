package scheduling

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
)

// bigFleet is 10,000 clusters labelled into 100 groups, and a Placement with one
// decision group per label value.
func bigFleet() (*clusterv1beta1.Placement, []clusterv1.ManagedCluster) {
	var clusters []clusterv1.ManagedCluster
	var decisionGroups []clusterv1beta1.DecisionGroup
	for g := range 100 {
		decisionGroups = append(decisionGroups, group(fmt.Sprintf("group-%02d", g), matchLabels(fmt.Sprintf("group=g%02d", g))))
		for i := range 100 {
			clusters = append(clusters, cluster(fmt.Sprintf("c-%02d-%03d", g, i), fmt.Sprintf("group=g%02d", g)))
		}
	}
	return placement(clusterv1beta1.PlacementSpec{DecisionStrategy: groups(intstr.IntOrString{}, decisionGroups...)}), clusters
}

// TestScheduleGroupsReadBack checks that the decisions Schedule writes read back,
// through GroupOf, as the groups of its status.
func TestScheduleGroupsReadBack(t *testing.T) {
	p, clusters := bigFleet()
	res, err := Schedule(Input{Placement: p, Clusters: clusters, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int32]int{}
	for i := range res.Decisions {
		g, err := GroupOf(&res.Decisions[i])
		if err != nil {
			t.Fatal(err)
		}
		if g.Placement != "pl" || g.GroupName != res.Groups[g.GroupIndex].DecisionGroupName {
			t.Fatalf("decision %s reads as %+v", res.Decisions[i].Name, g)
		}
		counts[g.GroupIndex] += len(g.Clusters)
	}
	if len(res.Groups) != 100 {
		t.Fatalf("%d groups", len(res.Groups))
	}
	for _, s := range res.Groups {
		if counts[s.DecisionGroupIndex] != int(s.ClustersCount) || s.ClustersCount != 100 {
			t.Fatalf("group %d: %d clusters read back, status says %d", s.DecisionGroupIndex, counts[s.DecisionGroupIndex], s.ClustersCount)
		}
	}
}

// BenchmarkSchedule schedules 10,000 clusters into 100 decision groups.
func BenchmarkSchedule(b *testing.B) {
	p, clusters := bigFleet()
	for b.Loop() {
		res, err := Schedule(Input{Placement: p, Clusters: clusters, Now: now})
		if err != nil || len(res.Groups) != 100 {
			b.Fatalf("%d groups, %v", len(res.Groups), err)
		}
	}
}
