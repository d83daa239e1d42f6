package compliance

import (
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// Aggregate returns the compliance of a whole made of parts in the given states:
// NonCompliant if any part is NonCompliant, else Pending if any is Pending, else ""
// if any is unknown, else Compliant. No parts gives "".
func Aggregate(states []policyv1.ComplianceState) policyv1.ComplianceState {
	if len(states) == 0 {
		return ""
	}
	pending, unknown := false, false
	for _, state := range states {
		switch state {
		case policyv1.NonCompliant:
			return policyv1.NonCompliant
		case policyv1.Pending:
			pending = true
		case policyv1.Compliant:
		default:
			unknown = true
		}
	}
	switch {
	case pending:
		return policyv1.Pending
	case unknown:
		return ""
	default:
		return policyv1.Compliant
	}
}

// OfTemplate is the compliance a Policy reports for a template whose own
// status.compliant is state: Compliant, Pending and NonCompliant in any case
// as those states, the empty state (not evaluated yet) empty, and any other
// value NonCompliant — OCM's config-policy-controller writes Terminating on a
// template being deleted, which OCM's status sync reports NonCompliant too.
func OfTemplate(state policyv1.ComplianceState) policyv1.ComplianceState {
	if state == "" {
		return ""
	}
	for _, known := range []policyv1.ComplianceState{policyv1.Compliant, policyv1.Pending, policyv1.NonCompliant} {
		if strings.EqualFold(string(state), string(known)) {
			return known
		}
	}
	return policyv1.NonCompliant
}

// PolicySet returns the compliance of set from the root compliant of its member
// policies, as OCM's propagator shows it (showCompliance): policies holds the
// Policies of the set's namespace by name; a member that is not in it, or is
// disabled, is skipped. While any other member has no compliance yet (or one
// other than Compliant, Pending and NonCompliant) the set shows none, even
// when another member is NonCompliant; otherwise NonCompliant if any member
// is, else Pending if any is, else Compliant. A set with no member to count,
// or a nil set, gives "".
func PolicySet(set *policyv1beta1.PolicySet, policies map[string]*policyv1.Policy) policyv1.ComplianceState {
	if set == nil {
		return ""
	}
	found, pending, nonCompliant := false, false, false
	for _, member := range set.Spec.Policies {
		policy := policies[string(member)]
		if policy == nil || policy.Spec.Disabled {
			continue
		}
		switch policy.Status.ComplianceState {
		case policyv1.NonCompliant:
			nonCompliant = true
		case policyv1.Pending:
			pending = true
		case policyv1.Compliant:
		default:
			return ""
		}
		found = true
	}
	switch {
	case !found:
		return ""
	case nonCompliant:
		return policyv1.NonCompliant
	case pending:
		return policyv1.Pending
	default:
		return policyv1.Compliant
	}
}

// PolicySetMessage is the status.statusMessage of set, as OCM's propagator
// words it: its members Pending ("Policies awaiting pending dependencies: a,
// b"), disabled ("Disabled policies: ..."), without a compliance yet ("No
// status provided while awaiting policy status: ...") and missing from
// policies ("Deleted policies: ..."), joined by "; " in that order, or "All
// policies are reporting status". A set without members has no message.
func PolicySetMessage(set *policyv1beta1.PolicySet, policies map[string]*policyv1.Policy) string {
	if set == nil || len(set.Spec.Policies) == 0 {
		return ""
	}
	var pending, disabled, unknown, deleted []string
	for _, member := range set.Spec.Policies {
		name := string(member)
		policy := policies[name]
		switch {
		case policy == nil:
			deleted = append(deleted, name)
		case policy.Spec.Disabled:
			disabled = append(disabled, name)
		case policy.Status.ComplianceState == policyv1.Pending:
			pending = append(pending, name)
		case policy.Status.ComplianceState != policyv1.Compliant && policy.Status.ComplianceState != policyv1.NonCompliant:
			// No compliance yet, or none OCM counts (as PolicySet).
			unknown = append(unknown, name)
		}
	}
	var parts []string
	for _, group := range []struct {
		label   string
		members []string
	}{
		{"Policies awaiting pending dependencies: ", pending},
		{"Disabled policies: ", disabled},
		{"No status provided while awaiting policy status: ", unknown},
		{"Deleted policies: ", deleted},
	} {
		if len(group.members) > 0 {
			parts = append(parts, group.label+strings.Join(group.members, ", "))
		}
	}
	if len(parts) == 0 {
		return "All policies are reporting status"
	}
	return strings.Join(parts, "; ")
}
