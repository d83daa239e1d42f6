package hub

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/rest"
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
)

// ManagerOptions configure the hub's controller manager.
type ManagerOptions struct {
	Options
	// MetricsAddr and ProbeAddr are where metrics and probes bind ("0" disables).
	MetricsAddr, ProbeAddr string
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
}

// DefaultManagerOptions are the hub binary's defaults.
func DefaultManagerOptions() ManagerOptions {
	return ManagerOptions{
		Options:     DefaultOptions(),
		MetricsAddr: ":8080",
		ProbeAddr:   ":8081",
		WebhookPort: 9443,
		QPS:         1000,
		Burst:       3000,
	}
}

// NewManager builds the hub's manager with every hub controller, probe and index
// registered. The caller starts it.
func NewManager(ctx context.Context, cfg *rest.Config, o ManagerOptions) (ctrl.Manager, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = o.QPS, o.Burst
	cfg.UserAgent = "fleetpolicy-hub"
	var webhookServer webhook.Server
	if o.Placement {
		webhookServer = webhook.NewServer(webhook.Options{Host: o.WebhookHost, Port: o.WebhookPort, CertDir: o.WebhookCertDir})
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  scheme.New(),
		Logger:                  logging.Bounded(ctrl.Log),
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.ProbeAddr,
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        "fleetpolicy-hub.fleetpolicy.io",
		LeaderElectionNamespace: o.LeaderElectionNamespace,
		LeaseDuration:           o.LeaseDuration,
		RenewDeadline:           o.RenewDeadline,
		RetryPeriod:             o.RetryPeriod,
		// A hub that loses its lease stops at once, so two never act together.
		LeaderElectionReleaseOnCancel: true,
		// Managed fields are never read, and replicas are cached as digests:
		// both keep the cache small (see slimPolicies).
		Controller:    config.Controller{SkipNameValidation: &o.SkipControllerNameValidation},
		WebhookServer: webhookServer,
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&policyv1.Policy{}: {Transform: slimPolicies},
				// Only placement policies are read: do not cache the hub's ConfigMaps.
				&corev1.ConfigMap{}: {Namespaces: map[string]cache.Config{placement.Namespace: {}}},
			},
		},
	})
	if err != nil {
		return nil, err
	}
	engine, err := setup(ctx, mgr, o.Options)
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, err
	}
	if engine != nil {
		if err := mgr.AddReadyzCheck("placement-engine", engine.Checker); err != nil {
			return nil, err
		}
	}
	return mgr, nil
}
