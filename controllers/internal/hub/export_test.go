package hub

import "github.com/prometheus/client_golang/prometheus/testutil"

// ReplicaWritesTotal is the number of replica writes the hub has issued, for
// tests that prove the hub settles.
func ReplicaWritesTotal() float64 {
	return testutil.ToFloat64(replicaWrites.WithLabelValues("create")) +
		testutil.ToFloat64(replicaWrites.WithLabelValues("update")) +
		testutil.ToFloat64(replicaWrites.WithLabelValues("delete"))
}
