package scheduling

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// GroupOf returns the part of a decision group one PlacementDecision carries:
// its placement (label cluster.open-cluster-management.io/placement), group name
// and index (labels decision-group-name and decision-group-index) and clusters
// (status.decisions). A PlacementDecision without the index label is group 0. An
// index that is not a whole number from 0 is an error naming the label, returned
// with the group read as group 0: its clusters are still those OCM v0.19's
// propagator binds (it never reads the label), and only a rollout that orders
// clusters by group (rollout.UsesGroupIndexes) must refuse it. A decision with
// an empty clusterName is skipped: OCM's API says an empty ClusterDecision is
// not scheduled yet. The hub and plan-rollout both read PlacementDecisions with
// GroupOf, so that they agree on every group.
func GroupOf(d *clusterv1beta1.PlacementDecision) (rollout.DecisionGroup, error) {
	g := rollout.DecisionGroup{
		Placement: d.Labels[clusterv1beta1.PlacementLabel],
		GroupName: d.Labels[clusterv1beta1.DecisionGroupNameLabel],
	}
	g.Clusters = make([]string, 0, len(d.Status.Decisions))
	for _, cd := range d.Status.Decisions {
		if cd.ClusterName != "" {
			g.Clusters = append(g.Clusters, cd.ClusterName)
		}
	}
	// Without the index label (an older scheduler, or written by hand) the
	// decision is in group 0.
	if index, ok := d.Labels[clusterv1beta1.DecisionGroupIndexLabel]; ok {
		n, err := strconv.ParseInt(index, 10, 32)
		if err != nil || n < 0 {
			return g, field.Invalid(field.NewPath("metadata", "labels").Key(clusterv1beta1.DecisionGroupIndexLabel),
				index, "must be a decision group index: a whole number from 0")
		}
		g.GroupIndex = int32(n)
	}
	return g, nil
}

// RuleGroup returns the decision group of a PlacementRule: its status.decisions,
// as one group of index 0 named after the rule (a PlacementRule has no decision
// groups). Decisions with an empty clusterName are skipped, as GroupOf skips
// them.
func RuleGroup(rule *appsv1.PlacementRule) rollout.DecisionGroup {
	g := rollout.DecisionGroup{Placement: rule.Name}
	for _, d := range rule.Status.Decisions {
		if d.ClusterName != "" {
			g.Clusters = append(g.Clusters, d.ClusterName)
		}
	}
	return g
}
