package hub

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// statusWrites remembers, per root policy, the version of the root that the
// propagator's last accepted status write replaced, so that a reconcile can
// tell when the informer cache has not yet brought that write back.
//
// Such a reconcile would compute the root's status over the old one (whose
// rollout progress the step reads back) and write it with the old
// resourceVersion: the API server refuses the write as a conflict only after
// it has taken in the whole status (600 KB at 3,000 clusters), and the changes
// the write carried wait for another round. Under continuous compliance churn
// one status write in ten met this. The reconcile waits for the cache instead
// (cacheCatchUp), for at most ownWriteTimeout after the write: a write whose
// watch event never comes then meets the conflict as before. The bound is
// long for the reason replicasInFlight's is: at 100 × 1,000 replicas the
// informer fell more than a minute behind, and with a 2 s bound 440 root
// status writes met a conflict.
type statusWrites struct {
	mu      sync.Mutex
	replace map[types.NamespacedName]statusWrite
}

// statusWrite is a status write the API server accepted: it replaced the
// root of uid at resourceVersion, at the time at.
type statusWrite struct {
	uid             types.UID
	resourceVersion string
	at              time.Time
}

// cacheCatchUp is how long a reconcile that found the cache behind the
// propagator's own status write, accepted age ago, waits before it looks
// again: a quarter of the age, from 20 ms to 1 s, so that a cache a minute
// behind is not asked fifty times a second.
func cacheCatchUp(age time.Duration) time.Duration {
	return min(max(age/4, 20*time.Millisecond), time.Second)
}

// ownWriteTimeout bounds the wait for the cache to bring a status write back.
const ownWriteTimeout = 5 * time.Minute

func newStatusWrites() *statusWrites {
	return &statusWrites{replace: map[types.NamespacedName]statusWrite{}}
}

// wrote records that a status write over root, as read from the cache, was
// accepted at now.
func (s *statusWrites) wrote(root *policyv1.Policy, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replace[client.ObjectKeyFromObject(root)] = statusWrite{uid: root.UID, resourceVersion: root.ResourceVersion, at: now}
}

// behind reports whether root, as the cache has it at now, is still the
// version the last accepted status write replaced (and the write is younger
// than ownWriteTimeout), and how long ago that write was accepted. Once the
// cache has moved on, or the wait timed out, the write is forgotten.
func (s *statusWrites) behind(root *policyv1.Policy, now time.Time) (bool, time.Duration) {
	key := client.ObjectKeyFromObject(root)
	s.mu.Lock()
	defer s.mu.Unlock()
	w, ok := s.replace[key]
	if !ok {
		return false, 0
	}
	if age := now.Sub(w.at); w.uid == root.UID && w.resourceVersion == root.ResourceVersion && age < ownWriteTimeout {
		return true, age
	}
	delete(s.replace, key)
	return false, 0
}

// forget drops what is known of a root that is gone.
func (s *statusWrites) forget(root types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.replace, root)
}
