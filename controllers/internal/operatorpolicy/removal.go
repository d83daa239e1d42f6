package operatorpolicy

import (
	"context"
	"fmt"
	"slices"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// operatorPolicyCRD names the OperatorPolicy CRD.
const operatorPolicyCRD = "operatorpolicies.policy.open-cluster-management.io"

// deleted handles a policy being deleted. One holding Finalizer removes its
// operator when operatorpolicy.RemovesOnDeletion says this deletion does (see
// causeOfDeletion); otherwise it is released at once and nothing is removed.
// While the OperatorPolicy CRD is being deleted (or is gone), every policy is
// released without removing anything: the spoke is being uninstalled.
func (r *reconciler) deleted(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(op, Finalizer) {
		return ctrl.Result{}, nil
	}
	uninstalling, err := r.crdDeleting(ctx)
	if err != nil {
		return ctrl.Result{}, err
	}
	cause, err := r.causeOfDeletion(ctx, op)
	if err != nil {
		return ctrl.Result{}, err
	}
	if uninstalling || !operatorpolicy.RemovesOnDeletion(p, cause) {
		return ctrl.Result{}, r.setFinalizer(ctx, op, false)
	}
	p.Remove = true
	return r.remove(ctx, op, p)
}

// crdDeleting reports whether the OperatorPolicy CRD is being deleted or is
// gone, read from the API server (the cache may not have seen the deletion of
// the CRD that deleted the policy).
func (r *reconciler) crdDeleting(ctx context.Context) (bool, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	switch err := r.reader.Get(ctx, client.ObjectKey{Name: operatorPolicyCRD}, crd); {
	case apierrors.IsNotFound(err):
		return true, nil
	case err != nil:
		return false, fmt.Errorf("reading CustomResourceDefinition %s: %w", operatorPolicyCRD, err)
	}
	return !crd.DeletionTimestamp.IsZero(), nil
}

// causeOfDeletion is operatorpolicy.CauseOfDeletion for op: the cause template
// sync wrote on it, or whether the Policy owning it is gone (read from the API
// server: the garbage collector deletes a template whose owner left).
func (r *reconciler) causeOfDeletion(ctx context.Context, op *v1beta1.OperatorPolicy) (operatorpolicy.DeletionCause, error) {
	ownerGone := false
	for _, ref := range op.OwnerReferences {
		if ref.Kind != "Policy" || ref.APIVersion != policyv1.GroupVersion.String() {
			continue
		}
		owner := &policyv1.Policy{}
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: op.Namespace, Name: ref.Name}, owner)
		switch {
		case apierrors.IsNotFound(err):
			ownerGone = true
		case err != nil:
			return "", fmt.Errorf("reading Policy %s/%s, owner of OperatorPolicy %s: %w", op.Namespace, ref.Name, op.Name, err)
		default:
			ownerGone = ownerGone || owner.UID != ref.UID || !owner.DeletionTimestamp.IsZero()
		}
	}
	return operatorpolicy.CauseOfDeletion(op.Annotations, ownerGone), nil
}

// remove handles a policy that removes its operator: complianceType
// mustnothave, or deleted when RemovesOnDeletion says so. Enforcing, it
// deletes the Delete steps of PlanRemoval and reads again from the API server.
// A deleted policy is released (its finalizer removed) once no Delete step is
// left; until then, and for mustnothave, its status says what is left.
func (r *reconciler) remove(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy) (ctrl.Result, error) {
	deleting := !op.DeletionTimestamp.IsZero()
	if !deleting {
		// mustnothave removes now; nothing is left to do on deletion.
		if err := r.setFinalizer(ctx, op, false); err != nil {
			return ctrl.Result{}, err
		}
	}
	obs, err := r.observe(ctx, r.client, p)
	if err != nil {
		return ctrl.Result{}, err
	}
	if p.Enforce {
		if err := r.deleteSteps(ctx, operatorpolicy.PlanRemoval(p, obs)); err != nil {
			return ctrl.Result{}, err
		}
		if obs, err = r.observe(ctx, r.reader, p); err != nil {
			return ctrl.Result{}, err
		}
	}
	if deleting && !slices.ContainsFunc(operatorpolicy.PlanRemoval(p, obs), isDelete) {
		return ctrl.Result{}, r.setFinalizer(ctx, op, false)
	}
	return r.report(ctx, op, operatorpolicy.Evaluate(p, obs, op.Status.Conditions, r.now()))
}

func isDelete(s operatorpolicy.RemovalStep) bool { return s.Delete }

// deleteSteps deletes the objects of the Delete steps, in order; one already
// gone is fine.
func (r *reconciler) deleteSteps(ctx context.Context, steps []operatorpolicy.RemovalStep) error {
	for _, s := range steps {
		if !s.Delete {
			continue
		}
		obj := &metav1.PartialObjectMetadata{}
		obj.APIVersion, obj.Kind = s.Object.APIVersion, s.Object.Kind
		obj.Namespace, obj.Name = s.Object.Metadata.Namespace, s.Object.Metadata.Name
		if err := r.client.Delete(ctx, obj, client.PropagationPolicy(metav1.DeletePropagationBackground)); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("deleting %s %s (%s): %w", s.Object.Kind, client.ObjectKeyFromObject(obj), s.Reason, err)
		}
	}
	return nil
}
