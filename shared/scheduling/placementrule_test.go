package scheduling

import (
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
)

// ruleCluster is a ManagedCluster with labels, an Available condition and
// allocatable cpu and memory.
func ruleCluster(name string, lbls map[string]string, available metav1.ConditionStatus, cpu, memory string) clusterv1.ManagedCluster {
	c := clusterv1.ManagedCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
	if available != "" {
		c.Status.Conditions = []metav1.Condition{{Type: clusterv1.ManagedClusterConditionAvailable, Status: available}}
	}
	c.Status.Allocatable = clusterv1.ResourceList{
		clusterv1.ResourceCPU:    resource.MustParse(cpu),
		clusterv1.ResourceMemory: resource.MustParse(memory),
	}
	return c
}

func TestPlacementRuleDecisions(t *testing.T) {
	deleting := ruleCluster("e-deleting", map[string]string{"env": "prod"}, "True", "1", "1Gi")
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	fleet := []clusterv1.ManagedCluster{
		ruleCluster("d", map[string]string{"env": "prod", "name": "d"}, "True", "4", "1Gi"),
		ruleCluster("a", map[string]string{"env": "prod", "name": "a"}, "True", "2", "8Gi"),
		ruleCluster("c", map[string]string{"env": "dev", "name": "c"}, "False", "8", "2Gi"),
		ruleCluster("b", map[string]string{"env": "prod"}, "", "1", "4Gi"), // no name label: its name counts
		ruleCluster("renamed", map[string]string{"name": "alias"}, "True", "1", "1Gi"),
		deleting,
	}
	prod := &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}
	cases := []struct {
		name     string
		spec     appsv1.PlacementRuleSpec
		previous []string
		want     []string
		wantErr  string
	}{
		{name: "no selector selects every cluster not being deleted", want: []string{"a", "b", "c", "d", "renamed"}},
		{name: "clusterSelector", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod}, want: []string{"a", "b", "d"}},
		{name: "empty clusterSelector selects all", spec: appsv1.PlacementRuleSpec{ClusterSelector: &metav1.LabelSelector{}}, want: []string{"a", "b", "c", "d", "renamed"}},
		{name: "clusters by the name label, or the name without one", spec: appsv1.PlacementRuleSpec{
			Clusters: []appsv1.GenericClusterReference{{Name: "c"}, {Name: "b"}, {Name: "alias"}, {Name: "renamed"}, {Name: "missing"}}},
			want: []string{"b", "c", "renamed"}},
		{name: "clusters wins over clusterSelector", spec: appsv1.PlacementRuleSpec{
			Clusters: []appsv1.GenericClusterReference{{Name: "c"}}, ClusterSelector: prod}, want: []string{"c"}},
		{name: "clusterConditions: a cluster without the condition stays", spec: appsv1.PlacementRuleSpec{
			ClusterConditions: []appsv1.ClusterConditionFilter{{Type: "ManagedClusterConditionAvailable", Status: "True"}}},
			want: []string{"a", "b", "d", "renamed"}},
		{name: "clusterConditions with an unknown type keeps all", spec: appsv1.PlacementRuleSpec{
			ClusterConditions: []appsv1.ClusterConditionFilter{{Type: "Other", Status: "True"}}},
			want: []string{"a", "b", "c", "d", "renamed"}},
		{name: "clusterReplicas takes the first by name", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod, ClusterReplicas: ptr.To[int32](2)},
			want: []string{"a", "b"}},
		{name: "clusterReplicas keeps the earlier decisions", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod, ClusterReplicas: ptr.To[int32](2)},
			previous: []string{"d", "c"}, want: []string{"a", "d"}},
		{name: "clusterReplicas 0 decides on none", spec: appsv1.PlacementRuleSpec{ClusterReplicas: ptr.To[int32](0)}, want: []string{}},
		{name: "negative clusterReplicas decides on none", spec: appsv1.PlacementRuleSpec{ClusterReplicas: ptr.To[int32](-1)}, want: []string{}},
		{name: "clusterReplicas above the selection", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod, ClusterReplicas: ptr.To[int32](9)},
			want: []string{"a", "b", "d"}},
		{name: "resourceHint cpu, descending by default", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod, ClusterReplicas: ptr.To[int32](2),
			ResourceHint: &appsv1.ResourceHint{Type: appsv1.ResourceTypeCPU}}, previous: []string{"b"}, want: []string{"d", "a"}},
		{name: "resourceHint memory ascending", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod,
			ResourceHint: &appsv1.ResourceHint{Type: appsv1.ResourceTypeMemory, Order: appsv1.SelectionOrderAsc}}, want: []string{"d", "b", "a"}},
		{name: "resourceHint without a type keeps name order", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod, ClusterReplicas: ptr.To[int32](1),
			ResourceHint: &appsv1.ResourceHint{}}, previous: []string{"d"}, want: []string{"a"}},
		{name: "policies select nothing more or less", spec: appsv1.PlacementRuleSpec{ClusterSelector: prod,
			Policies: nil}, want: []string{"a", "b", "d"}},
		{name: "a selector that does not parse", spec: appsv1.PlacementRuleSpec{ClusterSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Near"}}}},
			wantErr: `spec.clusterSelector: Invalid value: "Near" is not a valid label selector operator`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var previous []appsv1.PlacementDecision
			for _, p := range c.previous {
				previous = append(previous, appsv1.PlacementDecision{ClusterName: p, ClusterNamespace: p})
			}
			got, err := PlacementRuleDecisions(c.spec, previous, fleet)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("error %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			names := []string{}
			for _, d := range got {
				if d.ClusterNamespace != d.ClusterName {
					t.Errorf("decision %+v: clusterNamespace is not the cluster's name", d)
				}
				names = append(names, d.ClusterName)
			}
			if !slices.Equal(names, c.want) {
				t.Errorf("decisions %v, want %v", names, c.want)
			}
		})
	}
}

func TestSchedulesPlacementRule(t *testing.T) {
	for name, want := range map[string]bool{"": true, "default": true, "mcm": true, "other-scheduler": false, "Default": false} {
		if got := SchedulesPlacementRule(appsv1.PlacementRuleSpec{SchedulerName: name}); got != want {
			t.Errorf("schedulerName %q: %v, want %v", name, got, want)
		}
	}
}
