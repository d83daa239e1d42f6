package spoke

import (
	"context"
	"errors"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/cluster"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/operatorpolicy"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	policyv1beta1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1beta1"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// Options tune the spoke controllers.
type Options struct {
	// TemplateLimits bound the managed-cluster templates of one evaluation of
	// a ConfigurationPolicy or OperatorPolicy (unset bounds: the defaults).
	TemplateLimits templates.Limits
	// ClusterName is the managed cluster's name: its namespace on the hub holds
	// its replicated policies, and the same namespace on the managed cluster
	// holds their copies and templates.
	ClusterName string
	// Concurrency is how many policies (and, separately, ConfigurationPolicies)
	// are reconciled at once.
	Concurrency int
	// HubStatusDelay is how long changes to a policy's status are gathered
	// before the hub replica's status is written.
	HubStatusDelay time.Duration
	// OperatorPolicyDefaultNamespace is where an OperatorPolicy's operator is
	// installed when neither the policy nor the cluster's PackageManifest says
	// (OCM's --operator-policy-default-namespace); empty for none.
	OperatorPolicyDefaultNamespace string
	// ConfigurationPolicyEvaluator and OperatorPolicyEvaluator say who
	// evaluates the templates of each kind: the spoke (EvaluatorFleetpolicy)
	// or OCM's config-policy-controller (EvaluatorOCM).
	ConfigurationPolicyEvaluator, OperatorPolicyEvaluator Evaluator
	// Clock is the time of compliance events, of status lastEvaluated and
	// condition times, and of the OperatorPolicy controller (nil: the real
	// clock).
	Clock clock.PassiveClock
}

// DefaultOptions are the defaults of the spoke binary's flags (ClusterName has
// none).
func DefaultOptions() Options {
	return Options{
		Concurrency: 8, HubStatusDelay: 200 * time.Millisecond,
		ConfigurationPolicyEvaluator: EvaluatorFleetpolicy, OperatorPolicyEvaluator: EvaluatorFleetpolicy,
		TemplateLimits: templates.Limits{TimeoutSetting: "--template-timeout", MemorySetting: "--template-memory"}.OrDefault(),
	}
}

// ManagerOptions configure the spoke's controller manager.
type ManagerOptions struct {
	Options
	// MetricsAddr and ProbeAddr are where metrics and probes bind ("0" disables).
	MetricsAddr, ProbeAddr string
	// LeaderElect makes only the elected one of several spoke processes act; the
	// lease lives on the managed cluster.
	LeaderElect bool
	// LeaderElectionNamespace holds the lease (default: the in-cluster namespace).
	LeaderElectionNamespace string
	// QPS and Burst are the client-side limits towards the managed
	// cluster's API server, HubQPS and HubBurst towards the hub's.
	QPS, HubQPS     float32
	Burst, HubBurst int
}

// DefaultHubQPS and DefaultHubBurst are the spoke's default client-side
// limits towards the hub's API server.
const (
	DefaultHubQPS   = 20
	DefaultHubBurst = 40
)

// DefaultManagerOptions are the spoke binary's defaults. Its addresses differ
// from the hub binary's (metrics :8443, probes :8081), so that the README's
// commands run a hub and a spoke side by side on one machine; the Deployment
// (manifests/spoke) sets its own.
func DefaultManagerOptions() ManagerOptions {
	return ManagerOptions{
		Options:     DefaultOptions(),
		MetricsAddr: ":8080",
		ProbeAddr:   ":8082",
		QPS:         200,
		Burst:       400,
		// The hub's API server serves every spoke of the fleet: see the
		// README ("The spoke's requests to the hub").
		HubQPS:   DefaultHubQPS,
		HubBurst: DefaultHubBurst,
	}
}

// NewManager builds the spoke's manager on the managed cluster (managedCfg) with
// the hub (hubCfg) as a second cluster whose cache holds only the cluster's
// namespace, and registers every spoke controller. The caller starts it.
func NewManager(ctx context.Context, hubCfg, managedCfg *rest.Config, o ManagerOptions) (ctrl.Manager, error) {
	if o.ClusterName == "" {
		return nil, errors.New("spoke: the cluster name is required")
	}
	if err := o.validateEvaluators(); err != nil {
		return nil, err
	}
	managedCfg = limited(managedCfg, o.QPS, o.Burst)
	hubCfg = limited(hubCfg, o.HubQPS, o.HubBurst)
	s := scheme.New()
	inClusterNamespace := cache.ByObject{Namespaces: map[string]cache.Config{o.ClusterName: {}}}
	// Of the Secrets, both caches hold only the encryption key of the cluster
	// namespace (the spoke may read no other).
	encryptionKeyOnly := cache.ByObject{
		Namespaces: map[string]cache.Config{o.ClusterName: {}},
		Field:      fields.OneTermEqualSelector("metadata.name", templates.EncryptionKeySecret),
	}
	mgr, err := ctrl.NewManager(managedCfg, ctrl.Options{
		Scheme:                  s,
		Logger:                  logging.Bounded(ctrl.Log),
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "fleetpolicy-spoke.fleetpolicy.io",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		// Several spokes may run in one process (tests, benchmarks).
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		// Templates and dependencies are read as unstructured objects: from the
		// informers their watches start, not from the API server. (The
		// ConfigurationPolicy controller reads the objects it checks with the
		// API reader.)
		Client: client.Options{Cache: &client.CacheOptions{Unstructured: true}},
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			// The policy kinds and the compliance events are read in the
			// cluster's namespace only; other kinds (namespaces, CRDs, custom
			// template and dependency kinds) cluster-wide.
			ByObject: map[client.Object]cache.ByObject{
				&policyv1.Policy{}:              inClusterNamespace,
				&policyv1.ConfigurationPolicy{}: inClusterNamespace,
				&policyv1beta1.OperatorPolicy{}: inClusterNamespace,
				&corev1.Event{}:                 inClusterNamespace,
				&corev1.Secret{}:                encryptionKeyOnly,
			},
		},
	})
	if err != nil {
		return nil, err
	}
	hub, err := cluster.New(hubCfg, func(co *cluster.Options) {
		co.Scheme = s
		co.Logger = logging.Bounded(ctrl.Log.WithName("hub-cluster"))
		co.Cache = cache.Options{
			DefaultNamespaces: map[string]cache.Config{o.ClusterName: {}},
			DefaultTransform:  cache.TransformStripManagedFields(),
			ByObject:          map[client.Object]cache.ByObject{&corev1.Secret{}: encryptionKeyOnly},
		}
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(hub); err != nil {
		return nil, err
	}
	if err := Setup(ctx, mgr, hub, o.Options); err != nil {
		return nil, err
	}
	// OperatorPolicy templates are evaluated on the managed cluster too, by
	// the spoke or by OCM's config-policy-controller.
	if o.OperatorPolicyEvaluator == EvaluatorOCM {
		if err := mgr.Add(releasingOperatorPolicyFinalizers(mgr, ctrl.Log.WithName("spoke"))); err != nil {
			return nil, err
		}
	} else if err := setupOperatorPolicies(mgr, operatorpolicy.Options{Concurrency: o.Concurrency, DefaultNamespace: o.OperatorPolicyDefaultNamespace, Clock: o.Clock, TemplateLimits: o.TemplateLimits}); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	return mgr, nil
}

// olmPoll is how often a spoke on a cluster without OLM asks whether OLM is
// installed now.
const olmPoll = 30 * time.Second

// setupOperatorPolicies registers the OperatorPolicy controller when the
// managed cluster serves OLM's API, and otherwise once it does (asked every
// olmPoll): on a cluster without OLM, as on a cluster where OCM's
// config-policy-controller runs without --enable-operator-policy, no
// OperatorPolicy is evaluated, and the rest of the spoke runs.
func setupOperatorPolicies(mgr ctrl.Manager, opts operatorpolicy.Options) error {
	if err := operatorpolicy.SetupIndexes(mgr); err != nil {
		return err
	}
	served, err := operatorpolicy.ServesOLM(mgr.GetConfig())
	if err != nil {
		return err
	}
	if served {
		return operatorpolicy.SetupController(mgr, opts)
	}
	logger := ctrl.Log.WithName("spoke")
	logger.Info("OLM's API is not served on this cluster: OperatorPolicies are evaluated once it is")
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		tick := time.NewTicker(olmPoll)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick.C:
			}
			if served, err := operatorpolicy.ServesOLM(mgr.GetConfig()); err != nil {
				logger.Error(err, "asking whether OLM is installed")
			} else if served {
				logger.Info("OLM's API is served now: evaluating OperatorPolicies")
				return operatorpolicy.SetupController(mgr, opts)
			}
		}
	}))
}

func limited(cfg *rest.Config, qps float32, burst int) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = qps, burst
	cfg.UserAgent = "fleetpolicy-spoke"
	return cfg
}
