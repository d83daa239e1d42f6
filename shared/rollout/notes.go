package rollout

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/intstr"
	clusterv1alpha1 "open-cluster-management.io/api/cluster/v1alpha1"
)

// maxListedGroups caps the groups one note's message lists.
const maxListedGroups = 5

// NoteReason says which kind of setting a Note is about.
type NoteReason string

// The reasons of the notes of package rollout.
const (
	// NoteMandatoryGroupSelectsNothing: a mandatoryDecisionGroups entry
	// names no decision group of the fleet.
	NoteMandatoryGroupSelectsNothing NoteReason = "MandatoryGroupSelectsNothing"
	// NoteAllAtOnce: a Progressive rollout's maxConcurrency (unset or 0)
	// enforces on every non-mandatory cluster in one wave.
	NoteAllAtOnce NoteReason = "AllAtOnce"
	// NoteMaxFailuresAboveClusters: an integer maxFailures of a Progressive
	// rollout is more than its clusters, which OCM's library reads as 0.
	NoteMaxFailuresAboveClusters NoteReason = "MaxFailuresAboveClusters"
	// NoteMaxFailuresAboveGroups: an integer maxFailures of a
	// ProgressivePerGroup rollout is more than the clusters of the Groups,
	// which OCM's library reads as 0 for them.
	NoteMaxFailuresAboveGroups NoteReason = "MaxFailuresAboveGroups"
)

// Note is a setting of the object being planned that does not do what it
// seems to, or an assumption a plan makes about it: data for a warning, which
// each exposure words from Field and Message.
type Note struct {
	// Field is the path of the setting, e.g.
	// spec.rolloutStrategy.progressive.maxConcurrency.
	Field string `json:"field"`
	// Reason says which kind of note it is.
	Reason NoteReason `json:"reason"`
	// Groups are the decision groups the note is about, when it is about some
	// (NoteMaxFailuresAboveGroups: every group, also those Message leaves out).
	Groups []GroupRef `json:"groups,omitempty"`
	// Message says what the setting does, without the field.
	Message string `json:"message"`
}

// String is the note as one line: "<field>: <message>".
func (n Note) String() string { return n.Field + ": " + n.Message }

// NoteStrings are notes as one line each (Note.String).
func NoteStrings(notes []Note) []string {
	out := make([]string, len(notes))
	for i, n := range notes {
		out[i] = n.String()
	}
	return out
}

// notes explain the settings of a progressive rollout that OCM's rollout library
// does not apply as written, for this fleet.
func (s Strategy) notes(f *fleet, mandatory []int) []Note {
	var notes []Note
	block := s.blockPath()
	for i, m := range s.MandatoryDecisionGroups {
		if len(f.mandatoryGroups([]clusterv1alpha1.MandatoryDecisionGroup{m})) == 0 {
			notes = append(notes, Note{Field: block.Child("mandatoryDecisionGroups").Index(i).String(),
				Reason:  NoteMandatoryGroupSelectsNothing,
				Message: "selects no decision group, so no group is rolled out ahead of the others for it"})
		}
	}

	if note, ok := s.allAtOnceNote(f, mandatory); ok {
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
			notes = append(notes, Note{Field: path.String(), Reason: NoteMaxFailuresAboveClusters, Message: fmt.Sprintf(
				"%d is more than the %d clusters of the rollout; OCM's rollout library then "+
					"tolerates no failure (it uses 0), as this rollout does; write a percentage such as \"100%%\" to tolerate every failure",
				maxFailures, n)})
		}
	case clusterv1alpha1.ProgressivePerGroup:
		var small []string
		var groups []GroupRef
		for i, g := range f.groups {
			if n := len(g.clusters); n > 0 && maxFailures > n && !slices.Contains(mandatory, i) {
				small = append(small, fmt.Sprintf("%s (%d clusters)", describeGroup(g.ref), n))
				groups = append(groups, g.ref)
			}
		}
		if len(small) > 0 {
			listed := small
			if len(small) > maxListedGroups {
				listed = append(slices.Clip(small[:maxListedGroups]), fmt.Sprintf("and %d more", len(small)-maxListedGroups))
			}
			notes = append(notes, Note{Field: path.String(), Reason: NoteMaxFailuresAboveGroups, Groups: groups, Message: fmt.Sprintf(
				"%d is more than the clusters of decision groups %s; OCM's rollout library then "+
					"tolerates no failure in those groups (it uses 0), as this rollout does; a percentage applies to every group",
				maxFailures, strings.Join(listed, ", "))})
		}
	}
	return notes
}

// allAtOnceNote warns when a Progressive rollout enforces on every
// non-mandatory cluster (more than one) at once: its maxConcurrency is 0,
// written as 0 or "0" or left unset, which OCM's rollout library reads as the
// whole fleet ("0%" is refused by ResolveStrategy).
func (s Strategy) allAtOnceNote(f *fleet, mandatory []int) (Note, bool) {
	if s.Spec.Type != clusterv1alpha1.Progressive || s.MaxConcurrency != intstr.FromInt32(0) {
		return Note{}, false
	}
	rest := len(f.clusters)
	for _, g := range mandatory {
		rest -= len(f.groups[g].clusters)
	}
	if rest <= 1 {
		return Note{}, false
	}
	return Note{Field: s.blockPath().Child("maxConcurrency").String(), Reason: NoteAllAtOnce, Message: fmt.Sprintf(
		"unset or 0 means every cluster at once, as in OCM's rollout library: "+
			"this Progressive rollout enforces on all %d non-mandatory clusters in one wave; set a number or a percentage to roll out in steps",
		rest)}, true
}

// describeGroup names a decision group in a note.
func describeGroup(g GroupRef) string {
	if g.GroupName == "" {
		return fmt.Sprintf("%s/%d", g.Placement, g.GroupIndex)
	}
	return fmt.Sprintf("%s/%d (%s)", g.Placement, g.GroupIndex, g.GroupName)
}
