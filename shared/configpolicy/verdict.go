package configpolicy

import (
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Action is the write a Verdict asks for.
type Action string

const (
	// ActionNone writes nothing.
	ActionNone Action = ""
	// ActionCreate creates the template's object.
	ActionCreate Action = "create"
	// ActionUpdate writes Comparison.Merged.
	ActionUpdate Action = "update"
	// ActionDelete deletes the object.
	ActionDelete Action = "delete"
)

// Reason says why an object is compliant or not, as OCM's messages word it.
type Reason string

const (
	ReasonFoundAsSpecified    Reason = "found as specified"
	ReasonNotFound            Reason = "not found"
	ReasonNotAsSpecified      Reason = "found but not as specified"
	ReasonMissingAsExpected   Reason = "missing as expected"
	ReasonFoundButShouldNot   Reason = "found"
	ReasonCreated             Reason = "was created successfully"
	ReasonUpdated             Reason = "was updated successfully"
	ReasonDeleted             Reason = "was deleted successfully"
	ReasonStatusNotAsExpected Reason = "found but its status is not as specified"
)

// relatedReasons are OCM's status.relatedObjects[].reason for each Reason.
var relatedReasons = map[Reason]string{
	ReasonFoundAsSpecified:    "Resource found as expected",
	ReasonNotFound:            "Resource not found but should exist",
	ReasonNotAsSpecified:      "Resource found but does not match",
	ReasonStatusNotAsExpected: "Resource found but does not match",
	ReasonMissingAsExpected:   "Resource not found as expected",
	ReasonFoundButShouldNot:   "Resource found but should not exist",
	ReasonCreated:             "K8s creation success",
	ReasonUpdated:             "K8s update success",
	ReasonDeleted:             "K8s deletion success",
}

// Related is the reason a related object carries in status.relatedObjects, as
// OCM words it ("Resource found as expected" where the message says "found as
// specified"); a reason OCM has no wording for (an error) is kept as it is.
func (r Reason) Related() string {
	if related, ok := relatedReasons[r]; ok {
		return related
	}
	return string(r)
}

// Verdict is the decision on one object.
type Verdict struct {
	// Compliant is the object's compliance once Action is done.
	Compliant bool
	// Action is the write to make (enforce only).
	Action Action
	// Reason is why, worded for after Action succeeded.
	Reason Reason
}

// Decide judges one named object: exists says whether it is on the cluster,
// cmp is Compare's result when it is (ignored otherwise), ct the canonical
// compliance type and enforce whether the policy enforces.
func Decide(ct policyv1.ComplianceType, exists bool, cmp Comparison, enforce bool) Verdict {
	if ct == policyv1.MustNotHave {
		switch {
		case !exists:
			return Verdict{Compliant: true, Reason: ReasonMissingAsExpected}
		case enforce:
			return Verdict{Compliant: true, Action: ActionDelete, Reason: ReasonDeleted}
		default:
			return Verdict{Reason: ReasonFoundButShouldNot}
		}
	}
	switch {
	case !exists && enforce:
		return Verdict{Compliant: true, Action: ActionCreate, Reason: ReasonCreated}
	case !exists:
		return Verdict{Reason: ReasonNotFound}
	case cmp.Matches:
		return Verdict{Compliant: true, Reason: ReasonFoundAsSpecified}
	case enforce && cmp.Fixable() && cmp.statusDiffers():
		// Writing fixes every field but status, whose mismatch remains.
		return Verdict{Action: ActionUpdate, Reason: ReasonStatusNotAsExpected}
	case enforce && cmp.Fixable():
		return Verdict{Compliant: true, Action: ActionUpdate, Reason: ReasonUpdated}
	case enforce:
		return Verdict{Reason: ReasonStatusNotAsExpected}
	default:
		return Verdict{Reason: ReasonNotAsSpecified}
	}
}

// Result is the outcome for one object, as Describe renders it.
type Result struct {
	// Resource is the plural resource name, e.g. configmaps.
	Resource string
	// Namespace is empty for cluster-scoped objects.
	Namespace string
	// Name of the object.
	Name string
	// Compliant and Reason are the Verdict's, or the caller's for failures.
	Compliant bool
	Reason    Reason
	// Message, when set, is what Describe says of this object instead of
	// naming it with its reason: OCM's messages that name the object
	// themselves (ImmutableMessage, RecreateTimeoutMessage, ...).
	Message string
}

// Describe renders the results of one object template, grouped in the order
// of first appearance: the names of the objects of one resource with the same
// reason in one namespace together ("configmaps [a, b] found as specified in
// namespace default"), and such groups that differ only by namespace merged
// ("configmaps [a] not found in namespaces: x, y"). A result without a name
// is worded without brackets ("configmaps missing as expected in namespace
// x"). A result with a Message says its message, in its place. As OCM's,
// when any result is NonCompliant only the NonCompliant ones are described.
func Describe(results []Result) string {
	if slices.ContainsFunc(results, func(r Result) bool { return !r.Compliant }) {
		results = slices.DeleteFunc(slices.Clone(results), func(r Result) bool { return r.Compliant })
	}
	type group struct {
		resource   string
		reason     Reason
		names      []string
		namespaces []string
		message    string
	}
	var byNamespace []*group
	for _, r := range results {
		if r.Message != "" {
			byNamespace = append(byNamespace, &group{message: r.Message})
			continue
		}
		i := slices.IndexFunc(byNamespace, func(g *group) bool {
			return g.message == "" && g.resource == r.Resource && g.reason == r.Reason && slices.Equal(g.namespaces, []string{r.Namespace})
		})
		if i < 0 {
			byNamespace = append(byNamespace, &group{resource: r.Resource, reason: r.Reason, namespaces: []string{r.Namespace}})
			i = len(byNamespace) - 1
		}
		if g := byNamespace[i]; !slices.Contains(g.names, r.Name) {
			g.names = append(g.names, r.Name)
		}
	}
	var merged []*group
	for _, g := range byNamespace {
		i := slices.IndexFunc(merged, func(m *group) bool {
			return m.message == "" && m.resource == g.resource && m.reason == g.reason && slices.Equal(m.names, g.names)
		})
		if i < 0 || g.message != "" {
			merged = append(merged, g)
			continue
		}
		merged[i].namespaces = append(merged[i].namespaces, g.namespaces...)
	}
	parts := make([]string, 0, len(merged))
	for _, g := range merged {
		if g.message != "" {
			parts = append(parts, g.message)
			continue
		}
		s := g.resource + " " + string(g.reason)
		if names := slices.DeleteFunc(slices.Clone(g.names), func(n string) bool { return n == "" }); len(names) > 0 {
			s = g.resource + " [" + strings.Join(names, ", ") + "] " + string(g.reason)
		}
		namespaces := slices.DeleteFunc(slices.Clone(g.namespaces), func(ns string) bool { return ns == "" })
		switch len(namespaces) {
		case 0:
		case 1:
			s += " in namespace " + namespaces[0]
		default:
			s += " in namespaces: " + strings.Join(namespaces, ", ")
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// stateAndCondition are, for a compliance, its state and the type of its
// compliancy-detail condition: Compliant and "notification", or NonCompliant
// and "violation", as OCM writes them.
func stateAndCondition(compliant bool) (policyv1.ComplianceState, string) {
	if compliant {
		return policyv1.Compliant, "notification"
	}
	return policyv1.NonCompliant, "violation"
}

// ComplianceMessage is the message of a compliance event and of the policy's
// status: "Compliant; notification - <details>" or "NonCompliant; violation -
// <details>", the details of the templates joined by "; ".
func ComplianceMessage(compliant bool, details []string) string {
	state, condition := stateAndCondition(compliant)
	return string(state) + "; " + condition + " - " + strings.Join(details, "; ")
}

// Detail is one entry of status.compliancyDetails: the compliance and one
// condition ("notification" or "violation") with reason and message, last
// changed at.
func Detail(compliant bool, reason, message string, at time.Time) policyv1.TemplateStatus {
	state, condition := stateAndCondition(compliant)
	return policyv1.TemplateStatus{
		ComplianceState: state,
		Conditions: []policyv1.Condition{{
			Type: condition, Status: metav1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metav1.NewTime(at),
		}},
	}
}

// SameCondition reports whether two conditions say the same thing: type,
// status, reason and message; their transition times aside.
func SameCondition(a, b policyv1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// KeepTransitionTimes gives each condition of fresh that says what the
// condition at the same place of old says (SameCondition) old's
// lastTransitionTime, as OCM's config-policy-controller keeps it: a
// condition's time is when it last changed, not when the policy was last
// written for another template's change.
func KeepTransitionTimes(old, fresh []policyv1.TemplateStatus) {
	for i := range min(len(old), len(fresh)) {
		for j := range min(len(old[i].Conditions), len(fresh[i].Conditions)) {
			if SameCondition(old[i].Conditions[j], fresh[i].Conditions[j]) {
				fresh[i].Conditions[j].LastTransitionTime = old[i].Conditions[j].LastTransitionTime
			}
		}
	}
}
