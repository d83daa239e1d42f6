package scheduling

import (
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta2 "open-cluster-management.io/api/cluster/v1beta2"
	clustersdkv1beta2 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta2"

	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
)

// globalClusterSet is the cluster set an OCM hub creates that selects every
// cluster.
const globalClusterSet = "global"

// eligibleClusters returns the clusters of the cluster sets the placement may
// select from, without duplicates and without clusters being deleted, plus notes
// on what was assumed.
func eligibleClusters(in Input) ([]*clusterv1.ManagedCluster, []rollout.Note, field.ErrorList) {
	p := in.Placement
	setsByName := map[string]*clusterv1beta2.ManagedClusterSet{}
	for i := range in.ClusterSets {
		if _, dup := setsByName[in.ClusterSets[i].Name]; !dup {
			setsByName[in.ClusterSets[i].Name] = &in.ClusterSets[i]
		}
	}

	var names []string
	var notes []rollout.Note
	if in.ClusterSetBindingsKnown {
		bound := sets.New[string]()
		for _, b := range in.ClusterSetBindings {
			if _, exists := setsByName[b.Name]; b.Namespace == p.Namespace && exists {
				bound.Insert(b.Name)
			}
		}
		if len(p.Spec.ClusterSets) > 0 {
			bound = bound.Intersection(sets.New(p.Spec.ClusterSets...))
		}
		names = sets.List(bound)
	} else {
		names = slices.Clone(p.Spec.ClusterSets)
		if len(names) == 0 {
			names = []string{globalClusterSet}
		}
		slices.Sort(names)
		names = slices.Compact(names)
		for _, name := range names {
			if _, given := setsByName[name]; !given && name != globalClusterSet {
				notes = append(notes, rollout.Note{Field: "spec.clusterSets", Reason: NoteClusterSetAssumed, Message: fmt.Sprintf(
					"ManagedClusterSet %q is not in the input; "+
						"it is assumed to exist, be bound to namespace %s, and select the clusters labelled %s=%s",
					name, p.Namespace, clusterv1beta2.ClusterSetLabel, name)})
			}
		}
	}

	var selectors []labels.Selector
	var errs field.ErrorList
	for _, name := range names {
		set, given := setsByName[name]
		if !given {
			set = defaultClusterSet(name)
		}
		s, err := clustersdkv1beta2.BuildClusterSelector(set)
		if err != nil {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterSets"), name,
				fmt.Sprintf("ManagedClusterSet %s: spec.clusterSelector: %v", name, err)))
			continue
		}
		selectors = append(selectors, s)
	}

	seen := sets.New[string]()
	var out []*clusterv1.ManagedCluster
	for i := range in.Clusters {
		c := &in.Clusters[i]
		if c.DeletionTimestamp != nil || seen.Has(c.Name) {
			continue
		}
		if slices.ContainsFunc(selectors, func(s labels.Selector) bool { return s.Matches(labels.Set(c.Labels)) }) {
			seen.Insert(c.Name)
			out = append(out, c)
		}
	}
	return out, notes, errs
}

// defaultClusterSet is the cluster set an OCM hub has under a name when none is
// given: global selects every cluster, any other name its exclusive label.
func defaultClusterSet(name string) *clusterv1beta2.ManagedClusterSet {
	set := &clusterv1beta2.ManagedClusterSet{}
	set.Name = name
	set.Spec.ClusterSelector.SelectorType = clusterv1beta2.ExclusiveClusterSetLabel
	if name == globalClusterSet {
		set.Spec.ClusterSelector = clusterv1beta2.ManagedClusterSelector{
			SelectorType:  clusterv1beta2.LabelSelector,
			LabelSelector: &metav1.LabelSelector{},
		}
	}
	return set
}
