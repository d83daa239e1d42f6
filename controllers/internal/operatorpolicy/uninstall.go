package operatorpolicy

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
)

// ReleaseFinalizers removes Finalizer from every OperatorPolicy of the cluster
// and deletes nothing else: the uninstall path of the spoke (fleetpolicy-spoke
// --uninstall), run once the spoke controller is stopped, so that removing
// OperatorPolicies, their namespaces or their CRD afterwards never waits for a
// controller that is gone and never uninstalls an operator. A policy already
// being deleted then goes, keeping its operator. It returns the policies
// released and every error met (it goes on past one).
func ReleaseFinalizers(ctx context.Context, c client.Client) ([]client.ObjectKey, error) {
	list := &v1beta1.OperatorPolicyList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing OperatorPolicies: %w", err)
	}
	var released []client.ObjectKey
	var errs []error
	for i := range list.Items {
		op := &list.Items[i]
		if !controllerutil.ContainsFinalizer(op, Finalizer) {
			continue
		}
		key := client.ObjectKeyFromObject(op)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			if err := c.Get(ctx, key, op); err != nil {
				return err
			}
			before := op.DeepCopy()
			if !controllerutil.RemoveFinalizer(op, Finalizer) {
				return nil
			}
			return c.Patch(ctx, op, client.MergeFromWithOptions(before, client.MergeFromWithOptimisticLock{}))
		})
		switch {
		case err == nil, apierrors.IsNotFound(err):
			released = append(released, key)
		default:
			errs = append(errs, fmt.Errorf("releasing OperatorPolicy %s: %w", key, err))
		}
	}
	return released, errors.Join(errs...)
}
