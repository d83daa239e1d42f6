package hub

import (
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
)

// cachedDigestAnnotation holds, in the hub's informer cache only, the digest of
// a replica's spec, labels and annotations (replication.Digest). It is never
// written to the API server.
const cachedDigestAnnotation = "fleetpolicy.io/cached-digest"

// slimPolicies is the cache transform for Policies. Managed fields are dropped
// from every Policy. A replica is reduced to what the hub reads back: its
// metadata, its remediationAction, its status without compliance history, and
// the digest of what the hub owns, against which desired replicas are compared.
// At thousands of clusters the templates and history would otherwise dominate
// the hub's memory.
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
	digest := replication.Digest(p)
	p.Spec = policyv1.PolicySpec{RemediationAction: p.Spec.RemediationAction, Disabled: p.Spec.Disabled}
	annotations := make(map[string]string, len(p.Annotations)+1)
	for k, v := range p.Annotations {
		annotations[k] = v
	}
	annotations[cachedDigestAnnotation] = digest
	p.Annotations = annotations
	for _, d := range p.Status.Details {
		if d != nil {
			d.History = nil
		}
	}
	return p, nil
}

// drifted reports whether a cached (slimmed) replica differs from the desired one.
func drifted(desired, cached *policyv1.Policy) bool {
	return cached.Annotations[cachedDigestAnnotation] != replication.Digest(desired)
}
