package hub

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Prometheus metrics of the hub, served on the manager's metrics endpoint next to
// controller-runtime's own (reconcile totals and durations per controller,
// workqueue depth, client request latencies).
var (
	reconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetpolicy_hub_root_reconcile_total",
		Help: "Root policy reconciles by outcome (success, error, invalid).",
	}, []string{"outcome"})
	statusOnlyReconciles = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "fleetpolicy_hub_root_status_only_reconciles_total",
		Help: "Root policy reconciles that only replica compliance reports brought back, which kept to the root's status (no replica plan).",
	})
	replicaWrites = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetpolicy_hub_replica_writes_total",
		Help: "Replica writes the API server accepted, by verb (create, update, delete; rolloutStatus: a patch of the replica's status.rolloutStatus).",
	}, []string{"verb"})
	propagationSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "fleetpolicy_hub_propagation_seconds",
		Help:    "Time from the start of a root reconcile that wrote replicas until its writes finished.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 14),
	})
	hubTemplateResolutions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "fleetpolicy_hub_template_resolutions_total",
		Help: "Replicas whose hub templates were resolved (not taken from the last resolution), by outcome (success, error).",
	}, []string{"outcome"})
	replicasPerPolicy = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "fleetpolicy_hub_replicas",
		Help: "Clusters each root policy is bound to (its desired replicas).",
	}, []string{"namespace", "policy"})
)

func init() {
	metrics.Registry.MustRegister(reconcileTotal, statusOnlyReconciles, replicaWrites, propagationSeconds, replicasPerPolicy, hubTemplateResolutions)
}
