// Package binding resolves where a root Policy is bound and with which
// remediationAction: selective policy enforcement (a binding may enforce, on
// the clusters it selects, a policy that informs elsewhere; see
// examples/api/selective-enforcement.yaml) over PlacementBindings, PolicySets
// and placement decisions. Functions (plan-rollout) and the hub propagator both
// call it; it is pure and reads only its arguments.
//
// # Override spellings
//
// A PlacementBinding may write its override in OCM's spelling
// (bindingOverrides.remediationAction, subFilter: restricted) or in
// fleetpolicy's own (remediationActionOverride{remediationAction, subFilter:
// bool}). Normalize turns either, or both, into one Override{Enforce,
// Restricted}. The only valid override action is enforce, in any
// capitalisation; OCM's subFilter is restricted or unset.
// When both spellings set the same setting they must agree (actions compared
// ignoring case; subFilter true only with restricted, false only without it),
// otherwise Normalize returns a field.ErrorList naming the fields (Resolve names
// the binding with them). These are the
// rules the CRD's CEL validation applies, for objects that never met an API server.
//
// # Resolution rules
//
// Resolve takes the root Policy, the PolicySets and PlacementBindings of its
// namespace and each placement's decisions. A binding binds the policy when a
// subject of API group policy.open-cluster-management.io (Subjects) is the
// Policy by name or a PolicySet (of the same namespace) that lists it. A binding
// whose placementRef pairs a kind with the wrong API group (RefOf: Placement must
// be cluster.open-cluster-management.io, PlacementRule
// apps.open-cluster-management.io) is ignored. Placements names the placements
// of the bindings that bind the policy: the only decisions Resolve reads, so
// callers (the hub, plan-rollout) read those and no others. The hub's binding
// indexes and watches use Subjects and RefOf too, so that every part of
// fleetpolicy agrees on which bindings bind a policy. Then, with P the clusters
// of non-restricted bindings, Q those of non-restricted enforcing bindings and R
// those of restricted enforcing bindings:
//
//   - Bound clusters are P. A restricted binding never binds a cluster.
//   - Enforced clusters are Q ∪ (P ∩ R), plus all of P when the root itself
//     enforces. Enforce wins, and a cluster selected several times is one result.
//     The effective remediationAction is the root's own value when the root
//     enforces or no override applies, and "enforce" otherwise.
//   - Overrides are ignored (nothing is enforced by a binding) when the policy's
//     spec.rolloutStrategy.type is set and is not All; empty means All
//     (OverridesApply). OCM v0.19 has no rollout strategy and always applies
//     them, and says nothing; here each ignored enforce override is listed in
//     Resolution.IgnoredOverrides (binding, field, strategy), so that the hub
//     (the root's BindingOverridesIgnored condition) and plan-rollout (a
//     warning on the binding's field) say so with the same rule. The warning is
//     additive: what is enforced is as without it.
//   - A disabled policy is bound to no cluster, but status.placement still lists
//     its non-restricted bindings, as OCM does.
//   - status.placement has one entry per binding and path: the Policy subject,
//     and each distinct PolicySet subject listing the policy (with policySet set).
//     The placement or placementRule name is always filled, even when the
//     placement has no decisions (OCM leaves it empty when the object is missing).
//     A restricted binding is listed only when one of its clusters is bound.
//   - A cluster selected only by restricted bindings appears nowhere in the
//     result, so never in the root status. OCM's propagator lists such clusters in
//     status.status with an empty compliance, which can turn the root compliant
//     into ""; that is an upstream bug, which this package does not reproduce.
//
// # PolicySet exclusions
//
// A PolicySet's spec.exclusions (OCM's field, on the propagator's main branch
// after v0.19.0) keep a member policy off some clusters for that PolicySet
// path only. A binding binds the policy to a cluster its placement decides
// unless every path through which it binds the policy (its Policy subject, each
// PolicySet subject listing the policy) is a PolicySet that excludes the
// cluster for the policy; another binding, or another path of the same
// binding, still places the policy there. Exclusions apply to restricted
// bindings too: a restricted binding of a set does not enforce a cluster the set
// excludes. Several exclusions naming the policy add up; empty names are skipped.
//
//   - Each status.placement entry with policySet lists that set's excluded
//     clusters for the policy (exclusions[].clusterName), sorted, whether or not
//     the placement decides them, and also for a disabled policy, as OCM does.
//   - A bound cluster that an entry of status.placement excludes has
//     remainingBindings: the non-restricted bindings that still place the policy
//     there, sorted (BoundCluster.RemainingBindings).
//   - A cluster that no path places is not bound, so it is not in status.status.
//     OCM keeps it there with no compliance, which turns the root's compliant
//     into "" whatever the other clusters report; as for restricted-only clusters
//     below, this package does not reproduce that. OCM also leaves out of
//     remainingBindings a binding one of whose paths excludes the cluster even
//     when another path of it places the policy there, and lists restricted
//     bindings in it; here remainingBindings are exactly the bindings that place
//     the policy on the cluster.
//   - Resolution.Excludes says which clusters a placement decides that every
//     binding through it excludes, so that a rollout walks such a cluster in the
//     group of a placement that does place it (package rollout's BoundFleet).
//   - SetExclusions is the set's own status.exclusions; ValidateExclusions is
//     OCM's webhook rule (each policyName in spec.policies, and named once),
//     with its messages, for sets that never met an API server (plan-rollout).
//
// Example 2 of examples/api/selective-enforcement.yaml (a non-restricted
// enforcing binding to placementrule-extended [A,B,E,F] beside the inform binding
// to placementrule-initial [A,B,C,D]) enforces A, B, E and F only: an override
// applies to the clusters its own binding selects, as in OCM; C and D stay
// inform.
//
// # Placement restriction
//
// A policy annotated placement.fleetpolicy.io/clusters (ClustersAnnotation, set by
// the placement policies of package placement) is bound only to the clusters its
// bindings select that the annotation also lists: the annotation narrows, it never
// adds a cluster.
//
// # Root status
//
// Resolution.RootStatus builds status.status and status.compliant from the
// resolution and the compliance observed on the replicas, with the precedence of
// package compliance.
//
// Resolve runs in time linear in the total number of decisions of the bindings that
// bind the policy (map look-ups, no pairwise scans), plus sorting the bound
// clusters.
package binding
