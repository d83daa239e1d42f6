package dependency

import (
	"fmt"
	"slices"
	"strings"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Observation is what a caller saw of one dependency object.
type Observation struct {
	// Found is false when the object does not exist.
	Found bool
	// Compliance is the object's status.compliant, or else its
	// status.complianceState; empty when the object has neither field.
	Compliance policyv1.ComplianceState
}

// Observe reads the Observation of an object decoded from JSON; nil means the
// object does not exist. A status field that is not a string counts as missing.
func Observe(object map[string]any) Observation {
	if object == nil {
		return Observation{}
	}
	status, _ := object["status"].(map[string]any)
	for _, field := range []string{"compliant", "complianceState"} {
		if state, ok := status[field].(string); ok && state != "" {
			return Observation{Found: true, Compliance: policyv1.ComplianceState(state)}
		}
	}
	return Observation{Found: true}
}

// Wait is a Requirement that is not met, with what was observed instead.
type Wait struct {
	Requirement
	Observed Observation
}

// Gate is the verdict on one template: it may be applied when nothing is waited
// for.
type Gate struct {
	// Waits are the unmet requirements, in declaration order.
	Waits []Wait
	// IgnorePending is the template's ignorePending.
	IgnorePending bool
}

// Evaluate decides whether a template with the given requirements (see
// Requirements) and ignorePending may be applied. observed holds what the caller
// saw of each target; a target missing from it counts as an object that does not
// exist.
func Evaluate(reqs []Requirement, ignorePending bool, observed map[Ref]Observation) Gate {
	gate := Gate{IgnorePending: ignorePending}
	for _, req := range reqs {
		seen := observed[req.Target]
		if seen.Found && seen.Compliance == req.Compliance {
			continue
		}
		gate.Waits = append(gate.Waits, Wait{Requirement: req, Observed: seen})
	}
	return gate
}

// Allowed reports whether the template may be applied.
func (g Gate) Allowed() bool { return len(g.Waits) == 0 }

// Compliance is the compliance a blocked template reports: Pending, or Compliant
// when ignorePending is set so that it does not hold its policy Pending. It is
// empty for an allowed template, whose compliance comes from its policy engine.
func (g Gate) Compliance() policyv1.ComplianceState {
	switch {
	case g.Allowed():
		return ""
	case g.IgnorePending:
		return policyv1.Compliant
	default:
		return policyv1.Pending
	}
}

// Message explains a blocked template in the words of OCM's template sync,
// "Dependencies were not satisfied: 1 is still pending (Policy ns.a)" or "2
// are still pending (ConfigurationPolicy b, Policy ns.a)": each unmet
// dependency once, as kind and name (a namespace is not named), sorted. It
// says which dependencies are unmet, not what they are, so that it stays the
// same, and no new compliance event is written, while a dependency moves
// between no status, Pending and NonCompliant. It is empty for an allowed
// template.
func (g Gate) Message() string {
	if g.Allowed() {
		return ""
	}
	seen := map[Ref]bool{}
	var names []string
	for _, w := range g.Waits {
		if !seen[w.Target] {
			seen[w.Target] = true
			names = append(names, w.Target.Kind+" "+w.Target.Name)
		}
	}
	slices.Sort(names)
	verb := "are"
	if len(names) == 1 {
		verb = "is"
	}
	msg := fmt.Sprintf("Dependencies were not satisfied: %d %s still pending (%s)", len(names), verb, strings.Join(names, ", "))
	if g.IgnorePending {
		msg += " but ignorePending is true"
	}
	return msg
}

// PolicyPending reports whether the gates of a policy's templates make the policy
// Pending: some template is blocked without ignorePending.
func PolicyPending(gates []Gate) bool {
	for _, g := range gates {
		if g.Compliance() == policyv1.Pending {
			return true
		}
	}
	return false
}
