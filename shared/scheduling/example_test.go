package scheduling_test

import (
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

func managedCluster(name string, labels map[string]string) clusterv1.ManagedCluster {
	return clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// Schedule computes the PlacementDecisions OCM's scheduler writes for a
// Placement: here the production clusters, in two decision groups, canaries
// first. GroupOf reads each PlacementDecision back as the rollout sees it.
func ExampleSchedule() {
	placement := &clusterv1beta1.Placement{
		ObjectMeta: metav1.ObjectMeta{Namespace: "policies", Name: "production"},
		Spec: clusterv1beta1.PlacementSpec{
			Predicates: []clusterv1beta1.ClusterPredicate{{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
				LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}},
			}}},
			DecisionStrategy: clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
				DecisionGroups: []clusterv1beta1.DecisionGroup{{
					GroupName:       "canary",
					ClusterSelector: clusterv1beta1.GroupClusterSelector{LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"canary": "true"}}},
				}},
			}},
		},
	}
	res, err := scheduling.Schedule(scheduling.Input{
		Placement: placement,
		Clusters: []clusterv1.ManagedCluster{
			managedCluster("prod-east", map[string]string{"env": "prod", "canary": "true"}),
			managedCluster("prod-west", map[string]string{"env": "prod"}),
			managedCluster("prod-north", map[string]string{"env": "prod"}),
			managedCluster("dev", map[string]string{"env": "dev"}),
		},
		Now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("selected:", res.NumberOfSelectedClusters)
	for i := range res.Decisions {
		g, err := scheduling.GroupOf(&res.Decisions[i])
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s: group %d %q %v\n", res.Decisions[i].Name, g.GroupIndex, g.GroupName, g.Clusters)
	}
	for _, note := range res.Notes {
		fmt.Println("note:", note)
	}
	// Output:
	// selected: 3
	// production-decision-1: group 0 "canary" [prod-east]
	// production-decision-2: group 1 "" [prod-north prod-west]
}

// PlacementRuleDecisions computes the status.decisions of a PlacementRule
// (apps.open-cluster-management.io) as OCM's PlacementRule controller does.
func ExamplePlacementRuleDecisions() {
	spec := appsv1.PlacementRuleSpec{ClusterSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}
	decisions, err := scheduling.PlacementRuleDecisions(spec, nil, []clusterv1.ManagedCluster{
		managedCluster("prod-west", map[string]string{"env": "prod"}),
		managedCluster("dev", map[string]string{"env": "dev"}),
		managedCluster("prod-east", map[string]string{"env": "prod"}),
	})
	fmt.Println(decisions, err)
	// Output:
	// [{prod-east prod-east} {prod-west prod-west}] <nil>
}
