// Package dependency is the policy-template ordering algorithm
// (spec.dependencies and extraDependencies, examples/api/dependencies.yaml):
// which objects a policy template waits for, whether it may be applied now, and
// whether the waits of a set of policies can ever be satisfied.
//
// Contract:
//
//   - Dependencies of a template are the union of its policy's spec.dependencies
//     and the template's extraDependencies (Requirements). The same target asked
//     for in two different states is an Issue; the policy-level one wins.
//   - Dependencies are canonicalised as the OCM hub does when it replicates a
//     policy (Canonicalize): a Policy dependency becomes the replicated name
//     "<namespace>.<name>" with an empty namespace (the namespace defaults to the
//     depending policy's; a name that already contains "." is kept as written);
//     a PolicySet dependency becomes one Policy dependency per member of the set,
//     or is kept as written when the set is unknown. Targets are then compared
//     as the managed cluster does (TargetOf): kinds of the policy group whose
//     name ends in "Policy" live in the cluster namespace, so their namespace is
//     not part of their identity.
//   - Evaluate decides whether a template may be applied, given what the caller
//     observed of each dependency (the object may be missing, or lack the status
//     field). It never reads the world itself.
//   - Build turns Policies and PolicySets into a graph whose edges read "waits
//     for": a template waits for its dependencies, a Policy waits for its
//     templates (except those with ignorePending, which cannot hold it Pending),
//     a PolicySet waits for its members. On that graph it reports
//     self-dependencies, dependencies on objects outside the graph, its
//     elementary cycles, and an apply order. Cycles takes time linear in the
//     size of the graph whatever its shape (chains, rings, dense groups): it
//     names every strongly connected group by at least one cycle, and lists
//     every elementary cycle (up to MaxCycles) while that stays within a few
//     passes over the graph. A cycle's Path names at most MaxPathNodes
//     objects and counts the others.
//   - CycleThrough finds the cycle through one policy of a managed cluster's
//     namespace (where policies carry their replicated names), reading through
//     the reads it is given only the policies that policy reaches, and the
//     whole namespace once only when a dependency names a template, whose
//     policy it then looks up by the template's identity.
//   - Every result is deterministic: ties are broken by the order in which
//     objects were given to Build, never by map iteration.
//   - Nothing here panics on malformed input: problems are returned as Issues
//     naming the policy and the field (e.g.
//     spec.policy-templates[1].extraDependencies[0].compliance).
package dependency
