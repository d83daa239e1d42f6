package logging

import (
	"context"
	"errors"

	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// QuietWhenStopping wraps r so that a reconcile that fails because its manager
// is stopping (its context is canceled: the process got SIGTERM, or lost its
// leader lease) returns no error: controller-runtime would otherwise log every
// such reconcile as a "Reconciler error" with the context's cancellation, on
// every shutdown. The failure is logged at V(1), and the request, which a
// stopping controller no longer processes, is not requeued. An error while the
// context is live, or past a deadline (a reconcile timeout), is returned as it
// is.
func QuietWhenStopping(r reconcile.Reconciler) reconcile.Reconciler {
	return reconcile.Func(func(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
		result, err := r.Reconcile(ctx, req)
		if err != nil && errors.Is(ctx.Err(), context.Canceled) {
			log.FromContext(ctx).V(1).Info("reconcile stopped: the manager is stopping", "error", err.Error())
			return reconcile.Result{}, nil
		}
		return result, err
	})
}
