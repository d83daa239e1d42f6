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
// policies. policies holds the Policies of the set's namespace by name; a member
// that is not in it, or is disabled, is skipped. A nil set gives "".
func PolicySet(set *policyv1beta1.PolicySet, policies map[string]*policyv1.Policy) policyv1.ComplianceState {
	if set == nil {
		return ""
	}
	states := make([]policyv1.ComplianceState, 0, len(set.Spec.Policies))
	for _, member := range set.Spec.Policies {
		policy := policies[string(member)]
		if policy == nil || policy.Spec.Disabled {
			continue
		}
		states = append(states, policy.Status.ComplianceState)
	}
	return Aggregate(states)
}
