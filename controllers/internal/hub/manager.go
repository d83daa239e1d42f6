package hub

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"

	openreportsv1alpha1 "github.com/openreports/reports-api/apis/openreports.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/fleetpolicy/fleetpolicy/controllers/internal/logging"
	"github.com/fleetpolicy/fleetpolicy/controllers/internal/scheme"
	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
	"github.com/fleetpolicy/fleetpolicy/shared/placement"
	"github.com/fleetpolicy/fleetpolicy/shared/templates"
)

// ManagerOptions configure the hub's controller manager.
type ManagerOptions struct {
	Options
	// MetricsAddr and ProbeAddr are where metrics and probes bind ("0" disables).
	MetricsAddr, ProbeAddr string
	// MetricsSecure serves metrics over HTTPS to callers that authenticate
	// with a bearer token and may GET the non-resource URL /metrics
	// (TokenReview and SubjectAccessReview,
	// withAuthenticationAndAuthorization); false serves plain HTTP to anyone,
	// for local use only.
	MetricsSecure bool
	// MetricsCertDir holds tls.crt and tls.key for the metrics server; empty:
	// a self-signed certificate generated at startup.
	MetricsCertDir string
	// PprofAddr is where Go's /debug/pprof handlers bind (controller-runtime's
	// PprofBindAddress): "" or "0" serves none, the default; the hub binary
	// takes only a loopback address (for benchmarks and diagnosis).
	PprofAddr string
	// LeaderElect makes only the elected one of several hub processes act.
	LeaderElect bool
	// LeaderElectionNamespace holds the lease (default: the in-cluster namespace).
	LeaderElectionNamespace string
	// LeaseDuration, RenewDeadline and RetryPeriod tune leader election (nil:
	// controller-runtime's defaults of 15s, 10s and 2s).
	LeaseDuration, RenewDeadline, RetryPeriod *time.Duration
	// QPS and Burst are the client-side limits towards the hub API server.
	QPS   float32
	Burst int
	// SkipControllerNameValidation lets one process build the hub's manager more
	// than once (tests that stop and restart the hub).
	SkipControllerNameValidation bool
	// Webhook serves the placement admission webhook and explain endpoint (TLS
	// only): the address and the folder holding tls.crt and tls.key.
	WebhookHost    string
	WebhookPort    int
	WebhookCertDir string
	// ExplainAddr is where /explain binds (TLS, the webhook's certificate):
	// "" serves it on the webhook server, "0" not at all, any other host:port
	// on a server of its own, apart from the admission webhook. Either way it
	// requires authentication and authorization (see serveExplain).
	ExplainAddr string
}

// DefaultManagerOptions are the hub binary's defaults.
func DefaultManagerOptions() ManagerOptions {
	return ManagerOptions{
		Options:       DefaultOptions(),
		MetricsAddr:   ":8443",
		MetricsSecure: true,
		ProbeAddr:     ":8081",
		WebhookPort:   9443,
		QPS:           1000,
		Burst:         3000,
	}
}

// NewManager builds the hub's manager with every hub controller, probe and index
// registered. The caller starts it.
func NewManager(ctx context.Context, cfg *rest.Config, o ManagerOptions) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "fleetpolicy-hub"
	addons, err := servesAddons(cfg)
	if err != nil {
		return nil, err
	}
	if o.OpenReports {
		served, err := servesReports(cfg)
		if err != nil {
			return nil, err
		}
		if !served {
			ctrl.Log.WithName("fleetpolicy-hub").Info("--openreports: the OpenReports API (openreports.io/v1alpha1 reports) is not served: no Report is written (install its CRD and restart the hub)")
		}
		o.OpenReports = served
	}
	var webhookServer, explainServer webhook.Server
	if o.Placement {
		webhookServer = webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.WebhookCertDir})
		switch o.ExplainAddr {
		case "":
			explainServer = webhookServer
		case "0":
		default:
			host, port, err := net.SplitHostPort(o.ExplainAddr)
			if err != nil {
				return nil, fmt.Errorf("explain address %q: %w", o.ExplainAddr, err)
			}
			portNumber, err := strconv.Atoi(port)
			if err != nil {
				return nil, fmt.Errorf("explain address %q: %w", o.ExplainAddr, err)
			}
			explainServer = webhook.NewServer(webhook.Options{Host: host, Port: portNumber, CertDir: o.WebhookCertDir})
		}
	}
	metrics := metricsserver.Options{BindAddress: o.MetricsAddr}
	if o.MetricsSecure {
		metrics.SecureServing, metrics.CertDir = true, o.MetricsCertDir
		metrics.FilterProvider = withAuthenticationAndAuthorization
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.New(),
		Logger:                  logging.Bounded(ctrl.Log),
		Metrics:                 metrics,
		HealthProbeBindAddress:  o.ProbeAddr,
		PprofBindAddress:        o.PprofAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "fleetpolicy-hub.fleetpolicy.io",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseDuration:           o.LeaseDuration,
		RenewDeadline:           o.RenewDeadline,
		RetryPeriod:             o.RetryPeriod,
		// A hub that loses its lease stops at once, so two never act together.
		LeaderElectionReleaseOnCancel: true,
		Controller:                    config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
		WebhookServer:                 webhookServer,
		Cache:                         cacheOptions(addons, o.OpenReports),
	})
	if err != nil {
		return nil, err
	}
	if explainServer != nil && explainServer != webhookServer {
		if err := mgr.Add(explainServer); err != nil {
			return nil, err
		}
	}
	starts := &controllerStarts{}
	engine, err := setup(ctx, mgr, o.Options, explainServer, starts, addons)
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	// Ready when the hub can act: every controller has synced its caches and
	// started (see controllerStarts). Not under leader election, where every
	// process serves the webhook and a new leader must stay ready for it.
	if !o.LeaderElect {
		if err := mgr.AddReadyzCheck("controllers", starts.Check); err != nil {
			return nil, err
		}
	}
	if engine != nil {
		if err := mgr.AddReadyzCheck("placement-engine", engine.Checker); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}

// cacheOptions are what the hub's informer cache holds: managed fields are
// never read, and replicas are cached as digests, both to keep the cache
// small (see slimPolicies).
func cacheOptions(addons, reports bool) cache.Options {
	o := cache.Options{
		DefaultTransform: cache.TransformStripManagedFields(),
		ByObject: map[client.Object]cache.ByObject{
			&policyv1.Policy{}: {Transform: slimPolicies},
			// Only placement policies are read: do not cache the hub's ConfigMaps.
			&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{placement.Namespace: {}}},
			// Only the clusters' policy-encryption-key Secrets are read
			// through the cache (hub templates read theirs themselves).
			&corev1.Secret{}: {Field: fields.OneTermEqualSelector("metadata.name", templates.EncryptionKeySecret)},
		},
	}
	if reports {
		// Only the hub's own Reports are read (ReportWriter).
		o.ByObject[&openreportsv1alpha1.Report{}] = reportsCache()
	}
	if addons {
		// Only fleetpolicy's own add-on is read (AddonPermissions).
		o.ByObject[&addonv1alpha1.ManagedClusterAddOn{}] = cache.ByObject{Field: fields.OneTermEqualSelector("metadata.name", AddonName)}
	}
	return o
}
