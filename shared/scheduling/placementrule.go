package scheduling

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "open-cluster-management.io/api/cluster/v1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
)

// ClusterNameLabel is the label OCM's PlacementRule controller selects
// spec.clusters by (ACM sets it to the cluster's name on every ManagedCluster).
const ClusterNameLabel = "name"

// SchedulesPlacementRule reports whether the hub's PlacementRule scheduler
// writes the rule's decisions: spec.schedulerName is empty, "default" or "mcm".
func SchedulesPlacementRule(spec appsv1.PlacementRuleSpec) bool {
	switch spec.SchedulerName {
	case "", appsv1.SchedulerNameDefault, appsv1.SchedulerNameMCM:
		return true
	}
	return false
}

// PlacementRuleDecisions is the status.decisions OCM's PlacementRule controller
// writes for a rule with spec and current decisions previous, on a hub whose
// ManagedClusters are clusters. See the package documentation. A selector that
// is no selector is a *field.Error for spec.clusterSelector.
func PlacementRuleDecisions(spec appsv1.PlacementRuleSpec, previous []appsv1.PlacementDecision, clusters []clusterv1.ManagedCluster) ([]appsv1.PlacementDecision, error) {
	decisions := []appsv1.PlacementDecision{}
	if spec.ClusterReplicas != nil && *spec.ClusterReplicas <= 0 {
		return decisions, nil
	}
	selected, err := selectPlacementRuleClusters(spec, clusters)
	if err != nil {
		return nil, err
	}
	total := len(selected)
	if spec.ClusterReplicas != nil && int(*spec.ClusterReplicas) < total {
		total = int(*spec.ClusterReplicas)
	}
	decide := func(name string) {
		decisions = append(decisions, appsv1.PlacementDecision{ClusterName: name, ClusterNamespace: name})
		delete(selected, name)
	}

	if spec.ResourceHint != nil {
		ordered := make([]*clusterv1.ManagedCluster, 0, len(selected))
		for _, c := range selected {
			ordered = append(ordered, c)
		}
		ascending := spec.ResourceHint.Order == appsv1.SelectionOrderAsc
		slices.SortFunc(ordered, func(a, b *clusterv1.ManagedCluster) int {
			qa, qb := allocatable(a, spec.ResourceHint.Type), allocatable(b, spec.ResourceHint.Type)
			by := qa.Cmp(qb)
			if !ascending {
				by = -by
			}
			if by != 0 {
				return by
			}
			return strings.Compare(a.Name, b.Name)
		})
		for _, c := range ordered[:total] {
			decide(c.Name)
		}
		return decisions, nil
	}

	// Without a hint, the clusters already decided on stay while eligible;
	// the rest are taken in name order, and the decisions are sorted by name.
	for _, d := range previous {
		if len(decisions) == total {
			break
		}
		if _, ok := selected[d.ClusterName]; ok {
			decide(d.ClusterName)
		}
	}
	rest := make([]string, 0, len(selected))
	for name := range selected {
		rest = append(rest, name)
	}
	slices.Sort(rest)
	for _, name := range rest[:total-len(decisions)] {
		decide(name)
	}
	slices.SortFunc(decisions, func(a, b appsv1.PlacementDecision) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	return decisions, nil
}

// selectPlacementRuleClusters is the clusters that spec.clusters (by the name
// label) or else spec.clusterSelector selects, that are not being deleted and
// whose conditions spec.clusterConditions names have the status it gives.
func selectPlacementRuleClusters(spec appsv1.PlacementRuleSpec, clusters []clusterv1.ManagedCluster) (map[string]*clusterv1.ManagedCluster, error) {
	var names map[string]bool
	selector := labels.Everything()
	if len(spec.Clusters) > 0 {
		names = map[string]bool{}
		for _, c := range spec.Clusters {
			names[c.Name] = true
		}
	} else if spec.ClusterSelector != nil {
		var err error
		if selector, err = metav1.LabelSelectorAsSelector(spec.ClusterSelector); err != nil {
			return nil, field.Invalid(field.NewPath("spec", "clusterSelector"), field.OmitValueType{}, err.Error())
		}
	}
	wanted := map[string]metav1.ConditionStatus{}
	for _, c := range spec.ClusterConditions {
		wanted[c.Type] = c.Status
	}

	selected := map[string]*clusterv1.ManagedCluster{}
	for i := range clusters {
		c := &clusters[i]
		if c.DeletionTimestamp != nil {
			continue
		}
		if names != nil && !names[nameLabel(c)] {
			continue
		}
		if !selector.Matches(labels.Set(c.Labels)) {
			continue
		}
		if !conditionsMatch(c.Status.Conditions, wanted) {
			continue
		}
		selected[c.Name] = c
	}
	return selected, nil
}

// nameLabel is the cluster's name label, or its name where it has none (a hub
// without ACM's import controller).
func nameLabel(c *clusterv1.ManagedCluster) string {
	if n, ok := c.Labels[ClusterNameLabel]; ok {
		return n
	}
	return c.Name
}

// conditionsMatch reports whether every condition of a type in wanted has the
// wanted status; a condition the cluster lacks does not exclude it.
func conditionsMatch(conditions []metav1.Condition, wanted map[string]metav1.ConditionStatus) bool {
	for _, c := range conditions {
		if status, ok := wanted[c.Type]; ok && status != c.Status {
			return false
		}
	}
	return true
}

// allocatable is the cluster's allocatable amount of resource, zero when it
// reports none or resource is neither cpu nor memory.
func allocatable(c *clusterv1.ManagedCluster, resourceType appsv1.ResourceType) resource.Quantity {
	switch resourceType {
	case appsv1.ResourceTypeCPU:
		return c.Status.Allocatable[clusterv1.ResourceCPU]
	case appsv1.ResourceTypeMemory:
		return c.Status.Allocatable[clusterv1.ResourceMemory]
	}
	return resource.Quantity{}
}
