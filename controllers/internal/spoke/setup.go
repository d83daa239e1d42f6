package spoke

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/configpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// indexEventInvolvedUID indexes Events by the UID of the object they are about.
const indexEventInvolvedUID = "involvedObject.uid"

// Setup registers the spoke controllers with mgr (the managed cluster) and hub
// (the hub cluster, already added to mgr).
func Setup(ctx context.Context, mgr ctrl.Manager, hub cluster.Cluster, o Options) error {
	if err := mgr.GetFieldIndexer().IndexField(ctx, &corev1.Event{}, indexEventInvolvedUID, func(obj client.Object) []string {
		ev, ok := obj.(*corev1.Event)
		if !ok || ev.InvolvedObject.UID == "" {
			return nil
		}
		return []string{string(ev.InvolvedObject.UID)}
	}); err != nil {
		return err
	}
	if o.Clock == nil {
		o.Clock = clock.RealClock{}
	}
	inNamespace := predicate.NewPredicateFuncs(func(obj client.Object) bool { return obj.GetNamespace() == o.ClusterName })
	concurrency := controller.Options{MaxConcurrentReconciles: max(1, o.Concurrency)}

	specSync := &SpecSync{Managed: mgr.GetClient(), Hub: hub.GetClient(), Namespace: o.ClusterName}
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("spoke-spec-sync").
		WithOptions(concurrency).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&policyv1.Policy{}), &handler.EnqueueRequestForObject{}, inNamespace, notStatusOnly)).
		Watches(&policyv1.Policy{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(inNamespace, notStatusOnly)).
		Complete(logging.QuietWhenStopping(specSync)); err != nil {
		return err
	}

	// The hub replica's status follows the copy's; the hub's own changes to it
	// are copied over again.
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("spoke-hub-status-sync").
		WithOptions(concurrency).
		Watches(&policyv1.Policy{}, enqueueAfter(o.HubStatusDelay), builder.WithPredicates(inNamespace)).
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&policyv1.Policy{}), enqueueAfter(o.HubStatusDelay), inNamespace)).
		Complete(logging.QuietWhenStopping(&HubStatusSync{Managed: mgr.GetClient(), Hub: hub.GetClient(), events: &eventWriter{client: hub.GetClient(), clock: o.Clock},
			evaluatedHere: evaluatedHere(o), clock: o.Clock})); err != nil {
		return err
	}

	events := &eventWriter{client: mgr.GetClient(), clock: o.Clock}
	templateSync := &TemplateSync{
		Client:    mgr.GetClient(),
		Mapper:    mgr.GetRESTMapper(),
		Namespace: o.ClusterName,
		events:    events,
		registry:  newRegistry(),

		ocmEvaluatesOperatorPolicies: o.OperatorPolicyEvaluator == EvaluatorOCM,
	}
	c, err := ctrl.NewControllerManagedBy(mgr).
		Named("spoke-template-sync").
		WithOptions(concurrency).
		Watches(&policyv1.Policy{}, templateSync.policyHandler(), builder.WithPredicates(inNamespace)).
		Watches(&corev1.Event{}, templateSync.eventHandler(), builder.WithPredicates(inNamespace)).
		Build(logging.QuietWhenStopping(templateSync))
	if err != nil {
		return err
	}
	templateSync.watches = newWatcher(c, mgr.GetCache(), templateSync.objectHandler())
	// ConfigurationPolicies are templates whatever the policies hold, so that
	// one left behind while the spoke was down is still pruned.
	if err := templateSync.watches.ensure(policyv1.GroupVersion.WithKind("ConfigurationPolicy"), true); err != nil {
		return err
	}

	// The hub's encryption key of the cluster namespace, copied for the
	// ConfigurationPolicies that decrypt what the hub's templates encrypted.
	// Both caches hold that one Secret only (NewManager).
	isKey := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetNamespace() == o.ClusterName && obj.GetName() == templates.EncryptionKeySecret
	})
	if err := ctrl.NewControllerManagedBy(mgr).
		Named("spoke-secret-sync").
		WatchesRawSource(source.Kind(hub.GetCache(), client.Object(&corev1.Secret{}), &handler.EnqueueRequestForObject{}, isKey)).
		Watches(&corev1.Secret{}, &handler.EnqueueRequestForObject{}, builder.WithPredicates(isKey)).
		Complete(logging.QuietWhenStopping(&SecretSync{Managed: mgr.GetClient(), Hub: hub.GetClient(), Namespace: o.ClusterName})); err != nil {
		return err
	}

	if o.ConfigurationPolicyEvaluator == EvaluatorOCM {
		// OCM's config-policy-controller evaluates the ConfigurationPolicies
		// (resolving their managed-cluster templates with the copied key).
		return nil
	}
	return configpolicy.Setup(mgr, configpolicy.Options{Namespace: o.ClusterName, Concurrency: o.Concurrency, TemplateLimits: o.TemplateLimits, Clock: o.Clock})
}

// queue is the work queue of the spoke's controllers, for their event handlers.
type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// evaluatedHere are the template kinds the spoke's own controllers evaluate
// and always give a compliance: ConfigurationPolicies, unless OCM's
// config-policy-controller evaluates them. (The OperatorPolicy controller
// waits for OLM, which a cluster may never have.)
func evaluatedHere(o Options) map[schema.GroupKind]bool {
	if o.ConfigurationPolicyEvaluator == EvaluatorOCM {
		return nil
	}
	return map[schema.GroupKind]bool{policyv1.GroupVersion.WithKind("ConfigurationPolicy").GroupKind(): true}
}

// notStatusOnly passes the changes of an object other than to its status: a
// new generation, labels, annotations, creation and deletion.
var notStatusOnly = predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})
