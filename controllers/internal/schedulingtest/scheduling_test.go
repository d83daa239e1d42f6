package schedulingtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/localplane"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/testkit"
	"github.com/fleetpolicy/fleetpolicy/shared/scheduling"
)

const namespace = "apps"

// fleet is 12 clusters: env dev or prod, region eu or us, a PCI claim, the
// prod set's label on four, a NoSelect taint on two and a PreferNoSelect one
// on one.
func fleet() []clusterv1.ManagedCluster {
	var clusters []clusterv1.ManagedCluster
	for i := range 12 {
		mc := clusterv1.ManagedCluster{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cluster-%02d", i), Labels: map[string]string{
				"env":    []string{"dev", "prod", "prod"}[i%3],
				"region": []string{"eu", "us"}[i%2],
			}},
			Spec: clusterv1.ManagedClusterSpec{HubAcceptsClient: true},
		}
		if i%3 == 1 {
			mc.Labels[clusterv1beta2.ClusterSetLabel] = "prod"
		}
		switch i {
		case 4, 9:
			mc.Spec.Taints = []clusterv1.Taint{{Key: "maintenance", Value: "yes", Effect: clusterv1.TaintEffectNoSelect,
				TimeAdded: metav1.NewTime(time.Now().Add(-time.Hour))}}
		case 7:
			mc.Spec.Taints = []clusterv1.Taint{{Key: "slow", Effect: clusterv1.TaintEffectPreferNoSelect,
				TimeAdded: metav1.NewTime(time.Now().Add(-time.Hour))}}
		}
		mc.Status.ClusterClaims = []clusterv1.ManagedClusterClaim{{Name: "pci-compliance-level", Value: strconv.Itoa(i % 4)}}
		clusters = append(clusters, mc)
	}
	return clusters
}

// placements are Placements that cover what shared/scheduling decides:
// cluster sets, label and claim predicates, taints and tolerations, and
// decision groups by selector and by size (a number and a percentage). None
// sets numberOfClusters: which clusters it keeps then depends on the hub's
// prioritizers.
func placements() []clusterv1beta1.Placement {
	selector := func(key string, values ...string) clusterv1beta1.ClusterPredicate {
		return clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
			LabelSelector: metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: key, Operator: metav1.LabelSelectorOpIn, Values: values}}}}}
	}
	claim := clusterv1beta1.ClusterPredicate{RequiredClusterSelector: clusterv1beta1.ClusterSelector{
		ClaimSelector: clusterv1beta1.ClusterClaimSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "pci-compliance-level", Operator: metav1.LabelSelectorOpIn, Values: []string{"2", "3"}}}}}}
	groups := func(perGroup string, selectors ...string) clusterv1beta1.DecisionStrategy {
		s := clusterv1beta1.DecisionStrategy{GroupStrategy: clusterv1beta1.GroupStrategy{
			ClustersPerDecisionGroup: intstr.Parse(perGroup)}}
		for _, env := range selectors {
			s.GroupStrategy.DecisionGroups = append(s.GroupStrategy.DecisionGroups, clusterv1beta1.DecisionGroup{
				GroupName: env, ClusterSelector: clusterv1beta1.GroupClusterSelector{
					LabelSelector: metav1.LabelSelector{MatchLabels: map[string]string{"env": env}}}})
		}
		return s
	}
	specs := map[string]clusterv1beta1.PlacementSpec{
		"all":           {},
		"eu":            {Predicates: []clusterv1beta1.ClusterPredicate{selector("region", "eu")}},
		"eu-or-pci":     {Predicates: []clusterv1beta1.ClusterPredicate{selector("region", "eu"), claim}},
		"prod-set":      {ClusterSets: []string{"prod"}},
		"tolerant":      {Tolerations: []clusterv1beta1.Toleration{{Key: "maintenance", Operator: clusterv1beta1.TolerationOpExists}}},
		"groups-of-3":   {DecisionStrategy: groups("3")},
		"quarters":      {DecisionStrategy: groups("25%")},
		"dev-first":     {DecisionStrategy: groups("2", "dev")},
		"pci-dev-first": {Predicates: []clusterv1beta1.ClusterPredicate{claim}, DecisionStrategy: groups("50%", "dev")},
	}
	var out []clusterv1beta1.Placement
	for name, spec := range specs {
		out = append(out, clusterv1beta1.Placement{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace}, Spec: spec})
	}
	slices.SortFunc(out, func(a, b clusterv1beta1.Placement) int { return strings.Compare(a.Name, b.Name) })
	return out
}

func TestScheduleIsOCMPlacementControllers(t *testing.T) {
	plane, err := localplane.Start("scheduling")
	testkit.FatalOrSkip(t, "starting the scheduling API server", err)
	t.Cleanup(func() { _ = plane.Stop() })
	s := scheme.New()
	if err := clusterv1beta2.Install(s); err != nil {
		t.Fatal(err)
	}
	c, err := client.New(plane.Config, client.Options{Scheme: s})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := localplane.EnsureNamespace(ctx, c, namespace); err != nil {
		t.Fatal(err)
	}
	ocm, err := localplane.StartOCMPlacement(ctx, plane)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ocm.Stop)

	// The hub's fleet: two cluster sets (global selects every cluster, prod
	// those with its label), both bound to the namespace, and the clusters.
	objects := []client.Object{
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "global"},
			Spec: clusterv1beta2.ManagedClusterSetSpec{ClusterSelector: clusterv1beta2.ManagedClusterSelector{
				SelectorType: clusterv1beta2.LabelSelector, LabelSelector: &metav1.LabelSelector{}}}},
		&clusterv1beta2.ManagedClusterSet{ObjectMeta: metav1.ObjectMeta{Name: "prod"}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "global", Namespace: namespace},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "global"}},
		&clusterv1beta2.ManagedClusterSetBinding{ObjectMeta: metav1.ObjectMeta{Name: "prod", Namespace: namespace},
			Spec: clusterv1beta2.ManagedClusterSetBindingSpec{ClusterSet: "prod"}},
	}
	for _, mc := range fleet() {
		status := mc.Status
		if err := c.Create(ctx, &mc); err != nil {
			t.Fatal(err)
		}
		mc.Status = status
		if err := c.Status().Update(ctx, &mc); err != nil {
			t.Fatal(err)
		}
	}
	for _, obj := range objects {
		if err := c.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range placements() {
		if err := c.Create(ctx, &p); err != nil {
			t.Fatal(err)
		}
	}

	var (
		clusters clusterv1.ManagedClusterList
		sets     clusterv1beta2.ManagedClusterSetList
		bindings clusterv1beta2.ManagedClusterSetBindingList
	)
	for _, list := range []client.ObjectList{&clusters, &sets, &bindings} {
		if err := c.List(ctx, list); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range placements() {
		t.Run(want.Name, func(t *testing.T) {
			// OCM schedules again as its cache fills, so the comparison waits
			// for its decisions to settle on the offline ones.
			testkit.Eventually(t, 30*time.Second, "OCM's decisions for "+want.Name+" are shared/scheduling's", func() string {
				select {
				case <-ocm.Exited():
					t.Fatalf("OCM's placement controller exited:\n%s", ocm.Log())
				default:
				}
				var placement clusterv1beta1.Placement
				var decisions clusterv1beta1.PlacementDecisionList
				if err := c.Get(ctx, client.ObjectKeyFromObject(&want), &placement); err != nil {
					return err.Error()
				}
				if err := c.List(ctx, &decisions, client.InNamespace(namespace),
					client.MatchingLabels{clusterv1beta1.PlacementLabel: want.Name}); err != nil {
					return err.Error()
				}
				result, err := scheduling.Schedule(scheduling.Input{Placement: &placement, Clusters: clusters.Items,
					ClusterSetBindingsKnown: true, ClusterSets: sets.Items, ClusterSetBindings: bindings.Items, Now: time.Now()})
				if err != nil {
					t.Fatal(err)
				}
				var diffs []string
				if got, want := describeDecisions(decisions.Items), describeDecisions(result.Decisions); got != want {
					diffs = append(diffs, fmt.Sprintf("PlacementDecisions\n--- OCM\n%s--- shared/scheduling\n%s", got, want))
				}
				if got, want := describeGroups(placement.Status.DecisionGroups), describeGroups(result.Groups); got != want {
					diffs = append(diffs, fmt.Sprintf("status.decisionGroups\n--- OCM\n%s--- shared/scheduling\n%s", got, want))
				}
				if got, want := placement.Status.NumberOfSelectedClusters, result.NumberOfSelectedClusters; got != want {
					diffs = append(diffs, fmt.Sprintf("status.numberOfSelectedClusters: OCM %d, shared/scheduling %d", got, want))
				}
				if len(diffs) > 0 {
					return strings.Join(diffs, "\n") + "\ncontroller log:\n" + ocm.LogTail(15)
				}
				return ""
			})
		})
	}
}

// describeDecisions is one line per PlacementDecision: its name, decision
// group labels and clusters.
func describeDecisions(decisions []clusterv1beta1.PlacementDecision) string {
	lines := make([]string, 0, len(decisions))
	for _, d := range decisions {
		var clusters []string
		for _, cd := range d.Status.Decisions {
			clusters = append(clusters, cd.ClusterName)
		}
		lines = append(lines, fmt.Sprintf("%s group %s/%q: %s\n", d.Name,
			d.Labels[clusterv1beta1.DecisionGroupIndexLabel], d.Labels[clusterv1beta1.DecisionGroupNameLabel], strings.Join(clusters, ",")))
	}
	slices.Sort(lines)
	return strings.Join(lines, "")
}

func describeGroups(groups []clusterv1beta1.DecisionGroupStatus) string {
	var b strings.Builder
	for _, g := range groups {
		fmt.Fprintf(&b, "%d %q: %d clusters in %s\n", g.DecisionGroupIndex, g.DecisionGroupName, g.ClustersCount, strings.Join(g.Decisions, ","))
	}
	return b.String()
}
