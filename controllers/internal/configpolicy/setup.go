package configpolicy

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/templatewatch"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Options tune the controller.
type Options struct {
	// Namespace is the cluster namespace: the ConfigurationPolicies there are
	// evaluated, and its encryption key Secret decrypts their templates.
	Namespace string
	// Concurrency is how many ConfigurationPolicies are reconciled at once
	// (at least 1).
	Concurrency int
	// TemplateLimits bound the managed-cluster templates of one evaluation
	// (unset bounds: the defaults).
	TemplateLimits templates.Limits
	// Clock is the time of compliance events and of status lastEvaluated and
	// condition times (nil: the real clock).
	Clock clock.PassiveClock
}

// Setup registers the ConfigurationPolicy controller on mgr, a manager of the
// managed cluster whose cache holds the policy kinds of opts.Namespace and
// its encryption key Secret.
func Setup(mgr ctrl.Manager, opts Options) error {
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	resolver, err := templatewatch.ForManager(mgr, opts.TemplateLimits, opts.Concurrency)
	if err != nil {
		return err
	}
	r := &reconciler{
		Client:    mgr.GetClient(),
		Reader:    mgr.GetAPIReader(),
		Mapper:    mgr.GetRESTMapper(),
		Templates: resolver,
		clock:     opts.Clock,
	}
	inNamespace := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetNamespace() == opts.Namespace })
	isKey := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetNamespace() == opts.Namespace && obj.GetName() == templates.EncryptionKeySecret
	})
	// A ConfigurationPolicy is evaluated again when its spec, or the
	// annotations that change how its templates resolve, change, and when an
	// object its templates read changes; a copied key Secret re-evaluates
	// the policies that decrypt with it.
	return ctrl.NewControllerManagedBy(mgr).
		Named("spoke-configurationpolicy").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, opts.Concurrency)}).
		For(&policyv1.ConfigurationPolicy{}, builder.WithPredicates(inNamespace, predicate.Or(predicate.GenerationChangedPredicate{}, templateAnnotationsChanged))).
		WatchesRawSource(resolver.Source()).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.decrypting), builder.WithPredicates(isKey)).
		Complete(logging.QuietWhenStopping(r))
}

// templateAnnotationsChanged passes the changes of the annotations that change
// how a policy's templates resolve (the IV, disable-templates).
var templateAnnotationsChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		was, is := e.ObjectOld.GetAnnotations(), e.ObjectNew.GetAnnotations()
		return was[templates.IVAnnotation] != is[templates.IVAnnotation] || was[templates.DisableAnnotation] != is[templates.DisableAnnotation]
	},
	CreateFunc:  func(event.CreateEvent) bool { return true },
	DeleteFunc:  func(event.DeleteEvent) bool { return true },
	GenericFunc: func(event.GenericEvent) bool { return true },
}

// decrypting maps the key Secret of a namespace to the ConfigurationPolicies
// of that namespace that decrypt with it.
func (r *reconciler) decrypting(ctx context.Context, key client.Object) []reconcile.Request {
	list := &policyv1.ConfigurationPolicyList{}
	if err := r.Client.List(ctx, list, client.InNamespace(key.GetNamespace())); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing the ConfigurationPolicies that decrypt", "namespace", key.GetNamespace())
		return nil
	}
	var out []reconcile.Request
	for _, cp := range list.Items {
		if templates.UsesDecryption(cp.Annotations) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&cp)})
		}
	}
	return out
}
