package scheduling

import (
	"strconv"

	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// GroupOf returns the part of a decision group one PlacementDecision carries:
// its placement (label cluster.open-cluster-management.io/placement), group name
// and index (labels decision-group-name and decision-group-index) and clusters
// (status.decisions). A PlacementDecision without the index label is group 0, as
// the hub reads it. Errors name the fields of the PlacementDecision at fault.
func GroupOf(d *clusterv1beta1.PlacementDecision) (rollout.DecisionGroup, error) {
	labels := field.NewPath("metadata", "labels")
	var errs field.ErrorList
	g := rollout.DecisionGroup{
		Placement: d.Labels[clusterv1beta1.PlacementLabel],
		GroupName: d.Labels[clusterv1beta1.DecisionGroupNameLabel],
	}
	// Without the index label (an older scheduler, or written by hand) the
	// decision stays in group 0, as the hub reads it.
	if index, ok := d.Labels[clusterv1beta1.DecisionGroupIndexLabel]; ok {
		if n, err := strconv.ParseInt(index, 10, 32); err != nil || n < 0 {
			errs = append(errs, field.Invalid(labels.Key(clusterv1beta1.DecisionGroupIndexLabel), index,
				"must be a decision group index: a whole number from 0"))
		} else {
			g.GroupIndex = int32(n)
		}
	}
	g.Clusters = make([]string, 0, len(d.Status.Decisions))
	for i, cd := range d.Status.Decisions {
		if cd.ClusterName == "" {
			errs = append(errs, field.Required(field.NewPath("status", "decisions").Index(i).Child("clusterName"), ""))
			continue
		}
		g.Clusters = append(g.Clusters, cd.ClusterName)
	}
	if len(errs) > 0 {
		return rollout.DecisionGroup{}, errs.ToAggregate()
	}
	return g, nil
}
