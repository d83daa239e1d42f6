package rollout

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// maxListedGroups caps the groups one note lists.
const maxListedGroups = 5

// notes explain the settings of a progressive rollout that OCM's rollout library
// does not apply as written, for this fleet. Each note starts with the field.
func (s Strategy) notes(f *fleet, mandatory []int) []string {
	var notes []string
	block := s.blockPath()
	for i, m := range s.MandatoryDecisionGroups {
		if len(f.mandatoryGroups([]clusterv1alpha1.MandatoryDecisionGroup{m})) == 0 {
			notes = append(notes, fmt.Sprintf("%s: selects no decision group, so no group is rolled out ahead of the others for it",
				block.Child("mandatoryDecisionGroups").Index(i)))
		}
	}

	if note := s.allAtOnceNote(f, mandatory); note != "" {
		notes = append(notes, note)
	}

	if s.MaxFailures.Type != intstr.Int || s.MaxFailures.IntVal <= 0 {
		return notes
	}
	maxFailures := int(s.MaxFailures.IntVal)
	path := block.Child("maxFailures")
	switch s.Spec.Type {
	case clusterv1alpha1.Progressive:
		if n := len(f.clusters); n > 0 && maxFailures > n {
			notes = append(notes, fmt.Sprintf("%s: %d is more than the %d clusters of the rollout; OCM's rollout library then "+
				"tolerates no failure (it uses 0), as this rollout does; write a percentage such as \"100%%\" to tolerate every failure",
				path, maxFailures, n))
		}
	case clusterv1alpha1.ProgressivePerGroup:
		var small []string
		for i, g := range f.groups {
			if n := len(g.clusters); n > 0 && maxFailures > n && !slices.Contains(mandatory, i) {
				small = append(small, fmt.Sprintf("%s (%d clusters)", describeGroup(g.ref), n))
			}
		}
		if len(small) > 0 {
			listed := small
			if len(small) > maxListedGroups {
				listed = append(slices.Clip(small[:maxListedGroups]), fmt.Sprintf("and %d more", len(small)-maxListedGroups))
			}
			notes = append(notes, fmt.Sprintf("%s: %d is more than the clusters of decision groups %s; OCM's rollout library then "+
				"tolerates no failure in those groups (it uses 0), as this rollout does; a percentage applies to every group",
				path, maxFailures, strings.Join(listed, ", ")))
		}
	}
	return notes
}

// allAtOnceNote warns when a Progressive rollout enforces on every
// non-mandatory cluster (more than one) at once: its maxConcurrency is 0,
// written as 0 or "0" or left unset, which OCM's rollout library reads as the
// whole fleet ("0%" is refused by ResolveStrategy).
func (s Strategy) allAtOnceNote(f *fleet, mandatory []int) string {
	if s.Spec.Type != clusterv1alpha1.Progressive || s.MaxConcurrency != intstr.FromInt32(0) {
		return ""
	}
	rest := len(f.clusters)
	for _, g := range mandatory {
		rest -= len(f.groups[g].clusters)
	}
	if rest <= 1 {
		return ""
	}
	return fmt.Sprintf("%s: unset or 0 means every cluster at once, as in OCM's rollout library: "+
		"this Progressive rollout enforces on all %d non-mandatory clusters in one wave; set a number or a percentage to roll out in steps",
		s.blockPath().Child("maxConcurrency"), rest)
}

// describeGroup names a decision group in a note.
func describeGroup(g GroupRef) string {
	if g.GroupName == "" {
		return fmt.Sprintf("%s/%d", g.Placement, g.GroupIndex)
	}
	return fmt.Sprintf("%s/%d (%s)", g.Placement, g.GroupIndex, g.GroupName)
}
