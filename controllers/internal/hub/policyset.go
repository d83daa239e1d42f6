package hub

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/compliance"
)

// PolicySetStatus keeps a PolicySet's status: the bindings that bind it, the
// compliance aggregated from its member policies and the message naming the
// members that do not report one (shared/compliance), and the exclusions it
// applies. As OCM's, a set without members has an empty status.
type PolicySetStatus struct {
	Client client.Client
}

// Reconcile recomputes one PolicySet's status.
func (r *PolicySetStatus) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	set := &policyv1beta1.PolicySet{}
	if err := r.Client.Get(ctx, req.NamespacedName, set); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	members := map[string]*policyv1.Policy{}
	for _, name := range set.Spec.Policies {
		p := &policyv1.Policy{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: set.Namespace, Name: string(name)}, p)
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		members[p.Name] = p
	}
	bindings := &policyv1.PlacementBindingList{}
	if err := r.Client.List(ctx, bindings, client.InNamespace(set.Namespace),
		client.MatchingFields{indexBindingSubject: kindName(binding.KindPolicySet, set.Name)}); err != nil {
		return ctrl.Result{}, err
	}
	status := set.Status.DeepCopy()
	status.Compliant = compliance.PolicySet(set, members)
	status.StatusMessage = compliance.PolicySetMessage(set, members)
	status.Exclusions = binding.SetExclusions(set)
	status.Placement = nil
	for i := range bindings.Items {
		ref, ok := binding.RefOf(&bindings.Items[i])
		if !ok {
			continue // OCM ignores the binding
		}
		entry := policyv1beta1.PolicySetStatusPlacement{PlacementBinding: bindings.Items[i].Name}
		if ref.Kind == binding.KindPlacement {
			entry.Placement = ref.Name
		} else {
			entry.PlacementRule = ref.Name
		}
		status.Placement = append(status.Placement, entry)
	}
	if len(set.Spec.Policies) == 0 {
		// As OCM's propagator: a set without members has an empty status.
		*status = policyv1beta1.PolicySetStatus{}
	}
	if equality.Semantic.DeepEqual(*status, set.Status) {
		return ctrl.Result{}, nil
	}
	updated := set.DeepCopy()
	updated.Status = *status
	return ctrl.Result{}, r.Client.Status().Update(ctx, updated)
}
