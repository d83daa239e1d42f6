// Package scheduling computes, offline, the PlacementDecisions OCM's placement
// scheduler (open-cluster-management.io/ocm v1.2.0,
// pkg/placement/controllers/scheduling) would write for a Placement on a hub
// whose ManagedClusters are given, and reads the decision groups PlacementDecisions
// carry. The plan-rollout KRM function uses it when a package holds
// ManagedClusters rather than PlacementDecisions exported from a hub. It is pure:
// the time (for tolerationSeconds) is the caller's.
//
// # Schedule
//
// Schedule takes one Placement, the hub's ManagedClusters and, optionally, its
// ManagedClusterSets and ManagedClusterSetBindings, and returns the
// PlacementDecisions and the placement's status.decisionGroups.
//
// Eligible clusters. With the cluster-set objects given (ClusterSetBindingsKnown),
// OCM's rule: the sets bound to the placement's namespace by a
// ManagedClusterSetBinding whose ManagedClusterSet exists, narrowed to
// spec.clusterSets when that is not empty; a set's clusters are those its
// spec.clusterSelector selects (ExclusiveClusterSetLabel, the default: label
// cluster.open-cluster-management.io/clusterset=<set>; LabelSelector: that
// selector). Without them, every set is assumed bound and to exist: the sets are
// spec.clusterSets, or the global set when it is empty; a set that is not given
// is OCM's default for its name (global selects every cluster, any other name
// the exclusive label). Clusters being deleted are never eligible.
//
// Filters, as OCM's predicate and tainttoleration plugins:
//   - predicates are ORed; within one, labelSelector and claimSelector
//     (matchExpressions over status.clusterClaims by name) are ANDed; no
//     predicate selects every eligible cluster. celSelector is not evaluated
//     offline: it is an error (export the hub's PlacementDecisions instead).
//   - a taint of effect NoSelect or NoSelectIfNew excludes the cluster unless a
//     toleration matches it (effect empty or equal, key empty or equal, operator
//     Exists, or Equal/empty with an equal value) and, with tolerationSeconds,
//     now is before the taint's timeAdded plus those seconds. The schedule is a
//     fresh one (no earlier decisions), so NoSelectIfNew is never waived.
//     PreferNoSelect never excludes.
//
// Selection: clusters are sorted by score, then name, and the first
// numberOfClusters are taken (all when unset). Offline every score is equal (a
// fresh hub: Balance and Steady score every cluster alike), so this is name
// order; when numberOfClusters leaves clusters out, a note says that the hub's
// prioritizers may choose others.
//
// Decision groups (reference propagator.md §7), over the selected clusters:
//  1. The group length is clustersPerDecisionGroup: an integer, or a percentage
//     of the selected clusters rounded up; a length that is not in 1..total is
//     the total.
//  2. Each spec.decisionStrategy.groupStrategy.decisionGroups[i], in order, takes
//     the clusters not yet grouped that its groupClusterSelector (label and
//     claim selectors) matches; the matches, sorted by name, are cut into groups
//     of the group length, all named groupName.
//  3. The clusters left over, sorted and cut the same way, form groups named "".
//  4. With no cluster selected there is one empty group.
//  5. Groups are indexed 0..n-1 in that order.
//  6. Each group is written as PlacementDecisions of at most 100 decisions,
//     named <placement>-decision-<k> with k counting from 1 across all groups,
//     labelled cluster.open-cluster-management.io/placement,
//     decision-group-name and decision-group-index (an empty group still gets
//     one PlacementDecision). Reasons and scores are empty, and there is no
//     ownerReference (the decisions are computed, never applied).
//
// Errors are what the CRD or OCM's scheduler rejects, each naming its field under
// the Placement (all at once): a label or claim selector that does not parse, a
// celSelector, a negative numberOfClusters, a toleration with an empty key and an
// operator other than Exists or with Exists and a value, a decision group whose
// groupName does not match the CRD's pattern, a clustersPerDecisionGroup that
// does not match ^((100|[1-9][0-9]{0,1})%|[1-9][0-9]*)$ when a string or is
// digits in a string (OCM's scheduler refuses them), a ManagedClusterSet of an
// unknown selectorType (named under spec.clusterSets).
//
// # Decision groups of PlacementDecisions and PlacementRules
//
// GroupOf reads the decision group one PlacementDecision carries, from its labels
// and status.decisions, as OCM's PlacementDecisionClustersTracker (sdk-go) does,
// and RuleGroup the one group of a PlacementRule's status.decisions. The hub and
// plan-rollout both read decisions through them, so that the hub's live waves and
// the RolloutPlan plan-rollout writes rest on the same groups. The rules:
//   - A missing decision-group-index label is group 0: OCM's propagator binds
//     such decisions' clusters, and hand-written PlacementDecisions often lack
//     the label.
//   - A decision-group-index that is not a whole number from 0 is an error
//     naming the label (the tracker's "incorrect group index"; a negative index
//     would make OCM's rollout library skip the group silently), returned with
//     the decision read as group 0: OCM's propagator binds its clusters, and
//     only a rollout that orders clusters by group (rollout.UsesGroupIndexes)
//     must refuse it.
//   - A decision with an empty clusterName is skipped: OCM's API documents an
//     empty ClusterDecision as not scheduled yet; it names no cluster.
//
// Package rollout merges the groups of several PlacementDecisions.
//
// # PlacementRule decisions
//
// PlacementRuleDecisions is the status.decisions OCM's PlacementRule controller
// (multicloud-operators-subscription v0.16.0) writes, from the rule's spec, its
// current decisions and the hub's ManagedClusters. SchedulesPlacementRule says
// whether the hub writes them at all: only for spec.schedulerName empty,
// "default" or "mcm".
//   - clusterReplicas of 0 or less decides on no cluster.
//   - spec.clusters selects clusters whose "name" label is one of the names
//     (OCM's rule; a cluster without that label is matched by its name, for hubs
//     without ACM's import controller); otherwise spec.clusterSelector (unset:
//     every cluster). Clusters being deleted are never selected.
//   - clusterConditions excludes a cluster that has a condition of a listed type
//     with another status; a cluster without the condition stays.
//   - policies selects nothing, as in OCM.
//   - With resourceHint, clusters are ordered by allocatable cpu or memory
//     (descending unless order is "asc"; ties, and any other type, by name) and
//     the first clusterReplicas are taken, in that order. Without it, the
//     earlier decisions still selected are kept first, then clusters in name
//     order, up to clusterReplicas, and the decisions are sorted by name.
//
// Every decision's clusterNamespace is the cluster's name.
//
// Schedule runs in O(g·n + n log n) for n clusters and g decision groups.
//
// controllers/internal/schedulingtest runs OCM's placement controller itself
// against a local API server and checks that, for Placements with cluster
// sets, label and claim predicates, taints and tolerations and decision groups
// by selector, count and percentage, its PlacementDecisions and decision
// groups are Schedule's.
package scheduling
