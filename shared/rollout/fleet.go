package rollout

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/sets"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
	clustersdkv1beta1 "open-cluster-management.io/sdk-go/pkg/apis/cluster/v1beta1"
)

// DecisionGroup is (part of) one decision group of one placement, as the
// placement's PlacementDecisions carry it: the labels
// cluster.open-cluster-management.io/placement, decision-group-name and
// decision-group-index, and the decided cluster names. A group split over several
// PlacementDecisions may be given as several DecisionGroups with the same
// placement and index; a PlacementRule's decisions are one group of index 0.
type DecisionGroup struct {
	Placement  string   `json:"placement,omitempty"`
	GroupName  string   `json:"groupName,omitempty"`
	GroupIndex int32    `json:"groupIndex"`
	Clusters   []string `json:"clusters,omitempty"`
}

// GroupRef names one decision group of one placement.
type GroupRef struct {
	Placement  string `json:"placement,omitempty"`
	GroupName  string `json:"groupName,omitempty"`
	GroupIndex int32  `json:"groupIndex"`
}

// fleet is the decision groups of every placement of a rollout, merged into the
// single, contiguously indexed group list OCM's rollout library walks: placements
// in name order, each placement's groups in index order. Each cluster belongs to
// exactly one group: the first in that order that decides it.
type fleet struct {
	// groups are in rollout order; a group's position is its library group index.
	groups []fleetGroup
	// groupOf maps each cluster to the position of its group.
	groupOf map[string]int
	// clusters are every cluster, sorted by name.
	clusters []string
}

type fleetGroup struct {
	ref GroupRef
	// clusters are the group's clusters, sorted by name.
	clusters []string
}

// newFleet validates decision groups and merges them into a fleet. The indices of
// each placement's groups must run from 0 without gaps, one name per index, and
// every cluster must have a name: OCM's rollout library silently skips every
// group after a gap in the indices.
func newFleet(in []DecisionGroup) (*fleet, error) {
	type key struct {
		placement string
		index     int32
	}
	merged := map[key]*fleetGroup{}
	var errs []error
	for _, g := range in {
		if g.GroupIndex < 0 {
			errs = append(errs, fmt.Errorf("placement %q: decision group index %d: must not be negative", g.Placement, g.GroupIndex))
			continue
		}
		k := key{g.Placement, g.GroupIndex}
		fg, seen := merged[k]
		if !seen {
			fg = &fleetGroup{ref: GroupRef{Placement: g.Placement, GroupName: g.GroupName, GroupIndex: g.GroupIndex}}
			merged[k] = fg
		} else if fg.ref.GroupName != g.GroupName {
			errs = append(errs, fmt.Errorf("placement %q: decision group index %d: has two names, %q and %q",
				g.Placement, g.GroupIndex, fg.ref.GroupName, g.GroupName))
		}
		for _, c := range g.Clusters {
			if c == "" {
				errs = append(errs, fmt.Errorf("placement %q: decision group index %d: a cluster has an empty name", g.Placement, g.GroupIndex))
				continue
			}
			fg.clusters = append(fg.clusters, c)
		}
	}

	groups := make([]fleetGroup, 0, len(merged))
	for _, fg := range merged {
		groups = append(groups, *fg)
	}
	slices.SortFunc(groups, func(a, b fleetGroup) int {
		return cmp.Or(cmp.Compare(a.ref.Placement, b.ref.Placement), cmp.Compare(a.ref.GroupIndex, b.ref.GroupIndex))
	})
	for start := 0; start < len(groups); {
		end := start
		for end < len(groups) && groups[end].ref.Placement == groups[start].ref.Placement {
			end++
		}
		for i := start; i < end; i++ {
			if want := int32(i - start); groups[i].ref.GroupIndex != want {
				indices := make([]int32, 0, end-start)
				for _, g := range groups[start:end] {
					indices = append(indices, g.ref.GroupIndex)
				}
				errs = append(errs, fmt.Errorf("placement %q: decision group indices %v: index %d is missing; "+
					"indices must run from 0 without gaps (OCM's rollout library silently skips every group after a gap)",
					groups[start].ref.Placement, indices, want))
				break
			}
		}
		start = end
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	f := &fleet{groups: groups, groupOf: map[string]int{}}
	for i := range f.groups {
		g := &f.groups[i]
		slices.Sort(g.clusters)
		kept := g.clusters[:0]
		for _, c := range slices.Compact(g.clusters) {
			if _, taken := f.groupOf[c]; taken {
				continue
			}
			f.groupOf[c] = i
			kept = append(kept, c)
		}
		g.clusters = kept
		f.clusters = append(f.clusters, kept...)
	}
	slices.Sort(f.clusters)
	return f, nil
}

// libraryKey is the key of the group at position i in the library's tracker.
func (f *fleet) libraryKey(i int) clustersdkv1beta1.GroupKey {
	return clustersdkv1beta1.GroupKey{GroupName: f.groups[i].ref.GroupName, GroupIndex: int32(i)}
}

// tracker is OCM's in-memory placement decision tracker holding the fleet's groups
// (no Placement, no getter: it never lists anything).
func (f *fleet) tracker() *clustersdkv1beta1.PlacementDecisionClustersTracker {
	groups := make(clustersdkv1beta1.ClusterGroupsMap, len(f.groups))
	for i, g := range f.groups {
		groups[f.libraryKey(i)] = sets.New(g.clusters...)
	}
	return clustersdkv1beta1.NewPlacementDecisionClustersTrackerWithGroups(nil, nil, groups)
}

// mandatoryGroups resolves mandatory decision groups to group positions, in
// rollout order. An entry with a groupName selects every group of that name (in
// every placement; a name split by clustersPerDecisionGroup has several indices);
// one without selects the group of that groupIndex in every placement. This is the
// library's rule (groupName first, then groupIndex) applied per placement.
// Entries that select nothing are ignored, as the library ignores them.
func (f *fleet) mandatoryGroups(mandatory []clusterv1alpha1.MandatoryDecisionGroup) []int {
	var out []int
	for i, g := range f.groups {
		for _, m := range mandatory {
			if (m.GroupName != "" && m.GroupName == g.ref.GroupName) || (m.GroupName == "" && m.GroupIndex == g.ref.GroupIndex) {
				out = append(out, i)
				break
			}
		}
	}
	return out
}

// libraryMandatory spells mandatory group positions the way the library resolves
// them unambiguously in the merged tracker: by index alone.
func libraryMandatory(positions []int) clusterv1alpha1.MandatoryDecisionGroups {
	groups := make([]clusterv1alpha1.MandatoryDecisionGroup, 0, len(positions))
	for _, p := range positions {
		groups = append(groups, clusterv1alpha1.MandatoryDecisionGroup{GroupIndex: int32(p)})
	}
	return clusterv1alpha1.MandatoryDecisionGroups{MandatoryDecisionGroups: groups}
}
