// Package hub is the hub controller: a thin adapter that reads root Policies,
// PolicySets, PlacementBindings and placement decisions from the hub API server,
// asks shared/binding where each root policy is bound and with which
// remediationAction, asks shared/replication for each replica, and writes the
// difference: replicas created, updated (drift reverted) or deleted, and the root
// and PolicySet status.
//
// The unit of work is a root policy. A change to a PlacementDecision,
// PlacementRule, PlacementBinding, PolicySet or Policy enqueues only the root
// policies it can affect; reconciling a root computes its bindings in memory from
// the informer cache and writes only the (policy, cluster) replicas whose desired
// state differs from what the cache holds, with a bounded pool of concurrent
// writers. Replica status changes from spokes are batched (one root status write
// per batch window), so a large fleet reporting compliance does not cause one
// reconcile per replica. All state lives in API objects: a restarted controller
// recomputes and resumes.
//
// Replicas are written only for decided clusters that have a ManagedCluster
// (the root's ClustersUnknown condition names the others), and a ManagedCluster
// created or deleted enqueues the roots whose placements decided on it.
package hub
