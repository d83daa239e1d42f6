package hub

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// ownWrites remembers the propagator's own writes that the API server
// accepted and the informer cache has not brought back yet, so that a
// reconcile in between neither makes them again nor writes over what they
// replaced. There are three kinds, each per root policy:
//
//   - A replica's spec write (create, update, delete), per cluster. A root's
//     own replica writes come back as watch events, and each enqueues the
//     root: its next reconcile runs while the cache has seen only some of
//     them. Without this it created the others again (refused as
//     AlreadyExists) and updated them again over the old resourceVersion
//     (refused as conflicts): at 20 roots × 1,000 clusters, one create in six
//     was such a write, each one the API server decodes and stores nothing
//     of. The write is in flight until the cache shows the replica at another
//     version than the one the write replaced (or gone, for a delete).
//   - A replica's rollout status patch (planRolloutStatus), per cluster: in
//     flight, for that status only, until the cache shows the replica with it
//     (or gone).
//   - The root's status write: the reconcile that finds the cache still
//     showing the root at the version the write replaced would compute the
//     root's status over the old one (whose rollout progress the step reads
//     back) and write it with the old resourceVersion; the API server refuses
//     it as a conflict only after it has taken in the whole status (600 KB at
//     3,000 clusters). Under continuous compliance churn one status write in
//     ten met this. The reconcile waits for the cache instead (cacheCatchUp).
//
// Every write is in flight for at most ownWriteTimeout: one whose event never
// comes is then made again (or meets the conflict as before). The bound is
// long because under load the hub's informer falls far behind its own writes:
// at 20 × 1,000 replicas created in 45 s it was more than 10 s behind at the
// end, and at 100 × 1,000 (four minutes of creates) more than a minute; each
// shorter bound had the roots create again nearly every replica the cache had
// not shown yet, and with a 2 s bound 440 root status writes met a conflict.
// An event that is due always comes (a relist delivers what a broken watch
// missed), so the bound only limits what a lost one would cost. An entry
// whose event came before the write's answer stays until a reconcile
// considers it again or its root is gone: there is at most one entry of each
// kind per replica and per root.
type ownWrites struct {
	mu sync.Mutex
	// specWrites are the accepted spec writes of replicas, each with the
	// resourceVersion of the replica it replaced ("" for a create).
	specWrites perRootCluster[string]
	// rolloutStatuses are the accepted rollout status patches of replicas,
	// each with the status it set.
	rolloutStatuses perRootCluster[policyv1.RolloutStatus]
	// rootStatuses are the accepted status writes of roots.
	rootStatuses map[types.NamespacedName]acceptedRootStatus
}

// acceptedRootStatus is an accepted status write of a root: it replaced the
// root of uid at resourceVersion, at the time at.
type acceptedRootStatus struct {
	uid             types.UID
	resourceVersion string
	at              time.Time
}

// ownWriteTimeout bounds how long an accepted write waits for its watch event.
const ownWriteTimeout = 5 * time.Minute

// cacheCatchUp is how long a reconcile that found the cache behind the
// propagator's own status write, accepted age ago, waits before it looks
// again: a quarter of the age, from 20 ms to 1 s, so that a cache a minute
// behind is not asked fifty times a second.
func cacheCatchUp(age time.Duration) time.Duration {
	return min(max(age/4, 20*time.Millisecond), time.Second)
}

func newOwnWrites() *ownWrites {
	return &ownWrites{specWrites: perRootCluster[string]{}, rolloutStatuses: perRootCluster[policyv1.RolloutStatus]{},
		rootStatuses: map[types.NamespacedName]acceptedRootStatus{}}
}

// specWrote records that the API server accepted a write of root's replica
// in cluster over the replica at resourceVersion replaced ("" for a create).
func (o *ownWrites) specWrote(root types.NamespacedName, cluster, replaced string, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.specWrites.set(root, cluster, replaced, now)
}

// specPending reports whether a write of root's replica in cluster, cached
// at resourceVersion cached ("" when the cache has none), is still in flight
// at now: the cache shows what the write replaced.
func (o *ownWrites) specPending(root types.NamespacedName, cluster, cached string, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.specWrites.pending(root, cluster, cached, now)
}

// rolloutStatusWrote records an accepted rollout status patch of root's
// replica in cluster.
func (o *ownWrites) rolloutStatusWrote(root types.NamespacedName, cluster string, status policyv1.RolloutStatus, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rolloutStatuses.set(root, cluster, status, now)
}

// rolloutStatusPending reports whether a patch of status for root's replica
// in cluster is in flight at now.
func (o *ownWrites) rolloutStatusPending(root types.NamespacedName, cluster string, status policyv1.RolloutStatus, now time.Time) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.rolloutStatuses.pending(root, cluster, status, now)
}

// rolloutStatusSeen ends the patch of root's replica in cluster once the
// replica shows status (a watch event, or a cache read).
func (o *ownWrites) rolloutStatusSeen(root types.NamespacedName, cluster string, status policyv1.RolloutStatus) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.rolloutStatuses[root][cluster]; ok && w.write == status {
		o.rolloutStatuses.drop(root, cluster)
	}
}

// seen takes a watch event of a replica (deleted: a delete event): the cache
// now shows it at its resourceVersion, with its rollout status, or not at
// all. A spec write in flight is over once the replica is at another version
// than the one it replaced, or gone; a rollout status patch once the replica
// shows its status, or is gone.
func (o *ownWrites) seen(replica client.Object, deleted bool) {
	root, ok := replication.RootOf(replica)
	if !ok {
		return
	}
	cluster := replica.GetNamespace()
	o.mu.Lock()
	defer o.mu.Unlock()
	if w, ok := o.specWrites[root][cluster]; ok && (deleted || w.write != replica.GetResourceVersion()) {
		o.specWrites.drop(root, cluster)
	}
	policy, ok := replica.(*policyv1.Policy)
	if !ok {
		return
	}
	if w, ok := o.rolloutStatuses[root][cluster]; ok && (deleted || w.write == policy.Status.RolloutStatus) {
		o.rolloutStatuses.drop(root, cluster)
	}
}

// rootStatusWrote records that a status write over root, as read from the
// cache, was accepted at now.
func (o *ownWrites) rootStatusWrote(root *policyv1.Policy, now time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rootStatuses[client.ObjectKeyFromObject(root)] = acceptedRootStatus{uid: root.UID, resourceVersion: root.ResourceVersion, at: now}
}

// rootStatusBehind reports whether root, as the cache has it at now, is still
// the version the last accepted status write replaced (and the write is
// younger than ownWriteTimeout), and how long ago that write was accepted.
// Once the cache has moved on, or the wait timed out, the write is forgotten.
func (o *ownWrites) rootStatusBehind(root *policyv1.Policy, now time.Time) (bool, time.Duration) {
	key := client.ObjectKeyFromObject(root)
	o.mu.Lock()
	defer o.mu.Unlock()
	w, ok := o.rootStatuses[key]
	if !ok {
		return false, 0
	}
	if age := now.Sub(w.at); w.uid == root.UID && w.resourceVersion == root.ResourceVersion && age < ownWriteTimeout {
		return true, age
	}
	delete(o.rootStatuses, key)
	return false, 0
}

// forget drops the writes of a root that is gone.
func (o *ownWrites) forget(root types.NamespacedName) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.specWrites, root)
	delete(o.rolloutStatuses, root)
	delete(o.rootStatuses, root)
}

// perRootCluster holds one accepted write per root and cluster: what it
// wrote (or replaced), and when.
type perRootCluster[T comparable] map[types.NamespacedName]map[string]accepted[T]

// accepted is a write the API server accepted at the time at.
type accepted[T comparable] struct {
	write T
	at    time.Time
}

func (m perRootCluster[T]) set(root types.NamespacedName, cluster string, write T, now time.Time) {
	byCluster := m[root]
	if byCluster == nil {
		byCluster = map[string]accepted[T]{}
		m[root] = byCluster
	}
	byCluster[cluster] = accepted[T]{write: write, at: now}
}

// pending reports whether the write of root's replica in cluster is write and
// younger than ownWriteTimeout at now; any other is dropped.
func (m perRootCluster[T]) pending(root types.NamespacedName, cluster string, write T, now time.Time) bool {
	w, ok := m[root][cluster]
	if !ok {
		return false
	}
	if w.write == write && now.Sub(w.at) < ownWriteTimeout {
		return true
	}
	m.drop(root, cluster)
	return false
}

// drop removes the entry of root in cluster, and root once it has none.
func (m perRootCluster[T]) drop(root types.NamespacedName, cluster string) {
	delete(m[root], cluster)
	if len(m[root]) == 0 {
		delete(m, root)
	}
}
