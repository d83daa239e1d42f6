package hub

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// replicasInFlight remembers the replica writes the API server accepted and
// the informer cache has not brought back yet, per root and cluster, so that
// a reconcile does not write them again.
//
// A root's own replica writes come back as watch events, and each enqueues
// the root: its next reconcile runs while the cache has seen only some of
// them. Without this it created the others again (refused as AlreadyExists)
// and updated them again over the old resourceVersion (refused as
// conflicts): at 20 roots × 1,000 clusters, one create in six was such a
// write, each one the API server decodes and stores nothing of. A write is
// in flight from its acceptance until the cache shows the replica at another
// version than the one the write replaced (or gone, for a delete), or for at
// most inFlightTimeout: a write whose event never comes is then made again.
// The timeout is long because under load the hub's informer falls far
// behind its own writes: at 20 × 1,000 replicas created in 45 s it was more
// than 10 s behind at the end, and at 100 × 1,000 (four minutes of creates)
// more than a minute, and each shorter timeout had the roots create again
// nearly every replica the cache had not shown yet. An event that is due
// always comes (a relist delivers what a broken watch missed), so the
// timeout only bounds what a lost one would cost. An entry whose event came before the write's
// answer stays until a plan considers its replica again or its root is gone:
// there is at most one entry per replica.
type replicasInFlight struct {
	mu     sync.Mutex
	byRoot map[types.NamespacedName]map[string]inFlightWrite
	// statuses are the replicas' rollout status patches in flight.
	statuses *rolloutStatusesInFlight
}

// inFlightWrite is an accepted write of one replica: the resourceVersion of
// the replica it replaced ("" for a create), and when it was accepted.
type inFlightWrite struct {
	replaced string
	at       time.Time
}

// inFlightTimeout bounds how long an accepted write waits for its watch event.
const inFlightTimeout = 5 * time.Minute

func newReplicasInFlight() *replicasInFlight {
	return &replicasInFlight{byRoot: map[types.NamespacedName]map[string]inFlightWrite{}, statuses: newRolloutStatusesInFlight()}
}

// wrote records that the API server accepted a write of root's replica in
// cluster over the replica at resourceVersion replaced ("" for a create).
func (r *replicasInFlight) wrote(root types.NamespacedName, cluster, replaced string, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	writes := r.byRoot[root]
	if writes == nil {
		writes = map[string]inFlightWrite{}
		r.byRoot[root] = writes
	}
	writes[cluster] = inFlightWrite{replaced: replaced, at: now}
}

// pending reports whether a write of root's replica in cluster, cached at
// resourceVersion cached ("" when the cache has none), is still in flight at
// now: the cache shows what the write replaced.
func (r *replicasInFlight) pending(root types.NamespacedName, cluster, cached string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	w, ok := r.byRoot[root][cluster]
	if !ok {
		return false
	}
	if w.replaced == cached && now.Sub(w.at) < inFlightTimeout {
		return true
	}
	r.drop(root, cluster)
	return false
}

// seen takes a watch event of a replica (deleted: a delete event): the cache
// now shows it at its resourceVersion, or not at all. A write in flight is
// over once the replica is at another version than the one it replaced, or
// gone.
func (r *replicasInFlight) seen(replica client.Object, deleted bool) {
	root, ok := replication.RootOf(replica)
	if !ok {
		return
	}
	if policy, ok := replica.(*policyv1.Policy); ok {
		r.statuses.seenReplica(policy, deleted)
	}
	cluster := replica.GetNamespace()
	r.mu.Lock()
	defer r.mu.Unlock()
	if w, ok := r.byRoot[root][cluster]; ok && (deleted || w.replaced != replica.GetResourceVersion()) {
		r.drop(root, cluster)
	}
}

// forget drops the writes of a root that is gone.
func (r *replicasInFlight) forget(root types.NamespacedName) {
	r.statuses.forget(root)
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.byRoot, root)
}

// statusWrote records an accepted rollout status patch of root's replica in
// cluster; r may be nil (nothing is remembered).
func (r *replicasInFlight) statusWrote(root types.NamespacedName, cluster string, status policyv1.RolloutStatus, now time.Time) {
	if r != nil {
		r.statuses.wrote(root, cluster, status, now)
	}
}

// statusPending reports whether a patch of status for root's replica in
// cluster is in flight; never with a nil r.
func (r *replicasInFlight) statusPending(root types.NamespacedName, cluster string, status policyv1.RolloutStatus, now time.Time) bool {
	return r != nil && r.statuses.pending(root, cluster, status, now)
}

// statusSeen ends a rollout status patch the cache shows; r may be nil.
func (r *replicasInFlight) statusSeen(root types.NamespacedName, cluster string, status policyv1.RolloutStatus) {
	if r != nil {
		r.statuses.seen(root, cluster, status)
	}
}

// drop ends one write; r.mu is held.
func (r *replicasInFlight) drop(root types.NamespacedName, cluster string) {
	delete(r.byRoot[root], cluster)
	if len(r.byRoot[root]) == 0 {
		delete(r.byRoot, root)
	}
}
