package hub

import (
	"sync"
	"time"
	"unique"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/rollout"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// cachedDigestAnnotation holds, in the hub's informer cache only, the digest of
// a replica's spec, labels and annotations (replication.Digest). It is never
// written to the API server.
const cachedDigestAnnotation = "fleetpolicy.io/cached-digest"

// cachedEvaluatedAtAnnotation holds, in the hub's informer cache only, when the
// spoke had last evaluated every template of a replica according to the
// templates' compliance history (rollout.EvaluatedAt, RFC 3339 with
// nanoseconds): what tells an OCM add-on's report, which carries no
// observedGeneration, current or stale. It is never written to the API server.
const cachedEvaluatedAtAnnotation = "fleetpolicy.io/cached-evaluated-at"

// slimPolicies is the cache transform for Policies. Managed fields are dropped
// from every Policy. A replica is reduced to what the hub reads back: its
// metadata with the digest of what the hub owns (replication.Digest: spec,
// labels and annotations), its hub templates' IV and the time of its last
// evaluation (from the status details' history) in place of its annotations,
// only the root-policy label of its labels (sharedRootLabels), its
// remediationAction, its compliance with the generation it was evaluated at,
// and the rolloutStatus the hub patched on it (planRolloutStatus compares it
// with the step's). Desired replicas are compared with the digest. At
// thousands of clusters the templates, status details, history and each
// replica's own labels would otherwise dominate the hub's memory.
func slimPolicies(obj any) (any, error) {
	p, ok := obj.(*policyv1.Policy)
	if !ok {
		return obj, nil
	}
	p.ManagedFields = nil
	if !replication.IsReplica(p) {
		return p, nil
	}
	if _, slimmed := p.Annotations[cachedDigestAnnotation]; slimmed {
		// The informer may hand the same object to the transform again (its
		// initial list does): the digest is of the full replica, keep it.
		return p, nil
	}
	annotations := map[string]string{cachedDigestAnnotation: replication.Digest(p)}
	if iv, ok := p.Annotations[templates.IVAnnotation]; ok {
		// Kept: a replica's encrypted values keep their IV while it is valid,
		// and the key rotation finds the replicas that use encryption by it.
		annotations[templates.IVAnnotation] = iv
	}
	if at := rollout.EvaluatedAt(len(p.Spec.PolicyTemplates), p.Status.Details); !at.IsZero() {
		annotations[cachedEvaluatedAtAnnotation] = at.UTC().Format(time.RFC3339Nano)
	}
	p.Annotations = annotations
	p.Labels = sharedRootLabels.of(p.Labels[replication.LabelRootPolicy])
	p.Spec = policyv1.PolicySpec{RemediationAction: p.Spec.RemediationAction, Disabled: p.Spec.Disabled}
	p.Status = policyv1.PolicyStatus{ComplianceState: p.Status.ComplianceState, ObservedGeneration: p.Status.ObservedGeneration,
		RolloutStatus: policyv1.RolloutStatus(intern(string(p.Status.RolloutStatus)))}
	// The same few strings recur in every replica of a root, and of a cluster:
	// keep one copy of each.
	p.APIVersion, p.Kind = intern(p.APIVersion), intern(p.Kind)
	p.Name, p.Namespace = intern(p.Name), intern(p.Namespace)
	return p, nil
}

// sharedRootLabels hands out the labels of the cached replicas.
var sharedRootLabels = &rootLabels{maps: map[string]map[string]string{}}

// maxRootLabels bounds the roots rootLabels remembers.
const maxRootLabels = 4096

// rootLabels hands out the labels of cached replicas: only the root-policy
// label (what replication.RootOf reads, for the hub's index and its
// handlers), one map shared by every replica of a root. A map costs a few
// hundred bytes, as much as the rest of a cached replica, and no reader of
// the cache modifies it (a Get deep-copies it; a List without a deep copy
// is only read). Past maxRootLabels roots it starts again: the maps handed
// out stay valid, only unshared for a while.
type rootLabels struct {
	mu   sync.Mutex
	maps map[string]map[string]string // by the root-policy label's value
}

func (r *rootLabels) of(root string) map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.maps[root]; ok {
		return m
	}
	if len(r.maps) >= maxRootLabels {
		clear(r.maps)
	}
	m := map[string]string{replication.LabelRootPolicy: root}
	r.maps[root] = m
	return m
}

func intern(s string) string { return unique.Make(s).Value() }

// evaluatedAt is the cached time of a replica's last evaluation
// (cachedEvaluatedAtAnnotation); zero when unknown.
func evaluatedAt(replica *policyv1.Policy) time.Time {
	at, ok := replica.Annotations[cachedEvaluatedAtAnnotation]
	if !ok {
		return time.Time{} // without the error time.Parse would allocate
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return time.Time{}
	}
	return t
}
