// Package compliance aggregates compliance states into the compliance of a whole,
// with the precedence OCM's governance propagator uses:
//
//	NonCompliant > Pending > unknown > Compliant
//
// where unknown is the empty state or any value other than Compliant, Pending and
// NonCompliant. A whole with no parts has the empty state.
//
// Contract:
//   - Aggregate folds any list of states (a root policy's per-cluster states, for
//     instance) into one.
//   - OfTemplate maps a template's own status.compliant onto the states a
//     Policy holds: Compliant, Pending and NonCompliant in any case are those
//     states; any other value but the empty state (OCM's Terminating) is
//     NonCompliant.
//   - PolicySet gives a PolicySet's compliant from its member policies' root
//     compliant, as OCM's propagator shows it. Members that are disabled, or that
//     are not in the given policies (missing), are skipped; while any other member
//     has no compliance yet the set shows none (even beside a NonCompliant one);
//     otherwise NonCompliant > Pending > Compliant. PolicySetMessage is the set's
//     statusMessage in OCM's words (pending, disabled, without status, deleted
//     members). Both read each member's aggregated compliant; they do not, as
//     OCM does, restrict the members to the clusters the set's own bindings
//     select.
//
// The package is pure: it reads only its arguments.
package compliance
