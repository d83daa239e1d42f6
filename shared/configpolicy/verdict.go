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
	// Unnamed is true for the objects an object template without a name
	// (and without an objectSelector) matched in Namespace: OCM names them
	// together, as one ("configmaps [a, b] found as specified in namespace
	// x"), where the objects of a named or selecting template are named
	// one by one.
	Unnamed bool
	// Compliant and Reason are the Verdict's, or the caller's for failures.
	Compliant bool
	Reason    Reason
	// Message, when set, is what Describe says of this object instead of
	// naming it with its reason: OCM's messages that name the object
	// themselves (ImmutableMessage, RecreateTimeoutMessage, ...).
	Message string
}

// reasonOrder is the order in which OCM's config-policy-controller lists the
// reasons of one object template's message (createStatus's orderedReasons).
// A status-only mismatch is OCM's "found but not as specified" and comes
// with it.
var reasonOrder = []Reason{
	ReasonFoundAsSpecified, ReasonCreated, ReasonUpdated, ReasonDeleted,
	ReasonNotFound, ReasonNotAsSpecified, ReasonStatusNotAsExpected,
	ReasonMissingAsExpected, ReasonFoundButShouldNot,
}

// failureReasons are OCM's reasons for the failures a result's Reason (by
// its beginning) or Message says: OCM lists those after reasonOrder's,
// sorted by its reason, each object's message on its own.
var failureReasons = []struct {
	prefix string
	ocm    string
}{
	{"cannot be created: ", "K8s creation error"},
	{"cannot be deleted: ", "K8s deletion error"},
	{"cannot be updated: ", "K8s update template error"},
	{"cannot be read: ", "api error"},
	{"cannot be listed: ", "api error"},
}

// rank places a result's reason in OCM's order: its place in reasonOrder,
// or len(reasonOrder) and the reason OCM's message is sorted by.
func (r Result) rank() (int, string) {
	if r.Message != "" {
		return len(reasonOrder), "K8s update template error"
	}
	if i := slices.Index(reasonOrder, r.Reason); i >= 0 {
		return i, ""
	}
	for _, f := range failureReasons {
		if strings.HasPrefix(string(r.Reason), f.prefix) {
			return len(reasonOrder), f.ocm
		}
	}
	return len(reasonOrder), string(r.Reason)
}

// Describe renders the results of one object template as OCM's
// config-policy-controller does (createStatus). As OCM's, when any result
// is NonCompliant only the NonCompliant ones are described. The results
// are grouped by reason, the reasons in OCM's order (found as specified,
// was created, was updated, was deleted, not found, found but not as
// specified, missing as expected, found; failures after them, sorted by
// OCM's reason for them). Within a reason, the names that are in the same
// namespaces are named together ("configmaps [a, b] found as specified in
// namespace default"; "configmaps [a] not found in namespaces: x, y"),
// these groups sorted by their namespaces (one namespace before several),
// the names sorted. The objects an unnamed template matched in one
// namespace are one name ("a, b"), as OCM's. A result without a name is
// worded without brackets ("configmaps missing as expected in namespace
// x"). Failures are not grouped: each result with a Message says its
// message, the others their reason, in the order of their namespaces and
// names.
func Describe(results []Result) string {
	if slices.ContainsFunc(results, func(r Result) bool { return !r.Compliant }) {
		results = slices.DeleteFunc(slices.Clone(results), func(r Result) bool { return r.Compliant })
	}
	type bucket struct {
		rank    int
		ocm     string
		reason  Reason
		results []Result
	}
	var buckets []*bucket
	for _, r := range results {
		rank, ocm := r.rank()
		// Failures go together by OCM's reason for them.
		reason := r.Reason
		if rank == len(reasonOrder) {
			reason = ""
		}
		i := slices.IndexFunc(buckets, func(b *bucket) bool { return b.rank == rank && b.ocm == ocm && b.reason == reason })
		if i < 0 {
			buckets = append(buckets, &bucket{rank: rank, ocm: ocm, reason: reason})
			i = len(buckets) - 1
		}
		buckets[i].results = append(buckets[i].results, r)
	}
	slices.SortStableFunc(buckets, func(a, b *bucket) int {
		if a.rank != b.rank {
			return a.rank - b.rank
		}
		return strings.Compare(a.ocm, b.ocm)
	})
	var parts []string
	for _, b := range buckets {
		if b.rank == len(reasonOrder) {
			parts = append(parts, describeFailures(b.results)...)
		} else {
			parts = append(parts, describeReason(b.results)...)
		}
	}
	return strings.Join(parts, "; ")
}

// describeReason words results of one reason as OCM's
// generateMessageWithReason and getCombinedCompliancyDetailsMsg do.
func describeReason(results []Result) []string {
	// OCM's units: one object (namespace/name), or the objects an unnamed
	// template matched in a namespace; their names, each unit's one string.
	type unit struct {
		resource, namespace, name string
		unnamed                   bool
		names                     []string
	}
	var units []*unit
	for _, r := range results {
		i := slices.IndexFunc(units, func(u *unit) bool {
			return u.resource == r.Resource && u.namespace == r.Namespace && u.unnamed == r.Unnamed && (r.Unnamed || u.name == r.Name)
		})
		if i < 0 {
			units = append(units, &unit{resource: r.Resource, namespace: r.Namespace, name: r.Name, unnamed: r.Unnamed})
			i = len(units) - 1
		}
		if r.Name != "" && !slices.Contains(units[i].names, r.Name) {
			units[i].names = append(units[i].names, r.Name)
		}
	}
	// The namespaces of each resource and names string.
	type named struct{ resource, names string }
	var order []named
	namespaces := map[named][]string{}
	for _, u := range units {
		slices.Sort(u.names)
		key := named{u.resource, strings.Join(u.names, ", ")}
		if _, ok := namespaces[key]; !ok {
			order = append(order, key)
		}
		if u.namespace != "" && !slices.Contains(namespaces[key], u.namespace) {
			namespaces[key] = append(namespaces[key], u.namespace)
		}
	}
	// Names in the same namespaces go together.
	type group struct {
		resource, where string
		names           []string
	}
	var groups []*group
	for _, key := range order {
		nss := namespaces[key]
		slices.Sort(nss)
		where := ""
		switch len(nss) {
		case 0:
		case 1:
			where = " in namespace " + nss[0]
		default:
			where = " in namespaces: " + strings.Join(nss, ", ")
		}
		i := slices.IndexFunc(groups, func(g *group) bool { return g.resource == key.resource && g.where == where })
		if i < 0 {
			groups = append(groups, &group{resource: key.resource, where: where})
			i = len(groups) - 1
		}
		if key.names != "" {
			groups[i].names = append(groups[i].names, key.names)
		}
	}
	slices.SortFunc(groups, func(a, b *group) int {
		if c := strings.Compare(a.where, b.where); c != 0 {
			return c
		}
		return strings.Compare(a.resource, b.resource)
	})
	reason := string(results[0].Reason)
	parts := make([]string, 0, len(groups))
	for _, g := range groups {
		slices.Sort(g.names)
		s := g.resource + " " + reason
		if len(g.names) > 0 {
			s = g.resource + " [" + strings.Join(g.names, ", ") + "] " + reason
		}
		parts = append(parts, s+g.where)
	}
	return parts
}

// describeFailures words failures of one OCM reason as OCM does: each
// object on its own, in the order of namespace and name.
func describeFailures(results []Result) []string {
	results = slices.Clone(results)
	slices.SortStableFunc(results, func(a, b Result) int {
		if c := strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Resource, b.Resource)
	})
	var parts []string
	for _, r := range results {
		s := r.Message
		if s == "" {
			s = describeReason([]Result{r})[0]
		}
		if !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return parts
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
