package hub

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// ConditionReplicasFailed is the root condition that names the clusters whose
// replica the API server did not take (create, update or delete), each with
// the write, the API server's reason and its message: True while any such
// write fails, removed once every write succeeds. Its reason is the API
// server's reason when every failed write has the same one (Forbidden,
// Invalid, RequestEntityTooLarge, NotFound for a missing cluster namespace,
// AlreadyExists for a Policy of the replica's name that is not the root's
// replica, Conflict, InternalError...), MultipleReasons otherwise.
//
// A refusal (a 4xx answer: the API server decided about this request) is
// named at once; a failure that may pass by itself (a conflict, 429, 5xx, a
// timeout, no answer) only once the cluster's write failed in
// failureStreakReported consecutive reconciles, so that a blip under load
// does not cost the root two status writes. A write refused only because the
// hub's cache was behind (a create of the replica that exists, an update or
// delete of one already gone) is no failure.
const ConditionReplicasFailed = "ReplicasFailed"

// reasonMultipleReasons is the ReplicasFailed reason when the failed writes
// have different reasons.
const reasonMultipleReasons = "MultipleReasons"

// failureStreakReported is how many consecutive reconciles a replica's write
// must fail for a reason that may pass by itself before the root names it.
const failureStreakReported = 3

// failuresShown is how many clusters a ReplicasFailed message names; the
// rest are counted.
const failuresShown = 10

// failureMessageRunes bounds each cluster's error in a ReplicasFailed
// message (an Invalid answer may list many fields).
const failureMessageRunes = 400

// writeFailure is one replica write the API server did not take: of the
// replica in cluster, with verb (create, update or delete).
type writeFailure struct {
	cluster string
	verb    string
	err     error
}

// reason is the API server's reason for the failure (metav1.StatusReason),
// the reason of its status code when the answer names none (etcd's refusal of
// a replica over its request limit is a 500 without one), or "WriteFailed"
// for an error that carries neither (no answer).
func (f writeFailure) reason() string {
	switch r := apierrors.ReasonForError(f.err); {
	case r != metav1.StatusReasonUnknown:
		return string(r)
	case apierrors.IsInternalError(f.err):
		return string(metav1.StatusReasonInternalError)
	case apierrors.IsServiceUnavailable(f.err):
		return string(metav1.StatusReasonServiceUnavailable)
	case apierrors.IsTimeout(f.err):
		return string(metav1.StatusReasonTimeout)
	}
	return "WriteFailed"
}

// refusal reports whether the API server refused the write itself: a 4xx
// answer other than a conflict, a timeout or too many requests. A refusal
// stays until its cause is removed; anything else may pass by itself.
func (f writeFailure) refusal() bool {
	var status apierrors.APIStatus
	if !errors.As(f.err, &status) {
		return false
	}
	if code := status.Status().Code; code < 400 || code >= 500 {
		return false
	}
	return !apierrors.IsConflict(f.err) && !apierrors.IsTooManyRequests(f.err) &&
		!apierrors.IsTimeout(f.err) && !apierrors.IsUnauthorized(f.err)
}

// failureStreaks counts, per root and cluster, the consecutive reconciles
// whose write of the replica failed for a reason that may pass by itself.
// Only roots with such a failure have an entry; a reconcile without one
// touches nothing but a map lookup.
type failureStreaks struct {
	mu     sync.Mutex
	byRoot map[types.NamespacedName]map[string]int
}

func newFailureStreaks() *failureStreaks {
	return &failureStreaks{byRoot: map[types.NamespacedName]map[string]int{}}
}

// reported takes the failures of one full reconcile of root (every replica
// that is not as it should be was written, or is in flight) and returns those
// the root names: every refusal, and every other failure of a cluster whose
// write has now failed failureStreakReported times in a row. A cluster
// without such a failure in this reconcile starts again from zero. failures
// is reordered.
func (s *failureStreaks) reported(root types.NamespacedName, failures []writeFailure) []writeFailure {
	s.mu.Lock()
	defer s.mu.Unlock()
	was := s.byRoot[root]
	if was == nil && len(failures) == 0 {
		return nil
	}
	var now map[string]int
	out := failures[:0]
	for _, f := range failures {
		if f.refusal() {
			out = append(out, f)
			continue
		}
		if now == nil {
			now = map[string]int{}
		}
		streak := was[f.cluster] + 1
		now[f.cluster] = streak
		if streak >= failureStreakReported {
			out = append(out, f)
		}
	}
	if now == nil {
		delete(s.byRoot, root)
	} else {
		s.byRoot[root] = now
	}
	return out
}

// forget drops what is known of a root that is gone.
func (s *failureStreaks) forget(root types.NamespacedName) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byRoot, root)
}

// replicasFailedCondition is root's ReplicasFailed condition for the failed
// writes it names, out of the clusters it is replicated to; nil when there is
// none. The message names the first failuresShown clusters in order, each
// with its write, reason and message, and counts the rest, so that its length
// is bounded whatever the fleet. failures is sorted by cluster (writeReplicas
// sorts them already; then this costs one pass).
func replicasFailedCondition(root *policyv1.Policy, failures []writeFailure, clusters int) *metav1.Condition {
	if len(failures) == 0 {
		return nil
	}
	sortByCluster(failures)
	reason := failures[0].reason()
	lines := make([]string, 0, min(len(failures), failuresShown)+1)
	for i, f := range failures {
		if f.reason() != reason {
			reason = reasonMultipleReasons
		}
		if i < failuresShown {
			lines = append(lines, fmt.Sprintf("%s (%s, %s): %s", f.cluster, f.verb, f.reason(), truncateRunes(f.err.Error(), failureMessageRunes)))
		}
	}
	if len(failures) > failuresShown {
		lines = append(lines, fmt.Sprintf("and %d more", len(failures)-failuresShown))
	}
	return &metav1.Condition{Type: ConditionReplicasFailed, Status: metav1.ConditionTrue,
		ObservedGeneration: root.Generation, Reason: reason,
		Message: fmt.Sprintf("the API server did not take the replica of %d of %d cluster(s): %s",
			len(failures), max(clusters, len(failures)), strings.Join(lines, "; "))}
}

// notWritten returns the clusters of failures whose replica was not created
// or updated (a failed delete leaves no replica the root wants), in order,
// the first failuresShown of them, and how many there are.
func notWritten(failures []writeFailure) (shown []string, n int) {
	for _, f := range failures {
		if f.verb == verbDelete {
			continue
		}
		if n < failuresShown {
			shown = append(shown, f.cluster)
		}
		n++
	}
	return shown, n
}

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}

// sortByCluster orders failures by cluster: the writers finish in any order,
// and the conditions that name them must not change (and be written again)
// with it.
func sortByCluster(failures []writeFailure) {
	slices.SortFunc(failures, func(a, b writeFailure) int { return cmp.Compare(a.cluster, b.cluster) })
}
