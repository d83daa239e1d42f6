package hub

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// reconcileDelete deletes the replicas (existing) of a root that is gone or
// being deleted, except those whose delete is in flight already (ownWrites),
// and forgets what the propagator remembered of the root; its writes in
// flight only once no replica is left. Each replica's delete event brings the
// root back here until then.
func (p *Propagator) reconcileDelete(ctx context.Context, key types.NamespacedName, existing map[string]*policyv1.Policy) (ctrl.Result, error) {
	deletes := make([]replicaWrite, 0, len(existing))
	for _, actual := range existing {
		deletes = append(deletes, replicaWrite{actual: actual})
	}
	deletes, _ = p.dropInFlight(key, deletes)
	_, _, _, err := p.write(ctx, key, nil, deletes)

	if len(existing) == 0 {
		p.ownWrites.forget(key)
	}
	p.settled.forget(key)
	p.failures.forget(key)
	if p.Templates != nil {
		p.Templates.forget(key, nil)
	}
	replicasPerPolicy.DeleteLabelValues(key.Namespace, key.Name)
	reconcileTotal.WithLabelValues(outcome(err)).Inc()
	return ctrl.Result{}, err
}
