// Package templatewatch resolves managed-cluster templates ({{ ... }}) of a
// policy with OCM's library (go-template-utils v7, caching mode) and watches
// what they read with kubernetes-dependency-watches, as OCM's
// config-policy-controller does: every object or list a policy's templates
// read during one evaluation (one query batch) is watched, the watches it no
// longer reads are dropped at the end of the batch, and a change of a watched
// object sends a reconcile request for the policy through Source, a
// controller-runtime source.
//
// A Resolver is a manager Runnable (its watcher runs while the manager does);
// each controller that resolves templates has its own, so that Source only
// names the kind that controller reconciles. Get and List read objects
// through the same watcher during a batch, so that a policy evaluated by watch
// is evaluated again when what it evaluates changes; Direct resolves without
// watching, for a policy that is not. Forget drops a policy's watches (when
// it is deleted, or no longer evaluated by watch). Every resolution of a
// batch, or of Direct, is bounded (templates.Bound): the evaluation shares one
// deadline of the Resolver's Limits.Timeout, each object definition has its
// memory budget. The rules of resolution (context, decryption, skipObject,
// error messages, bounds) are shared/templates'.
//
// The watcher is one kubernetes-dependency-watches watcher per worker of the
// controller (New's shards), each watched object or list on one of them by
// its identity, so that it is watched and cached once whoever reads it; what
// is per policy (its query batch, Forget) goes to all. One watcher holds its
// lock across the List and Watch that start a new watch, which made every
// worker's first evaluations wait for each other's requests. The shards share
// one client-side rate limit.
package templatewatch
