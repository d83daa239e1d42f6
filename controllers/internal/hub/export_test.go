package hub

import "github.com/prometheus/client_golang/prometheus/testutil"

// ReplicaWritesTotal is the number of replica writes the hub has issued, for
// tests that prove the hub settles.
func ReplicaWritesTotal() float64 {
	return testutil.ToFloat64(replicaWrites.WithLabelValues("create")) +
		testutil.ToFloat64(replicaWrites.WithLabelValues("update")) +
		testutil.ToFloat64(replicaWrites.WithLabelValues("delete"))
}

// HubTemplateResolutionsTotal is the number of replicas whose hub templates
// were resolved (successfully or not), for tests that prove only the affected
// replicas are resolved again.
func HubTemplateResolutionsTotal() float64 {
	return testutil.ToFloat64(hubTemplateResolutions.WithLabelValues("success")) +
		testutil.ToFloat64(hubTemplateResolutions.WithLabelValues("error"))
}

// StatusOnlyReconcilesTotal is the number of root reconciles that kept to the
// root's status, for tests that prove when the hub takes that path.
func StatusOnlyReconcilesTotal() float64 { return testutil.ToFloat64(statusOnlyReconciles) }
