package hub

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"golang.org/x/sync/semaphore"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1 "open-cluster-management.io/api/cluster/v1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	appsv1 "github.com/fleetpolicy/fleetpolicy/shared/api/apps/v1"
	fleetv1alpha1 "github.com/fleetpolicy/fleetpolicy/shared/api/fleetpolicy/v1alpha1"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/binding"
	"github.com/fleetpolicy/fleetpolicy/shared/replication"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Options tune the hub controllers.
type Options struct {
	// RootConcurrency is how many root policies are reconciled at once.
	RootConcurrency int
	// ReplicaWriters bounds the replica writes in flight per root reconcile.
	ReplicaWriters int
	// ReplicaWritesInFlight bounds the replica writes in flight across every
	// root reconcile (0: RootConcurrency × ReplicaWriters). An API server
	// that already has as many writes as it can run at once answers more of
	// them slower, not sooner: past its own concurrency, more writes in
	// flight only lower its throughput.
	ReplicaWritesInFlight int
	// StatusBatchDelay is how long replica status changes are gathered before the
	// root's status is recomputed.
	StatusBatchDelay time.Duration
	// Clock is the time of rollout steps (nil: the real clock).
	Clock clock.PassiveClock
	// Placement enables policy-based placement: the admission webhook, the
	// explain endpoint and the remediator (the manager needs a webhook server).
	Placement bool
	// PlacementTimeout bounds one evaluation of the placement policies.
	PlacementTimeout time.Duration
	// PlacementRetries is how often a transient evaluation error is retried
	// within PlacementTimeout.
	PlacementRetries int
	// ExplainConcurrency bounds the /explain evaluations in flight; beyond it
	// /explain answers 429 Too Many Requests.
	ExplainConcurrency int
	// KeyRotation is how often each cluster's policy-encryption-key is rotated
	// (0: OCM's default of 30 days).
	KeyRotation time.Duration
	// Random is the source of encryption keys and initialization vectors
	// (nil: crypto/rand).
	Random io.Reader
	// SchedulePlacementRules makes the hub write PlacementRules' decisions, as
	// OCM's PlacementRule controller does. Turn it off on a hub where that
	// controller runs (OCM's application add-on).
	SchedulePlacementRules bool
	// TemplateLimits bound each resolution of a replica's hub templates (unset
	// bounds: templates.DefaultTimeout and DefaultMemory); at most
	// TemplateResolutions run at once, hub-wide (at least 1).
	TemplateLimits      templates.Limits
	TemplateResolutions int
	// OpenReports makes the hub write an OpenReports Report in each cluster
	// namespace (ReportWriter), when the API server serves that API; off by
	// default, as OpenReports' CRD may not be installed.
	OpenReports bool
	// Identity is the username the hub writes replicas as: the admission
	// webhook passes a replica only when this user sent it. Empty: the
	// identity of the hub's own credentials, asked of the API server
	// (SelfSubjectReview) at startup.
	Identity string
}

// DefaultOptions are the defaults of the hub binary's flags.
func DefaultOptions() Options {
	return Options{RootConcurrency: 4, ReplicaWriters: 16, ReplicaWritesInFlight: 16, StatusBatchDelay: time.Second,
		Placement: true, PlacementTimeout: 3 * time.Second, PlacementRetries: 3, ExplainConcurrency: 4,
		SchedulePlacementRules: true, TemplateResolutions: 16,
		TemplateLimits: templates.Limits{TimeoutSetting: "--template-timeout", MemorySetting: "--template-memory"}.OrDefault()}
}

// writeSlots is the hub-wide bound on replica writes in flight
// (Options.ReplicaWritesInFlight), nil when it would bound nothing.
func writeSlots(opts Options) *semaphore.Weighted {
	if opts.ReplicaWritesInFlight <= 0 || opts.ReplicaWritesInFlight >= opts.RootConcurrency*opts.ReplicaWriters {
		return nil
	}
	return semaphore.NewWeighted(int64(opts.ReplicaWritesInFlight))
}

// setup registers the indexes and the hub controllers with the manager, and
// returns the placement engine when placement is enabled. /explain is served
// on explain (nil: not served).
func setup(ctx context.Context, mgr ctrl.Manager, opts Options, explain webhook.Server, starts *controllerStarts, addons bool) (*placementEngine, error) {
	if err := setupIndexes(ctx, mgr); err != nil {
		return nil, err
	}
	c := mgr.GetClient()
	writes, err := ownConnection(mgr.GetConfig())
	if err != nil {
		return nil, err
	}
	policies, err := apiutil.RESTClientForGVK(policyv1.GroupVersion.WithKind("Policy"), false, false, mgr.GetConfig(),
		serializer.NewCodecFactory(mgr.GetScheme()), writes)
	if err != nil {
		return nil, err
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	if opts.Random == nil {
		opts.Random = rand.Reader
	}
	if opts.KeyRotation <= 0 {
		opts.KeyRotation = templates.DefaultKeyRotation
	}
	hubTemplates := newHubTemplates(c, mgr.GetAPIReader(), mgr.GetConfig(), opts.Random, opts.Clock)
	hubTemplates.limits = opts.TemplateLimits.OrDefault()
	hubTemplates.slots = semaphore.NewWeighted(int64(max(1, opts.TemplateResolutions)))
	if err := mgr.Add(hubTemplates); err != nil {
		return nil, err
	}
	replicas, err := policyIndex(ctx, mgr.GetCache())
	if err != nil {
		return nil, err
	}
	propagator := NewPropagator(c, replicas, policies, mgr.GetEventRecorder("fleetpolicy-hub"), opts.Clock)
	propagator.Writers = opts.ReplicaWriters
	propagator.writeSlots = writeSlots(opts)
	propagator.Templates = hubTemplates
	maps := &rootMapper{client: c}
	// Every event but a replica's status report bumps the epoch of the roots
	// it enqueues (see settledRoots).
	settled := propagator.settled
	mapped := func(mapFn handler.MapFunc) handler.EventHandler {
		return handler.EnqueueRequestsFromMapFunc(settled.bumping(mapFn))
	}
	propagation := ctrl.NewControllerManagedBy(mgr).
		WithOptions(controller.Options{MaxConcurrentReconciles: opts.RootConcurrency}).
		Watches(&policyv1.Policy{}, policyHandler(opts.StatusBatchDelay, settled, propagator.ownWrites)).
		Watches(&policyv1.PlacementBinding{}, mapped(maps.forBinding)).
		Watches(&policyv1beta1.PolicySet{}, mapped(maps.forPolicySet)).
		Watches(&clusterv1beta1.PlacementDecision{}, mapped(maps.forPlacementDecision)).
		Watches(&appsv1.PlacementRule{}, mapped(maps.forPlacementRule)).
		// Replicas go only to clusters that have a ManagedCluster: one that
		// appears or leaves reaches the roots placed on it.
		Watches(&clusterv1.ManagedCluster{}, mapped(maps.forManagedCluster),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(event.UpdateEvent) bool { return false }})).
		// A RolloutPlan is compared with the root policy of the same name.
		Watches(&fleetv1alpha1.RolloutPlan{}, mapped(itself)).
		// An object a hub template read changed: its root (see hubTemplates).
		WatchesRawSource(source.Channel(hubTemplates.changed, mapped(itself)))
	if err := starts.complete("propagator", propagation, logging.QuietWhenStopping(propagator)); err != nil {
		return nil, err
	}
	keyRotator := &KeyRotator{Client: c, Clock: opts.Clock, Random: opts.Random, Period: opts.KeyRotation}
	if err := starts.complete("encryption-keys", ctrl.NewControllerManagedBy(mgr).For(&corev1.Secret{}),
		logging.QuietWhenStopping(keyRotator)); err != nil {
		return nil, err
	}
	policySetStatus := ctrl.NewControllerManagedBy(mgr).
		For(&policyv1beta1.PolicySet{}).
		Watches(&policyv1.Policy{}, handler.EnqueueRequestsFromMapFunc(maps.setsOfRoot)).
		Watches(&policyv1.PlacementBinding{}, handler.EnqueueRequestsFromMapFunc(maps.setsOfBinding))
	if err := starts.complete("policyset-status", policySetStatus, logging.QuietWhenStopping(&PolicySetStatus{Client: c})); err != nil {
		return nil, err
	}
	if opts.SchedulePlacementRules {
		if err := setupPlacementRuleScheduler(mgr, c, mgr.GetEventRecorder("fleetpolicy-hub"), starts); err != nil {
			return nil, err
		}
	}
	if addons {
		if err := setupAddonPermissions(mgr, starts); err != nil {
			return nil, err
		}
	} else {
		ctrl.Log.WithName("fleetpolicy-hub").Info("OCM's add-on API is not served: the fleetpolicy add-on's hub permissions are not bound (restart the hub once it is)")
	}
	if opts.OpenReports {
		if err := setupReportWriter(ctx, mgr, opts, starts); err != nil {
			return nil, err
		}
	}
	if !opts.Placement {
		return nil, nil
	}
	return setupPlacement(ctx, mgr, opts, explain, starts)
}

// setupAddonPermissions registers AddonPermissions (on a hub that serves
// OCM's add-on API, servesAddons).
func setupAddonPermissions(mgr ctrl.Manager, starts *controllerStarts) error {
	return starts.complete("addon-permissions", ctrl.NewControllerManagedBy(mgr).For(&addonv1alpha1.ManagedClusterAddOn{}),
		logging.QuietWhenStopping(&AddonPermissions{Client: mgr.GetClient(), Reader: mgr.GetAPIReader()}))
}

// setupPlacement registers policy-based placement: the engine (every process),
// the admission webhook and explain endpoint (every process) and the leader's
// placement controller.
func setupPlacement(ctx context.Context, mgr ctrl.Manager, opts Options, explain webhook.Server, starts *controllerStarts) (*placementEngine, error) {
	identity := opts.Identity
	if identity == "" {
		review := &authenticationv1.SelfSubjectReview{}
		if err := mgr.GetClient().Create(ctx, review); err != nil {
			return nil, fmt.Errorf("asking the API server who the hub is (set the hub's identity explicitly instead): %w", err)
		}
		identity = review.Status.UserInfo.Username
	}
	engine := newPlacementEngine()
	if err := mgr.Add(engineRunnable{engine: engine, cache: mgr.GetCache()}); err != nil {
		return nil, err
	}
	recorder := mgr.GetEventRecorder("fleetpolicy-hub-placement")
	server := mgr.GetWebhookServer()
	server.Register(MutatePlacementPath, &webhook.Admission{Handler: &placementAdmission{
		engine: engine, recorder: recorder, timeout: opts.PlacementTimeout, retries: opts.PlacementRetries,
		identity: identity, clusters: mgr.GetCache(),
	}})
	if explain != nil {
		if err := serveExplain(mgr, explain, &explainHandler{engine: engine, timeout: opts.PlacementTimeout,
			slots: make(chan struct{}, max(1, opts.ExplainConcurrency))}); err != nil {
			return nil, err
		}
	}
	b := ctrl.NewControllerManagedBy(mgr).
		WatchesRawSource(source.Channel(engine.changed, &handler.EnqueueRequestForObject{}))
	return engine, starts.complete("placement", b, logging.QuietWhenStopping(&PlacementController{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: recorder,
		Timeout: opts.PlacementTimeout, engine: engine,
	}))
}

// serveExplain registers /explain on server behind the authentication and
// authorization filter (withAuthenticationAndAuthorization): the caller's
// bearer token is checked with a TokenReview (401 without a valid one) and its
// right to POST the non-resource URL /explain with a SubjectAccessReview (403
// without it).
// manifests/hub grants that right through ClusterRole fleetpolicy-explain.
func serveExplain(mgr ctrl.Manager, server webhook.Server, h http.Handler) error {
	filter, err := withAuthenticationAndAuthorization(mgr.GetConfig(), mgr.GetHTTPClient())
	if err != nil {
		return fmt.Errorf("explain authentication: %w", err)
	}
	protected, err := filter(mgr.GetLogger().WithName("explain"), h)
	if err != nil {
		return fmt.Errorf("explain authentication: %w", err)
	}
	server.Register(ExplainPath, protected)
	return nil
}

type queue = workqueue.TypedRateLimitingInterface[reconcile.Request]

// policyHandler enqueues a root policy for its own events and for its replicas'.
// A replica change that touches only status is enqueued after batchDelay, so that
// a fleet reporting compliance is folded into few root status writes; any other
// replica change (drift, deletion) bumps the root's epoch in settled and is
// enqueued at once. A root's status-only change is its own status write and is
// ignored. Every replica event tells ownWrites what the cache now holds.
func policyHandler(batchDelay time.Duration, settled *settledRoots, ownWrites *ownWrites) handler.EventHandler {
	rootOf := func(o client.Object) reconcile.Request {
		if root, ok := replication.RootOf(o); ok {
			return reconcile.Request{NamespacedName: root}
		}
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}}
	}
	now := func(q queue, o client.Object) {
		req := rootOf(o)
		settled.bump(req.NamespacedName)
		q.Add(req)
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q queue) {
			ownWrites.seen(e.Object, false)
			now(q, e.Object)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q queue) {
			ownWrites.seen(e.Object, true)
			now(q, e.Object)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q queue) { now(q, e.Object) },
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q queue) {
			ownWrites.seen(e.ObjectNew, false)
			switch {
			case !statusOnlyChange(e.ObjectOld, e.ObjectNew):
				now(q, e.ObjectNew)
			case replication.IsReplica(e.ObjectNew):
				q.AddAfter(rootOf(e.ObjectNew), batchDelay)
			}
			// A root's own status change (written here) needs no reconcile.
		},
	}
}

func statusOnlyChange(oldObj, newObj client.Object) bool {
	o, ok1 := oldObj.(*policyv1.Policy)
	n, ok2 := newObj.(*policyv1.Policy)
	return ok1 && ok2 && o.Generation == n.Generation &&
		equality.Semantic.DeepEqual(o.Labels, n.Labels) &&
		sameMetadataAnnotations(o.Annotations, n.Annotations) &&
		n.DeletionTimestamp.IsZero()
}

// sameMetadataAnnotations compares two versions' annotations but for the
// cached evaluated-at one, which the cache derives from the status (a cached
// replica's compliance history): every report of a spoke that keeps the
// history moves it, and is still a status report.
func sameMetadataAnnotations(a, b map[string]string) bool {
	for k, v := range a {
		if w, ok := b[k]; k != cachedEvaluatedAtAnnotation && (!ok || w != v) {
			return false
		}
	}
	for k := range b {
		if _, ok := a[k]; k != cachedEvaluatedAtAnnotation && !ok {
			return false
		}
	}
	return true
}

// rootMapper maps changes of other kinds to the root policies they can affect.
type rootMapper struct {
	client client.Client
}

func (m *rootMapper) forBinding(ctx context.Context, o client.Object) []reconcile.Request {
	pb, ok := o.(*policyv1.PlacementBinding)
	if !ok {
		return nil
	}
	var out []reconcile.Request
	for s := range binding.Subjects(pb) {
		switch s.Kind {
		case binding.KindPolicy:
			out = append(out, request(pb.Namespace, s.Name))
		case binding.KindPolicySet:
			set := &policyv1beta1.PolicySet{}
			if err := m.client.Get(ctx, client.ObjectKey{Namespace: pb.Namespace, Name: s.Name}, set); err == nil {
				out = append(out, m.forPolicySet(ctx, set)...)
			}
		}
	}
	return out
}

// forPolicySet maps a PolicySet to its member policies (bound through it) and
// to the policies that depend on it (their replicas carry it expanded).
func (m *rootMapper) forPolicySet(ctx context.Context, o client.Object) []reconcile.Request {
	set, ok := o.(*policyv1beta1.PolicySet)
	if !ok {
		return nil
	}
	out := make([]reconcile.Request, 0, len(set.Spec.Policies))
	for _, p := range set.Spec.Policies {
		out = append(out, request(set.Namespace, string(p)))
	}
	dependents := &policyv1.PolicyList{}
	if err := m.client.List(ctx, dependents, client.MatchingFields{indexSetDependency: set.Namespace + "/" + set.Name}); err == nil {
		for _, p := range dependents.Items {
			out = append(out, request(p.Namespace, p.Name))
		}
	}
	return out
}

func (m *rootMapper) bindingsTo(ctx context.Context, namespace, kind, name string) []reconcile.Request {
	list := &policyv1.PlacementBindingList{}
	if err := m.client.List(ctx, list, client.InNamespace(namespace),
		client.MatchingFields{indexBindingPlacement: kindName(kind, name)}); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		out = append(out, m.forBinding(ctx, &list.Items[i])...)
	}
	return out
}

func (m *rootMapper) forPlacementDecision(ctx context.Context, o client.Object) []reconcile.Request {
	name, ok := o.GetLabels()[placementLabel]
	if !ok {
		return nil
	}
	return m.bindingsTo(ctx, o.GetNamespace(), binding.KindPlacement, name)
}

// forManagedCluster maps a ManagedCluster to the roots bound to a placement
// that decided on it.
func (m *rootMapper) forManagedCluster(ctx context.Context, o client.Object) []reconcile.Request {
	var out []reconcile.Request
	decisions := &clusterv1beta1.PlacementDecisionList{}
	if err := m.client.List(ctx, decisions, client.MatchingFields{indexDecidedCluster: o.GetName()}); err == nil {
		for i := range decisions.Items {
			out = append(out, m.forPlacementDecision(ctx, &decisions.Items[i])...)
		}
	}
	rules := &appsv1.PlacementRuleList{}
	if err := m.client.List(ctx, rules, client.MatchingFields{indexDecidedCluster: o.GetName()}); err == nil {
		for i := range rules.Items {
			out = append(out, m.forPlacementRule(ctx, &rules.Items[i])...)
		}
	}
	return out
}

func (m *rootMapper) forPlacementRule(ctx context.Context, o client.Object) []reconcile.Request {
	return m.bindingsTo(ctx, o.GetNamespace(), binding.KindPlacementRule, o.GetName())
}

// setsOfRoot maps a root policy to the PolicySets that contain it.
func (m *rootMapper) setsOfRoot(ctx context.Context, o client.Object) []reconcile.Request {
	if replication.IsReplica(o) {
		return nil
	}
	list := &policyv1beta1.PolicySetList{}
	if err := m.client.List(ctx, list, client.InNamespace(o.GetNamespace()),
		client.MatchingFields{indexSetMember: o.GetName()}); err != nil {
		return nil
	}
	out := make([]reconcile.Request, 0, len(list.Items))
	for _, set := range list.Items {
		out = append(out, request(set.Namespace, set.Name))
	}
	return out
}

// setsOfBinding maps a PlacementBinding to the PolicySets it binds.
func (m *rootMapper) setsOfBinding(_ context.Context, o client.Object) []reconcile.Request {
	pb, ok := o.(*policyv1.PlacementBinding)
	if !ok {
		return nil
	}
	var out []reconcile.Request
	for s := range binding.Subjects(pb) {
		if s.Kind == binding.KindPolicySet {
			out = append(out, request(pb.Namespace, s.Name))
		}
	}
	return out
}

func request(namespace, name string) reconcile.Request {
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}}
}

// ownConnection is an HTTP client for cfg with a connection pool of its own.
// The hub's replica and root status writes go through it, not through the
// manager's client, whose one HTTP/2 connection also carries every watch of
// the hub's cache: each replica written comes back as a watch event on the
// connection the writes' answers wait on, read and decrypted by that
// connection's one reader. At 1 × 3,000 (two alternated runs each) the hub
// created in 5.9–6.2 s against 8.1–10.9 s on the shared connection and
// updated in 7.7–9.8 s against 12.4–14.3 s (docs/performance.md).
func ownConnection(cfg *rest.Config) (*http.Client, error) {
	cfg = rest.CopyConfig(cfg)
	// client-go shares one transport among configs alike; a Dial of its own
	// makes this config's transport its own.
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return rest.HTTPClientFor(cfg)
}
