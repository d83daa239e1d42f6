// Package view computes what the console's pages show from the objects a
// viewer may read: pure functions of their arguments (the time is the
// caller's), no I/O, so that the ordering, the counts and the rollout timeline
// are tested by table tests and the HTTP handlers only read and render.
//
//   - Fleet turns root Policies and PolicySets into the fleet page: policies
//     and clusters worst first (NonCompliant, then Pending, then no report,
//     then Compliant; ties by how many clusters are non-compliant, then by
//     name), the number of policies in each state per OCM annotation
//     (policy.open-cluster-management.io/standards, categories, controls; a
//     comma-separated list, each value counted once) and per PolicySet
//     (namespace/name).
//   - PolicyClusters is a root's per-cluster lines worst first; Page cuts a
//     list into pages of a bounded size.
//   - Timeline is a rollout's model: the RolloutPlan's waves (when one was
//     applied to the hub) with each cluster's live rolloutStatus from the root
//     status (and, where the hub writes it, a replica's status.rolloutStatus),
//     what holds the next wave back, time to compliant, and the plan's clusters
//     the live rollout does not have and the reverse (drift). SVG draws it as a
//     server-side chart.
//   - Table is one table of any page in a form CSV and JSON export write.
package view
