package operatorpolicy

import (
	"context"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
)

// remove handles a policy that removes its operator: complianceType
// mustnothave, or deleted. Enforcing, it deletes the Delete steps of
// PlanRemoval and reads again from the API server. A deleted policy is
// released (its finalizer removed) once no Delete step is left, or at once
// when it only informs; until then, and for mustnothave, its status says what
// is left.
func (r *reconciler) remove(ctx context.Context, op *v1beta1.OperatorPolicy, p operatorpolicy.Policy) (ctrl.Result, error) {
	deleting := !op.DeletionTimestamp.IsZero()
	if deleting && !controllerutil.ContainsFinalizer(op, Finalizer) {
		return ctrl.Result{}, nil
	}
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
	if deleting && (!p.Enforce || !slices.ContainsFunc(operatorpolicy.PlanRemoval(p, obs), isDelete)) {
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
