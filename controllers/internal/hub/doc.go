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
// writers per root and a hub-wide bound on the writes in flight
// (ReplicaWritesInFlight: more writes than the API server runs at once lower
// its throughput). A replica write the API server accepted is not made again
// until the cache shows the replica at another version (ownWrites): the
// hub's own events bring a root back while the informer has seen only part
// of its writes. Replica status changes from spokes are batched (one root status write
// per batch window), so a large fleet reporting compliance does not cause one
// reconcile per replica; a reconcile that only such reports brought back, of a
// root whose replicas are all as they should be, writes the root's status and
// skips the replica plan, and after the first such reconcile of an epoch
// resolving the bindings too (settledRoots). A reconcile that finds the cache
// still showing a root as the hub's own last status write replaced it waits
// for the cache (ownWrites) instead of writing over the old root into a
// conflict. All state lives in API objects: a restarted controller recomputes
// and resumes (settledRoots, ownWrites and failureStreaks are only
// shortcuts, always present and empty in a new process: every root starts
// unsettled).
//
// The propagator's files follow one reconcile of a root (see Propagator):
// propagator.go reads the root and hands off to reconcile.go, which calls in
// order invalid.go, bindings.go, rolloutstep.go, replicaplan.go, writes.go
// and status.go; delete.go deletes the replicas of a root that is gone.
// settled.go, ownwrites.go and writefailures.go hold what it remembers of
// each root between reconciles.
//
// Each replica carries its cluster's rollout status (status.rolloutStatus, the
// value of the root's status[] entry), patched on its status subresource only
// when it changes, once the reconcile's spec writes are made (planRolloutStatus;
// the patches in flight are not sent again).
//
// Replicas are written only for decided clusters that have a ManagedCluster
// (the root's ClustersUnknown condition names the others), and a ManagedCluster
// created or deleted enqueues the roots whose placements decided on it. A
// replica write the API server does not take (too large, forbidden, invalid,
// its name held by a Policy that is no replica, a conflict that persists...)
// is named, with the API server's reason, in the root's ReplicasFailed
// condition (bounded whatever the fleet; a failure that may pass by itself
// only once it persists: failureStreaks) until the write succeeds.
//
// Which bindings bind a root (shared/binding: Placements, Subjects, RefOf) and
// the decision groups of its placements (shared/scheduling: GroupOf,
// RuleGroup) are read by the same code as plan-rollout's, so that the live
// waves and a RolloutPlan applied to the hub disagree only when the hub's
// objects differ from the plan's input.
//
// A root that cannot be propagated as written (namespace and name over 62
// characters, a Policy in a ManagedCluster's namespace, a binding or rollout
// strategy in error, a PlacementDecision whose decision-group-index label is
// no index, when the root rolls out by decision group) keeps its replicas as they are and says why in its
// Invalid condition; rollout settings that do not do what they seem to (a
// Progressive maxConcurrency of 0 that enforces everywhere at once) are listed
// in its RolloutWarning condition, and binding enforce overrides its
// rollout strategy ignores in BindingOverridesIgnored (docs/hub-safety.md).
//
// With Options.OpenReports, and only when the API server serves the
// OpenReports Report API, ReportWriter keeps one Report per cluster namespace
// (package shared/policyreport), written only when its results change.
//
// /readyz answers 200 only when the hub can act: every controller it
// registered has synced the caches of what it watches and started its workers
// (controllerStarts), so a write made once it is ready is acted on at once.
// Under leader election that check is left out: every process serves the
// placement webhook, whose engine has a check of its own, and a standby that
// wins the election must not drop out of the webhook's endpoints while its
// caches sync.
//
// /explain and the metrics endpoint authenticate and authorize every caller
// with the API server (controller-runtime's TokenReview and
// SubjectAccessReview filter); /explain bounds the evaluations in flight and
// may bind apart from the admission webhook.
//
// Hub templates ({{hub ... hub}}) are resolved per cluster while a root's
// replicas are planned, before their digests are compared (hubTemplates, over
// shared/templates): with caching resolvers of go-template-utils, one per
// identity (the hub's own; a hubTemplateOptions ServiceAccount's, with tokens
// from the TokenRequest API), each replica a dependency watcher of what its
// templates read, so that a change enqueues its root and only that replica is
// resolved again. A cluster whose templates fail gets no write (its replica
// keeps its last good spec) and is named in the root's HubTemplatesResolved
// condition and a PolicyPropagation Event. Each resolution is bounded
// (Options.TemplateLimits, at most Options.TemplateResolutions at once); a
// root whose templates meet a bound stalls: its other clusters are not tried
// until a backoff ends, and until one of its resolutions succeeds they run
// one at a time (hubTemplates.acquire). KeyRotator creates nothing: it
// rotates the clusters' policy-encryption-key Secrets (the propagator creates
// them) and re-resolves the roots that use encryption after a rotation.
package hub
