package operatorpolicy

import (
	"context"
	"fmt"
	"slices"

	operatorsv1 "github.com/operator-framework/api/pkg/operators/v1"
	operatorsv1alpha1 "github.com/operator-framework/api/pkg/operators/v1alpha1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
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
	"github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Options tune the controller.
type Options struct {
	// Concurrency is how many OperatorPolicies are reconciled at once (at least 1).
	Concurrency int
	// DefaultNamespace is where an operator is installed when neither
	// spec.subscription.namespace nor the PackageManifest says (OCM's
	// --operator-policy-default-namespace); empty for none.
	DefaultNamespace string
	// Clock is the time of compliance events and status conditions (nil: the
	// real clock).
	Clock clock.PassiveClock
	// TemplateLimits bound the templates of one evaluation (unset bounds: the
	// defaults).
	TemplateLimits templates.Limits
}

// Index names of the OperatorPolicy field indexes Setup registers.
const (
	// indexSubscriptionNamespace indexes OperatorPolicies by the namespace of
	// their subscription (spec.subscription.namespace).
	indexSubscriptionNamespace = "operatorpolicy.fleetpolicy.io/subscription-namespace"
	// indexCatalogSource indexes OperatorPolicies by the CatalogSource their
	// subscription names, as "<namespace>/<name>".
	indexCatalogSource = "operatorpolicy.fleetpolicy.io/catalogsource"
)

// Setup registers the OperatorPolicy controller on mgr, a manager of the
// managed cluster whose scheme has the policy and OLM kinds: SetupIndexes and
// SetupController.
func Setup(mgr ctrl.Manager, opts Options) error {
	if err := SetupIndexes(mgr); err != nil {
		return err
	}
	return SetupController(mgr, opts)
}

// SetupIndexes registers the OperatorPolicy indexes the controller reads. It
// must run before the manager starts; SetupController may run after (once OLM
// is installed on the cluster).
func SetupIndexes(mgr ctrl.Manager) error {
	ctx := context.Background()
	indexer := mgr.GetFieldIndexer()
	if err := indexer.IndexField(ctx, &v1beta1.OperatorPolicy{}, indexSubscriptionNamespace, func(obj client.Object) []string {
		op, ok := obj.(*v1beta1.OperatorPolicy)
		if !ok {
			return nil
		}
		return []string{subscriptionNamespace(op)}
	}); err != nil {
		return err
	}
	return indexer.IndexField(ctx, &v1beta1.OperatorPolicy{}, indexCatalogSource, func(obj client.Object) []string {
		op, ok := obj.(*v1beta1.OperatorPolicy)
		if !ok {
			return nil
		}
		if leftToCluster(op, operatorpolicy.SubscriptionSource, operatorpolicy.SubscriptionSourceNamespace) ||
			templated(op.Spec.Subscription.Source, op.Spec.Subscription.SourceNamespace) {
			return []string{resolvedOnReconcileKey}
		}
		return []string{op.Spec.Subscription.SourceNamespace + "/" + op.Spec.Subscription.Source}
	})
}

// SetupController registers the controller itself, which watches OLM's kinds:
// the cluster must serve OLM's API (ServesOLM).
func SetupController(mgr ctrl.Manager, opts Options) error {
	resolver, err := templatewatch.ForManager(mgr, opts.TemplateLimits, opts.Concurrency)
	if err != nil {
		return err
	}
	var clk clock.PassiveClock = clock.RealClock{}
	if opts.Clock != nil {
		clk = opts.Clock
	}
	r := &reconciler{client: mgr.GetClient(), reader: mgr.GetAPIReader(), templates: resolver, now: clk.Now, defaultNamespace: opts.DefaultNamespace}
	byNamespace := handler.EnqueueRequestsFromMapFunc(r.policiesOfNamespace)
	return ctrl.NewControllerManagedBy(mgr).
		Named("operatorpolicy").
		WithOptions(controller.Options{MaxConcurrentReconciles: max(1, opts.Concurrency)}).
		For(&v1beta1.OperatorPolicy{}, builder.WithPredicates(predicate.Or(
			predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{},
			predicate.AnnotationChangedPredicate{}, deletionStarted))).
		Watches(&operatorsv1alpha1.Subscription{}, byNamespace).
		Watches(&operatorsv1alpha1.InstallPlan{}, byNamespace).
		Watches(&operatorsv1.OperatorGroup{}, byNamespace).
		Watches(&operatorsv1alpha1.CatalogSource{}, handler.EnqueueRequestsFromMapFunc(r.policiesOfCatalogSource)).
		WatchesMetadata(&operatorsv1alpha1.ClusterServiceVersion{}, byNamespace, builder.WithPredicates(notCopied)).
		WatchesMetadata(&appsv1.Deployment{}, byNamespace).
		// A change of what a policy's templates read resolves them again.
		WatchesRawSource(resolver.Source()).
		Complete(logging.QuietWhenStopping(r))
}

// subscriptionNamespace is where an OperatorPolicy's operator lives, as its
// spec says.
func subscriptionNamespace(op *v1beta1.OperatorPolicy) string {
	if leftToCluster(op, operatorpolicy.SubscriptionNamespace) || templated(op.Spec.Subscription.Namespace) {
		return resolvedOnReconcileKey
	}
	return op.Spec.Subscription.Namespace
}

// leftToCluster reports whether op leaves one of the subscription fields to
// the managed cluster, which fills them in on reconcile
// (operatorpolicy.ClusterDefaultedFields).
func leftToCluster(op *v1beta1.OperatorPolicy, fields ...operatorpolicy.SubscriptionField) bool {
	unset := operatorpolicy.ClusterDefaultedFields(&op.Spec.Subscription)
	return slices.ContainsFunc(fields, func(f operatorpolicy.SubscriptionField) bool { return slices.Contains(unset, f) })
}

// resolvedOnReconcileKey is the index value of a policy whose subscription's
// namespace (or catalog) is known only when it is reconciled: a template, or
// unset and defaulted from the cluster. Every change of the kind maps to the
// policy too.
const resolvedOnReconcileKey = "{{resolved on reconcile}}"

func templated(values ...string) bool {
	for _, v := range values {
		if templates.HasManagedTemplate([]byte(v)) {
			return true
		}
	}
	return false
}

// deletionStarted passes the update that gives an object its deletionTimestamp.
var deletionStarted = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		return e.ObjectOld.GetDeletionTimestamp().IsZero() && !e.ObjectNew.GetDeletionTimestamp().IsZero()
	},
	CreateFunc:  func(event.CreateEvent) bool { return false },
	DeleteFunc:  func(event.DeleteEvent) bool { return false },
	GenericFunc: func(event.GenericEvent) bool { return false },
}

// notCopied drops the CSVs OLM copies into every namespace an operator watches.
var notCopied = predicate.NewPredicateFuncs(func(obj client.Object) bool {
	return !operatorsv1alpha1.IsCopied(obj)
})

// policiesOfNamespace maps an object to the OperatorPolicies whose subscription
// is in its namespace.
func (r *reconciler) policiesOfNamespace(ctx context.Context, obj client.Object) []reconcile.Request {
	return append(r.requests(ctx, client.MatchingFields{indexSubscriptionNamespace: obj.GetNamespace()}),
		r.requests(ctx, client.MatchingFields{indexSubscriptionNamespace: resolvedOnReconcileKey})...)
}

// policiesOfCatalogSource maps a CatalogSource to the OperatorPolicies that
// name it and to those of the namespaces of the Subscriptions that name it.
func (r *reconciler) policiesOfCatalogSource(ctx context.Context, obj client.Object) []reconcile.Request {
	requests := append(r.requests(ctx, client.MatchingFields{indexCatalogSource: obj.GetNamespace() + "/" + obj.GetName()}),
		r.requests(ctx, client.MatchingFields{indexCatalogSource: resolvedOnReconcileKey})...)
	subs := &operatorsv1alpha1.SubscriptionList{}
	if err := r.client.List(ctx, subs); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing Subscriptions to map a CatalogSource", "catalogSource", client.ObjectKeyFromObject(obj))
		return requests
	}
	seen := map[string]bool{}
	for _, s := range subs.Items {
		if s.Spec == nil || s.Spec.CatalogSource != obj.GetName() || s.Spec.CatalogSourceNamespace != obj.GetNamespace() || seen[s.Namespace] {
			continue
		}
		seen[s.Namespace] = true
		requests = append(requests, r.requests(ctx, client.MatchingFields{indexSubscriptionNamespace: s.Namespace})...)
	}
	return requests
}

func (r *reconciler) requests(ctx context.Context, match client.MatchingFields) []reconcile.Request {
	policies := &v1beta1.OperatorPolicyList{}
	if err := r.client.List(ctx, policies, match); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "listing OperatorPolicies to map an object", "match", match)
		return nil
	}
	out := make([]reconcile.Request, len(policies.Items))
	for i := range policies.Items {
		out[i] = reconcile.Request{NamespacedName: types.NamespacedName{Namespace: policies.Items[i].Namespace, Name: policies.Items[i].Name}}
	}
	return out
}

// ServesOLM says whether the cluster of cfg serves the OLM kinds the
// controller watches (OLM is installed).
func ServesOLM(cfg *rest.Config) (bool, error) {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return false, err
	}
	for gv, resource := range map[string]string{
		operatorsv1alpha1.SchemeGroupVersion.String(): "subscriptions",
		operatorsv1.SchemeGroupVersion.String():       "operatorgroups",
	} {
		resources, err := dc.ServerResourcesForGroupVersion(gv)
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("asking the cluster whether it serves %s: %w", gv, err)
		}
		if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == resource }) {
			return false, nil
		}
	}
	return true, nil
}
