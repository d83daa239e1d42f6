package governancemetrics

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	policyv1 "github.com/fleetpolicy/fleetpolicy/shared/api/policy/v1"
)

// Name is the gauge's name, OCM's.
const Name = "cluster_policy_governance_info"

var status = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: Name,
	Help: "The compliance status of the named managed cluster policy. 0 == Compliant. 1 == NonCompliant. -1 == Unknown/Pending",
}, []string{"kind", "policy", "policy_namespace", "severity"})

func init() { metrics.Registry.MustRegister(status) }

// Report sets the series of a policy: its compliance, under its severity
// (a policy whose severity changed loses its series of the old one).
func Report(kind, namespace, name string, severity policyv1.Severity, state policyv1.ComplianceState) {
	Forget(kind, namespace, name)
	status.WithLabelValues(kind, name, namespace, string(severity)).Set(Value(state))
}

// Forget removes the series of a policy that is gone.
func Forget(kind, namespace, name string) {
	status.DeletePartialMatch(prometheus.Labels{"kind": kind, "policy": name, "policy_namespace": namespace})
}

// Value is the gauge's value for a compliance state.
func Value(state policyv1.ComplianceState) float64 {
	switch state {
	case policyv1.Compliant:
		return 0
	case policyv1.NonCompliant:
		return 1
	}
	return -1
}
